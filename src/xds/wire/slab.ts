/**
 * Copies of many small byte arrays that live and die together (a one-shot snapshot build's objects
 * and documents, a full build's stored inputs until they are packed), carved out of large shared
 * buffers instead of one buffer each: an ArrayBuffer of its own per object costs an allocation,
 * external-memory bookkeeping and GC work that, for ~120k objects of a few KB, outweighs writing
 * the bytes. A view pins its whole slab, so a caller that keeps only some of the copies for long (a
 * watcher's cache) must not use one.
 */
import type { ByteWriter } from '../../canonical-json.js';

/** Node's Buffer, looked up (not imported): this module also runs where there is none. */
const NodeBuffer = (
  globalThis as {
    Buffer?: {
      allocUnsafe(size: number): Uint8Array;
      allocUnsafeSlow(size: number): Uint8Array;
      from(buffer: ArrayBufferLike, byteOffset: number, length: number): Uint8Array;
    };
  }
).Buffer;

export const SLAB_BYTES = 1 << 20;
/** Copies at least this large get a buffer of their own: a slab would waste too much of its tail. */
const OWN_FROM = SLAB_BYTES >>> 4;
/** Room a slab must have left to be written into by `write`; else the next slab starts. */
const MIN_ROOM = SLAB_BYTES >>> 3;

const utf8 = new TextEncoder();

export class ByteSlab {
  private slab: Uint8Array = new Uint8Array(0);
  private pos = 0;

  /**
   * A copy of `bytes[start, end)`: a view of a slab (a Node Buffer where there is one, as
   * protobufjs and the wire writer hand out; a plain Uint8Array elsewhere).
   */
  copy(bytes: Uint8Array, start = 0, end = bytes.length): Uint8Array {
    const n = end - start;
    if (n >= OWN_FROM) {
      const own = NodeBuffer ? NodeBuffer.allocUnsafe(n) : new Uint8Array(n);
      own.set(bytes.subarray(start, end));
      return own;
    }
    const at = this.room(n);
    this.slab.set(bytes.subarray(start, end), at);
    return this.view(at, n);
  }

  /** The UTF-8 bytes of `text`, as `copy` gives them. */
  utf8(text: string): Uint8Array {
    if (3 * text.length >= OWN_FROM) return this.copy(utf8.encode(text));
    const at = this.room(3 * text.length);
    const n = utf8.encodeInto(text, this.slab.subarray(at)).written;
    this.pos = at + n;
    return this.view(at, n);
  }

  /**
   * What `write` writes with `w`, written straight into the current slab (no copy); copied only
   * when it outgrows the slab (then `w` has grown a buffer of its own). `w` is given back as it
   * was; nothing is kept when `write` throws.
   */
  write(w: ByteWriter, write: () => void): Uint8Array {
    if (this.slab.length - this.pos < MIN_ROOM) this.next();
    const own = w.buf;
    const at = this.pos;
    w.buf = this.slab;
    w.pos = at;
    let buf: Uint8Array;
    let end: number;
    try {
      write();
    } finally {
      buf = w.buf;
      end = w.pos;
      w.buf = own;
      w.pos = 0;
    }
    if (buf !== this.slab) return this.copy(buf, at, end);
    this.pos = end;
    return this.view(at, end - at);
  }

  /** Where `n` bytes go (a new slab when the current one lacks room); the bytes are then taken. */
  private room(n: number): number {
    if (this.pos + n > this.slab.length) this.next();
    const at = this.pos;
    this.pos += n;
    return at;
  }

  private next(): void {
    this.slab = NodeBuffer ? NodeBuffer.allocUnsafeSlow(SLAB_BYTES) : new Uint8Array(SLAB_BYTES);
    this.pos = 0;
  }

  private view(at: number, n: number): Uint8Array {
    const { buffer, byteOffset } = this.slab;
    return NodeBuffer ? NodeBuffer.from(buffer, byteOffset + at, n) : new Uint8Array(buffer, byteOffset + at, n);
  }
}
