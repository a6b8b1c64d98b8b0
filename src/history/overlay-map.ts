/**
 * A read-only map kept as a shared base plus a few changes, so that "the previous map with these
 * keys changed" costs the changes, not the whole map: the publish guard's summary of a 10k-service
 * mesh is copied once per round (mesh-index.ts), and the previous copy must stay as it was.
 * Every OverlayMap made from another shares its base and copies its changes; once the changes
 * outgrow a share of the base, they are folded into a new base (amortized O(change)).
 */

/** A key the changes delete from the base. */
const GONE: unique symbol = Symbol('gone');

export class OverlayMap<K, V> implements ReadonlyMap<K, V> {
  private constructor(
    private readonly base: ReadonlyMap<K, V>,
    private readonly changes: ReadonlyMap<K, V | typeof GONE>,
    readonly size: number,
  ) {}

  /** `map` with `updates` applied: a key set to undefined is deleted. `map` is left as it was. */
  static updated<K, V>(map: ReadonlyMap<K, V>, updates: ReadonlyMap<K, V | undefined>): ReadonlyMap<K, V> {
    const from = map instanceof OverlayMap ? (map as OverlayMap<K, V>) : new OverlayMap(map, new Map(), map.size);
    const changes = new Map(from.changes);
    let size = from.size;
    for (const [k, v] of updates) {
      const had = from.has(k);
      if (v === undefined) {
        if (!had) continue;
        size--;
        if (from.base.has(k)) changes.set(k, GONE);
        else changes.delete(k);
      } else {
        if (!had) size++;
        changes.set(k, v);
      }
    }
    if (changes.size <= FOLD_AT + from.base.size / FOLD_SHARE) return new OverlayMap(from.base, changes, size);
    const folded = new Map(from.base);
    for (const [k, v] of changes) {
      if (v === GONE) folded.delete(k);
      else folded.set(k, v);
    }
    return new OverlayMap(folded, new Map(), size);
  }

  get(key: K): V | undefined {
    const changed = this.changes.get(key);
    if (changed === GONE) return undefined;
    return changed !== undefined || this.changes.has(key) ? (changed as V) : this.base.get(key);
  }

  has(key: K): boolean {
    const changed = this.changes.get(key);
    if (changed === GONE) return false;
    return changed !== undefined || this.changes.has(key) || this.base.has(key);
  }

  *entries(): MapIterator<[K, V]> {
    for (const [k, v] of this.base) if (!this.changes.has(k)) yield [k, v];
    for (const [k, v] of this.changes) if (v !== GONE) yield [k, v];
  }

  *keys(): MapIterator<K> {
    for (const [k] of this.entries()) yield k;
  }

  *values(): MapIterator<V> {
    for (const [, v] of this.entries()) yield v;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
  }
}

/** Changes are folded into a new base beyond FOLD_AT plus 1/FOLD_SHARE of the base's size. */
const FOLD_AT = 32;
const FOLD_SHARE = 64;
