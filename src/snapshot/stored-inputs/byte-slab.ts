/**
 * Copies of many small byte strings that live and die together (a full build's stored objects),
 * made in shared chunks: one ArrayBuffer per chunk instead of one per copy, so 54k objects at 10k
 * services cost a few dozen backing stores, not 54k (each an allocation the GC tracks). A copy is
 * a view (`subarray`) of its chunk: it keeps the chunk alive, so the watcher's objects, which are
 * replaced one by one, are copied on their own. Pure.
 */
const CHUNK = 1 << 20;

export class ByteSlab {
  private chunk = new Uint8Array(0);
  private used = 0;

  /** A copy of `src[0, end)`. */
  copy(src: Uint8Array, end: number): Uint8Array {
    if (end > CHUNK / 8) return src.slice(0, end);
    if (this.used + end > this.chunk.length) {
      this.chunk = new Uint8Array(CHUNK);
      this.used = 0;
    }
    const at = this.used;
    this.chunk.set(src.subarray(0, end), at);
    this.used = at + end;
    return this.chunk.subarray(at, at + end);
  }
}
