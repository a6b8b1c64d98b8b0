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

const BUCKETS = 1 << (4 * BUCKET_DIGITS);

export class DigestSorter<V> {
  /** Per bucket, its keys and their values, position by position (a bucket is made when first used). */
  private readonly keys: (string[] | undefined)[] = new Array<string[] | undefined>(BUCKETS).fill(undefined);
  private readonly vals: (V[] | undefined)[] = new Array<V[] | undefined>(BUCKETS).fill(undefined);
  /** Keys that are not well-formed digests (then everything is sorted the plain way). */
  private odd = false;

  add(digest: string, value: V): void {
    let b = bucketOf(digest);
    if (b < 0) {
      this.odd = true;
      b = 0;
    }
    const ks = this.keys[b];
    if (ks) {
      ks.push(digest);
      (this.vals[b] as V[]).push(value);
    } else {
      this.keys[b] = [digest];
      this.vals[b] = [value];
    }
  }

  /** The entries added, in string order of their keys (keys are expected to be distinct). */
  toMap(): Map<string, V> {
    const out = new Map<string, V>();
    this.forEachSorted((k, v) => out.set(k, v));
    return out;
  }

  /** The values added, in string order of their keys. */
  values(): V[] {
    const out: V[] = [];
    this.forEachSorted((_, v) => out.push(v));
    return out;
  }

  private forEachSorted(f: (key: string, value: V) => void): void {
    if (this.odd) {
      const all: [string, V][] = [];
      this.keys.forEach((ks, b) => ks?.forEach((k, i) => all.push([k, (this.vals[b] as V[])[i] as V])));
      all.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      for (const [k, v] of all) f(k, v);
      return;
    }
    for (let b = 0; b < BUCKETS; b++) {
      const ks = this.keys[b];
      if (!ks) continue;
      const vs = this.vals[b] as V[];
      insertionSort(ks, vs);
      for (let i = 0; i < ks.length; i++) f(ks[i] as string, vs[i] as V);
    }
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
