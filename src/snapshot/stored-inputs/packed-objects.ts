/**
 * A from-scratch build's stored objects, held compactly until they are written (the CLI publishes
 * them after the snapshot is built): every object's bytes in one buffer, in digest order, with
 * their ends in one Uint32Array and their digests as 32 raw bytes each. At 10k services that is a
 * handful of objects for 54k inputs, instead of a Map entry, a byte view and a 71-character digest
 * string per input kept alive through the whole compile. Views and digest strings are made when
 * read (a store writes the objects one by one). A ReadonlyMap, so every reader of
 * `BuiltInputs.objects` works unchanged. Pure, but for `spooledTo`, which moves the bytes to a
 * spool (the CLI's temp file: src/snapshot/build/object-spool.ts) and reads them back from it.
 */
import { appendObject, type ObjectSpool, type SizedObjects } from '../build/object-spool.js';
import { DIGEST_PREFIX, hexValue } from '../digest.js';
import { digestOrder } from '../sorted-digests.js';

const ID_BYTES = 32;
/** Longer than this, a plain Map is kept instead (offsets are Uint32). */
const MAX_PACKED_BYTES = 2 ** 31;

/** Each byte's two hex digits. */
const BYTE_HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
/** The id looked up (one lookup at a time: nothing here awaits). */
const wanted = new Uint8Array(ID_BYTES);

/** Where a spooled PackedObjects reads its objects' bytes. */
interface SpooledBytes {
  readonly spool: ObjectSpool;
  /** Each object's spool handle, in digest order. */
  readonly handles: Uint32Array;
}

export class PackedObjects implements SizedObjects {
  private constructor(
    /** The objects' bytes, one after another, in digest order (empty when spooled). */
    private readonly bytes: Uint8Array,
    /** Where each object's bytes end (each starts where the one before ends). */
    private readonly ends: Uint32Array,
    /** Each object's sha256, ID_BYTES per object, in digest order. */
    private readonly ids: Uint8Array,
    private readonly spooled?: SpooledBytes,
  ) {}

  /**
   * The objects `digests[i]` → `values[i]` (distinct digests). A plain Map, sorted by digest,
   * when a digest is not a well-formed `sha256:<hex>` or the bytes are too many for one buffer.
   * With a spool, the bytes are appended to it in digest order (as `spooledTo` would move them),
   * never packed into one buffer.
   */
  static of(
    digests: readonly string[],
    values: readonly Uint8Array[],
    spool?: ObjectSpool,
  ): ReadonlyMap<string, Uint8Array> {
    if (spool)
      return PackedObjects.ofSpooled(
        digests,
        values.map((v, i) => appendObject(spool, digests[i] as string, v)),
        spool,
      );
    const order = digestOrder(digests);
    let total = 0;
    for (const v of values) total += v.byteLength;
    const ids = packedIds(digests, order, total);
    if (!ids) {
      const out = new Map<string, Uint8Array>();
      for (const i of order) out.set(digests[i] as string, values[i] as Uint8Array);
      return out;
    }
    const bytes = new Uint8Array(total);
    const ends = new Uint32Array(order.length);
    let at = 0;
    for (let k = 0; k < order.length; k++) {
      const v = values[order[k] as number] as Uint8Array;
      bytes.set(v, at);
      at += v.byteLength;
      ends[k] = at;
    }
    return new PackedObjects(bytes, ends, ids);
  }

  /**
   * The objects `digests[i]` → the bytes of spool handle `handles[i]` (distinct digests), as `of`
   * with a spool gives them, for bytes that were spooled as they were written. A plain Map (the
   * bytes read back) where `of` gives one.
   */
  static ofSpooled(
    digests: readonly string[],
    handles: readonly number[],
    spool: ObjectSpool,
  ): ReadonlyMap<string, Uint8Array> {
    const order = digestOrder(digests);
    let total = 0;
    for (const h of handles) total += spool.byteLength(h);
    const ids = packedIds(digests, order, total);
    if (!ids) {
      const out = new Map<string, Uint8Array>();
      for (const i of order) out.set(digests[i] as string, spool.read(handles[i] as number));
      return out;
    }
    const inOrder = new Uint32Array(order.length);
    const ends = new Uint32Array(order.length);
    let at = 0;
    for (let k = 0; k < order.length; k++) {
      const handle = handles[order[k] as number] as number;
      inOrder[k] = handle;
      at += spool.byteLength(handle);
      ends[k] = at;
    }
    return new PackedObjects(new Uint8Array(0), ends, ids, { spool, handles: inOrder });
  }

