/**
 * Many small byte strings that live and die together (a full build's stored objects, until they
 * are packed), written in shared chunks: one ArrayBuffer per chunk instead of one per string, so
 * 54k objects at 10k services cost a few dozen backing stores, not 54k (each an allocation the GC
 * tracks). A string is a view (`subarray`) of its chunk: it keeps the chunk alive, so the
 * watcher's objects, which are replaced one by one, are copied on their own. Pure.
 */
import type { ByteWriter } from '../../canonical-json.js';

const CHUNK = 1 << 20;
/** Room a chunk must have left to be written into; else the next chunk starts. */
const MIN_ROOM = CHUNK / 8;

export class ByteSlab {
  private chunk = new Uint8Array(0);
  private used = 0;

  /** A copy of `src[0, end)`. */
  copy(src: Uint8Array, end: number): Uint8Array {
    if (end > CHUNK / 8) return src.slice(0, end);
    if (this.used + end > this.chunk.length) this.next();
    const at = this.used;
    this.chunk.set(src.subarray(0, end), at);
    this.used = at + end;
    return this.chunk.subarray(at, at + end);
  }

  /**
   * What `write` writes with `w`, written straight into the current chunk (no copy); copied only
   * when it outgrows the chunk (then `w` has grown a buffer of its own). `w` is given back as it
   * was; nothing is kept when `write` throws.
   */
  write(w: ByteWriter, write: () => void): Uint8Array {
    if (this.chunk.length - this.used < MIN_ROOM) this.next();
    const own = w.buf;
    const at = this.used;
    w.buf = this.chunk;
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
    if (buf === this.chunk) {
      this.used = end;
      return buf.subarray(at, end);
    }
    return this.copy(buf.subarray(at), end - at);
  }

  private next(): void {
    this.chunk = new Uint8Array(CHUNK);
    this.used = 0;
  }
}
