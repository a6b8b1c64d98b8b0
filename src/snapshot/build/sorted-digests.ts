/**
 * A digest → bytes map in digest order, for the ~120k objects of a 10k-service full build: the
 * entries are bucketed by the first three hex digits of their digest (which orders the buckets as
 * strings) and each short bucket is insertion-sorted with its bytes beside it, instead of one sort
 * of every digest followed by a lookup of each one's bytes.
 */
const PREFIX = 'sha256:';
const BUCKET_DIGITS = 3;

/** The bucket of a well-formed digest (`sha256:` and lowercase hex), else -1. */
function bucketOf(digest: string): number {
  if (!digest.startsWith(PREFIX)) return -1;
  let b = 0;
  for (let i = PREFIX.length; i < PREFIX.length + BUCKET_DIGITS; i++) {
    const c = digest.charCodeAt(i);
    const v = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (v < 0) return -1;
    b = (b << 4) | v;
  }
  return b;
}

export class DigestSorter<V> {
  private readonly keys: string[][] = Array.from({ length: 1 << (4 * BUCKET_DIGITS) }, () => []);
  private readonly values: V[][] = Array.from({ length: 1 << (4 * BUCKET_DIGITS) }, () => []);
  /** Keys that are not well-formed digests (then everything is sorted the plain way). */
  private odd = false;

  add(digest: string, value: V): void {
    let b = bucketOf(digest);
    if (b < 0) {
      this.odd = true;
      b = 0;
    }
    (this.keys[b] as string[]).push(digest);
    (this.values[b] as V[]).push(value);
  }

  /** The entries added, in string order of their keys (keys are expected to be distinct). */
  toMap(): Map<string, V> {
    const out = new Map<string, V>();
    if (this.odd) {
      const all: [string, V][] = [];
      this.keys.forEach((ks, b) => ks.forEach((k, i) => all.push([k, (this.values[b] as V[])[i] as V])));
      all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      for (const [k, v] of all) out.set(k, v);
      return out;
    }
    for (let b = 0; b < this.keys.length; b++) {
      const ks = this.keys[b] as string[];
      const vs = this.values[b] as V[];
      insertionSort(ks, vs);
      for (let i = 0; i < ks.length; i++) out.set(ks[i] as string, vs[i] as V);
    }
    return out;
  }
}

/** Sorts `keys` in place, moving `values` alongside (buckets hold ~30 entries at 10k services). */
function insertionSort<V>(keys: string[], values: V[]): void {
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    const v = values[i] as V;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > k) {
      keys[j + 1] = keys[j] as string;
      values[j + 1] = values[j] as V;
      j--;
    }
    keys[j + 1] = k;
    values[j + 1] = v;
  }
}
