/**
 * Where a one-shot build puts the bytes of the objects it makes, so they need not stay in memory
 * until the snapshot is stored (a 10k-service build makes ~140 MB of them). The CLI gives a file
 * (src/snapshot/store/file-spool.ts); without a spool the bytes stay in memory, as in the Worker,
 * the Lambda and the API. The built snapshot still shows its objects as a map
 * (BuiltSnapshot.objects), reading each one back from the spool when asked.
 */
import { DIGEST_PREFIX, hexValue } from '../digest.js';

/**
 * Append-only bytes: `append` returns a handle (a small non-negative integer) by which `read` gives the same bytes back.
 * `append` copies the bytes (or writes them out) before it returns: a caller may hand it a view of a buffer it reuses
 * (the stored inputs' writer and the one-shot build's encoder do).
 */
export interface ObjectSpool {
  /** `group`: a hint, bytes that will be read back together (`readGroup`); default 0. */
  append(bytes: Uint8Array, group?: number): number;
  read(handle: number): Uint8Array;
  byteLength(handle: number): number;
  /**
   * Optional: a reader that reads the whole of `group` at once, then gives any handle's bytes
   * (views, valid until the next `readGroup`); for reading many objects in group order.
   */
  readGroup?(group: number): (handle: number) => Uint8Array;
}

/** Objects (digest → bytes) that can tell an object's size without reading its bytes (a spool must read them). */
export interface SizedObjects extends ReadonlyMap<string, Uint8Array> {
  /** The size of an object's bytes (undefined: not held). */
  byteLengthOf(digest: string): number | undefined;
}

/** The size of an object of `objects` (undefined: not held), without reading its bytes when the map can tell it. */
export function byteLengthIn(objects: ReadonlyMap<string, Uint8Array>, digest: string): number | undefined {
  return 'byteLengthOf' in objects ? (objects as SizedObjects).byteLengthOf(digest) : objects.get(digest)?.byteLength;
}

/** Spool groups by digest: its first 6 bits, so that a walk in digest order visits each group once, in order. */
export const SPOOL_GROUPS = 64;

/** The spool group of a digest (`sha256:` and lowercase hex; 0 for anything else). */
export function spoolGroupOf(digest: string): number {
  const hi = hexValue(digest.charCodeAt(DIGEST_PREFIX.length));
  const lo = hexValue(digest.charCodeAt(DIGEST_PREFIX.length + 1));
  return digest.startsWith(DIGEST_PREFIX) && hi >= 0 && lo >= 0 ? (hi << 2) | (lo >> 2) : 0;
}

/**
 * Appends the bytes of the object `digest` to its digest's group: every object goes where a walk
 * in digest order (SpooledObjects.inDigestOrder, a checkpoint pack) reads it with its neighbours.
 */
export function appendObject(spool: ObjectSpool, digest: string, bytes: Uint8Array): number {
  return spool.append(bytes, spoolGroupOf(digest));
}

/**
 * A snapshot's objects (digest → bytes, in the order given) held by a spool: a read-only map whose
 * `get` and iteration read the bytes back, one object at a time.
 */
export class SpooledObjects implements SizedObjects {
  constructor(
    private readonly spool: ObjectSpool,
    private readonly handles: ReadonlyMap<string, number>,
  ) {}

  get size(): number {
    return this.handles.size;
  }

  has(digest: string): boolean {
    return this.handles.has(digest);
  }

  get(digest: string): Uint8Array | undefined {
    const handle = this.handles.get(digest);
    return handle === undefined ? undefined : this.spool.read(handle);
  }

  /**
   * A reader for lookups in digest order (a pack's), which reads each spool group at once
   * (ObjectSpool.readGroup) instead of one object at a time. Its bytes are views valid until its
   * next call: copy or write each before reading the next. Any order is correct, digest order is fast.
   */
  inDigestOrder(): (digest: string, handle?: number) => Uint8Array | undefined {
    const { spool } = this;
    const readGroup = spool.readGroup?.bind(spool);
    if (!readGroup) return (digest, handle) => (handle === undefined ? this.get(digest) : spool.read(handle));
    let loaded: { readonly group: number; readonly read: (handle: number) => Uint8Array } | undefined;
    /** `handle`: the digest's (handleEntries), if known. */
    return (digest, handle = this.handles.get(digest)) => {
      if (handle === undefined) return undefined;
      const group = spoolGroupOf(digest);
      if (loaded?.group !== group) loaded = { group, read: readGroup(group) };
      return loaded.read(handle);
    };
  }

  /** Each object's digest and spool handle (for `byteLengthAt` and an `inDigestOrder` reader): no bytes read. */
  handleEntries(): MapIterator<[string, number]> {
    return this.handles.entries();
  }

  byteLengthAt(handle: number): number {
    return this.spool.byteLength(handle);
  }

  /** The size of an object's bytes, without reading them (undefined: not held). */
  byteLengthOf(digest: string): number | undefined {
    const handle = this.handles.get(digest);
    return handle === undefined ? undefined : this.spool.byteLength(handle);
  }

  keys(): MapIterator<string> {
    return this.handles.keys();
  }

  *values(): MapIterator<Uint8Array> {
    for (const handle of this.handles.values()) yield this.spool.read(handle);
  }

  *entries(): MapIterator<[string, Uint8Array]> {
    for (const [digest, handle] of this.handles) yield [digest, this.spool.read(handle)];
  }

  [Symbol.iterator](): MapIterator<[string, Uint8Array]> {
    return this.entries();
  }

  forEach(fn: (bytes: Uint8Array, digest: string, map: ReadonlyMap<string, Uint8Array>) => void, self?: unknown): void {
    for (const [digest, bytes] of this) fn.call(self, bytes, digest, this);
  }
}

/** Whether `objects` reads its bytes from a spool (a writer then streams them rather than gather them all). */
export const isSpooled = (objects: ReadonlyMap<string, Uint8Array>): objects is SpooledObjects =>
  objects instanceof SpooledObjects;
