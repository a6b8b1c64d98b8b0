/**
 * Reference counts of the objects a snapshot holds: per type, the distinct resource digests; per
 * object, how many resources hold it; per part of a composite object (composite.ts), how many
 * composites hold it. An object is stored while something holds it.
 */
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import type { EncodedResource } from '../encoder.js';
import { appendObject, SpooledObjects, type ObjectSpool } from './object-spool.js';
import type { ObjectTarget } from './spooling-objects.js';
import { digestOrder } from '../sorted-digests.js';

/**
 * An object held: by how many resources of each type (identical bytes may be two types'
 * resources), and a composite's part digests. Neither bytes nor the encoded resource: the
 * watcher's builder keeps one of these per object between rounds.
 */
interface Held extends Record<XdsType, number> {
  readonly parts: readonly string[] | undefined;
}

const heldCount = (o: Held): number => o.clusters + o.endpoints + o.listeners + o.routes;

export class ObjectRefs {
  /** Per type, how many distinct objects resources of that type hold. */
  private readonly distinct: Record<XdsType, number> = { clusters: 0, endpoints: 0, listeners: 0, routes: 0 };
  private readonly objects = new Map<string, Held>();
  /** Parts of the composite objects in `objects`: digest → how many composites hold it. */
  private readonly parts = new Map<string, number>();

  /**
   * One more resource holds `encoded`; what it brings new to the snapshot (it and its parts) goes to
   * `added`, when given.
   */
  hold(type: XdsType, encoded: EncodedResource, added?: ObjectTarget): void {
    if (!this.count(type, encoded.digest, encoded)) return;
    added?.set(encoded.digest, encoded.bytes);
    for (const part of encoded.parts ?? []) {
      const n = this.parts.get(part.digest);
      this.parts.set(part.digest, (n ?? 0) + 1);
      if (n === undefined) added?.set(part.digest, part.bytes);
    }
  }

  /** One resource less holds the object `digest`. */
  release(type: XdsType, digest: string): void {
    this.count(type, digest, undefined);
  }

  /** Distinct resources per type, and distinct objects (parts aside). */
  sizes(): Record<XdsType, number> & { readonly objects: number } {
    return { ...this.distinct, objects: this.objects.size };
  }

  /**
   * True when the object is new. `encoded` undefined: a release. A resource's name is part of its
   * bytes (every xDS type encodes it), so distinct (name, digest) pairs of a type are its distinct digests.
   */
  private count(type: XdsType, digest: string, encoded: EncodedResource | undefined): boolean {
    const o = this.objects.get(digest);
    if (encoded) {
      if (o) {
        if (o[type]++ === 0) this.distinct[type]++;
        return false;
      }
      const parts = encoded.parts?.map((p) => p.digest);
      const held: Held = { clusters: 0, endpoints: 0, listeners: 0, routes: 0, parts };
      held[type] = 1;
      this.objects.set(digest, held);
      this.distinct[type]++;
      return true;
    }
    if (!o || o[type] === 0) return false; // not held by a resource of this type
    if (--o[type] === 0) this.distinct[type]--;
    if (heldCount(o) === 0) {
      this.objects.delete(digest);
      for (const part of o.parts ?? []) {
        const n = this.parts.get(part);
        if (n === 1) this.parts.delete(part);
        else if (n !== undefined) this.parts.set(part, n - 1);
      }
    }
    return false;
  }
}

type ObjectSizes = Record<XdsType, number> & { readonly objects: number };

const TYPE_BIT: Readonly<Record<XdsType, number>> = { clusters: 1, endpoints: 2, listeners: 4, routes: 8 };

/**
 * What `ObjectRefs` tells a build that only adds (the one-shot build): the objects and their parts,
 * distinct per type. Holding is appending to three columns (digest, bytes or spool handle, the
 * holding type; a part: none): no map and no counter object per object. Repeats are merged once at
 * the end, where the one sort by digest brings them side by side.
 *
 * Given a spool (object-spool.ts), each object's bytes go there when held (so `hold` may be given
 * bytes the caller reuses afterwards) and the set keeps only where: the objects it lists read their
 * bytes back from the spool. An object held twice is spooled twice, and listed once: repeats are
 * rare (99 of 126k objects at 10k services), so finding them costs more than their bytes.
 */
export class ObjectSet {
  private readonly digests: string[] = [];
  /** Without a spool: each hold's bytes. */
  private readonly bytes: Uint8Array[] = [];
  /** With a spool: each hold's handle. */
  private readonly handles: number[] = [];
  private readonly types: number[] = [];
  private merged: { readonly objects: ReadonlyMap<string, Uint8Array>; readonly sizes: ObjectSizes } | undefined;

  constructor(private readonly spool?: ObjectSpool) {}

  /** A resource of `type` holds `encoded` (and the composite's parts, if any); returns the hold, for `holdAgain`. */
  hold(type: XdsType, encoded: EncodedResource): number {
    this.merged = undefined;
    const at = this.digests.length;
    this.push(encoded.digest, encoded.bytes, TYPE_BIT[type]);
    for (const part of encoded.parts ?? []) this.push(part.digest, part.bytes, 0);
    return at;
  }

  /** A resource of `type` holds the object of an earlier hold again (the same message): nothing copied or spooled. */
  holdAgain(type: XdsType, hold: number): void {
    this.merged = undefined;
    this.digests.push(this.digests[hold] as string);
    this.types.push(TYPE_BIT[type]);
    if (this.spool) this.handles.push(this.handles[hold] as number);
    else this.bytes.push(this.bytes[hold] as Uint8Array);
  }

  /** Every object held, and every part of them, sorted by digest (read from the spool, if any). */
  sortedAll(): ReadonlyMap<string, Uint8Array> {
    return this.merge().objects;
  }

  /** Distinct resources per type, and distinct objects (parts aside). */
  sizes(): ObjectSizes {
    return this.merge().sizes;
  }

  private push(digest: string, bytes: Uint8Array, types: number): void {
    this.digests.push(digest);
    this.types.push(types);
    if (this.spool) this.handles.push(appendObject(this.spool, digest, bytes));
    else this.bytes.push(bytes);
  }

  private merge(): NonNullable<ObjectSet['merged']> {
    if (this.merged) return this.merged;
    const sizes = { clusters: 0, endpoints: 0, listeners: 0, routes: 0, objects: 0 };
    const { digests, types, spool } = this;
    // Digest → its first hold's bytes, or its first hold's spool handle.
    const bytes = spool ? undefined : new Map<string, Uint8Array>();
    const handles = spool ? new Map<string, number>() : undefined;
    const order = digestOrder(digests);
    for (let i = 0; i < order.length;) {
      const first = order[i] as number;
      const digest = digests[first] as string;
      let held = 0;
      for (; i < order.length && digests[order[i] as number] === digest; i++)
        held |= types[order[i] as number] as number;
      if (bytes) bytes.set(digest, this.bytes[first] as Uint8Array);
      else handles?.set(digest, this.handles[first] as number);
      if (held === 0) continue; // only a part
      sizes.objects++;
      for (const type of XDS_TYPES) if (held & TYPE_BIT[type]) sizes[type]++;
    }
    const objects = spool
      ? new SpooledObjects(spool, handles as Map<string, number>)
      : (bytes as Map<string, Uint8Array>);
    return (this.merged = { objects, sizes });
  }
}