  /**
   * `objects` with their bytes in `spool` instead of memory (read back one object at a time; the
   * spool must stay open while the map is read). A map that is not packed is returned as it is.
   */
  static spooledTo(objects: ReadonlyMap<string, Uint8Array>, spool: ObjectSpool): ReadonlyMap<string, Uint8Array> {
    if (!(objects instanceof PackedObjects) || objects.spooled) return objects;
    const handles = new Uint32Array(objects.size);
    for (let k = 0; k < handles.length; k++) handles[k] = appendObject(spool, objects.digestAt(k), objects.bytesAt(k));
    return new PackedObjects(new Uint8Array(0), objects.ends, objects.ids, { spool, handles });
  }

  get size(): number {
    return this.ends.length;
  }

  get(digest: string): Uint8Array | undefined {
    const k = this.indexOf(digest);
    return k < 0 ? undefined : this.bytesAt(k);
  }

  has(digest: string): boolean {
    return this.indexOf(digest) >= 0;
  }

  /** The size of an object's bytes, without reading them (undefined: not held). */
  byteLengthOf(digest: string): number | undefined {
    const k = this.indexOf(digest);
    if (k < 0) return undefined;
    if (this.spooled) return this.spooled.spool.byteLength(this.spooled.handles[k] as number);
    return (this.ends[k] as number) - (k === 0 ? 0 : (this.ends[k - 1] as number));
  }

  *keys(): MapIterator<string> {
    for (let k = 0; k < this.size; k++) yield this.digestAt(k);
  }

  *values(): MapIterator<Uint8Array> {
    for (let k = 0; k < this.size; k++) yield this.bytesAt(k);
  }

  *entries(): MapIterator<[string, Uint8Array]> {
    for (let k = 0; k < this.size; k++) yield [this.digestAt(k), this.bytesAt(k)];
  }

  [Symbol.iterator](): MapIterator<[string, Uint8Array]> {
    return this.entries();
  }

  forEach(f: (value: Uint8Array, key: string, map: ReadonlyMap<string, Uint8Array>) => void, thisArg?: unknown): void {
    for (let k = 0; k < this.size; k++) f.call(thisArg, this.bytesAt(k), this.digestAt(k), this);
  }

  private bytesAt(k: number): Uint8Array {
    if (this.spooled) return this.spooled.spool.read(this.spooled.handles[k] as number);
    return this.bytes.subarray(k === 0 ? 0 : this.ends[k - 1], this.ends[k]);
  }

  private digestAt(k: number): string {
    let hex = '';
    for (let i = k * ID_BYTES; i < (k + 1) * ID_BYTES; i++) hex += BYTE_HEX[this.ids[i] as number] as string;
    return DIGEST_PREFIX + hex;
  }

  /** The position of `digest`, or -1 (a binary search over the ids: byte order is hex order). */
  private indexOf(digest: string): number {
    if (!writeId(digest, wanted, 0)) return -1;
    const ids = this.ids;
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = mid * ID_BYTES;
      let c = 0;
      for (let i = 0; c === 0 && i < ID_BYTES; i++) c = (ids[at + i] as number) - (wanted[i] as number);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

/** The 32 bytes of a digest's hex at `ids[at…]`; false when it is not a well-formed `sha256:<hex>`. */
function writeId(digest: string, ids: Uint8Array, at: number): boolean {
  if (digest.length !== DIGEST_PREFIX.length + 2 * ID_BYTES || !digest.startsWith(DIGEST_PREFIX)) return false;
  for (let i = 0, c = DIGEST_PREFIX.length; i < ID_BYTES; i++, c += 2) {
    const hi = hexValue(digest.charCodeAt(c));
    const lo = hexValue(digest.charCodeAt(c + 1));
    if (hi < 0 || lo < 0) return false;
    ids[at + i] = (hi << 4) | lo;
  }
  return true;
}

/**
 * The ids of `digests` in `order` (ID_BYTES each), or undefined when the objects cannot be packed:
 * a digest that is not a well-formed `sha256:<hex>`, or more than MAX_PACKED_BYTES of bytes.
 */
function packedIds(digests: readonly string[], order: ArrayLike<number>, total: number): Uint8Array | undefined {
  if (total > MAX_PACKED_BYTES) return undefined;
  const ids = new Uint8Array(order.length * ID_BYTES);
  for (let k = 0; k < order.length; k++)
    if (!writeId(digests[order[k] as number] as string, ids, k * ID_BYTES)) return undefined;
  return ids;
}
