/**
 * Digest order for the ~120k objects and ~60k documents of a 10k-service full build, without a
 * comparator call per comparison: each entry becomes one float64 — its major key (a document's
 * layer), the first hex digits of its digest, its position — and a native numeric sort of those
 * orders them; entries whose digits tie (a few hundred pairs at 10k) are then ordered by their whole
 * digests. Anything that does not fit (keys that are not well-formed digests, a major key out of
 * range, too many entries) is sorted the plain way.
 */
const PREFIX = 'sha256:';
const HEX_DIGITS = 6;
const MAJOR_BITS = 6;
const INDEX_BITS = 22;
/** 2^(4·HEX_DIGITS + INDEX_BITS): the weight of a major key. The whole key uses 52 bits, below float64's 53. */
const INDEX_SPAN = 2 ** INDEX_BITS;
const DIGITS_SPAN = 2 ** (4 * HEX_DIGITS);

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The first hex digits of a well-formed digest (`sha256:` and lowercase hex) as a number, else -1. */
function leadingDigits(digest: string): number {
  if (!digest.startsWith(PREFIX)) return -1;
  let v = 0;
  for (let i = PREFIX.length; i < PREFIX.length + HEX_DIGITS; i++) {
    const c = digest.charCodeAt(i);
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/**
 * The positions of `keys` in (major, key) order, `major[i]` defaulting to 0 (equal keys end up side
 * by side, in no particular order).
 */
export function digestOrder(keys: readonly string[], major?: readonly number[]): Uint32Array {
  const n = keys.length;
  const packed = n < INDEX_SPAN ? new Float64Array(n) : undefined;
  for (let i = 0; packed && i < n; i++) {
    const digits = leadingDigits(keys[i] as string);
    const m = major ? (major[i] as number) : 0;
    if (digits < 0 || !Number.isInteger(m) || m < 0 || m >= 1 << MAJOR_BITS) return plainOrder(keys, major);
    packed[i] = (m * DIGITS_SPAN + digits) * INDEX_SPAN + i;
  }
  if (!packed) return plainOrder(keys, major);
  packed.sort();
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = (packed[i] as number) % INDEX_SPAN;
  // Runs of equal (major, digits): by whole key.
  for (let i = 0; i < n;) {
    const prefix = Math.floor((packed[i] as number) / INDEX_SPAN);
    let j = i + 1;
    while (j < n && Math.floor((packed[j] as number) / INDEX_SPAN) === prefix) j++;
    if (j - i > 1) order.subarray(i, j).sort((a, b) => cmp(keys[a] as string, keys[b] as string));
    i = j;
  }
  return order;
}

function plainOrder(keys: readonly string[], major?: readonly number[]): Uint32Array {
  const m = (i: number): number => (major ? (major[i] as number) : 0);
  return Uint32Array.from(keys.keys()).sort((a, b) => m(a) - m(b) || cmp(keys[a] as string, keys[b] as string));
}

/** Collects key → value entries and gives them back in digest order. */
export class DigestSorter<V> {
  private readonly keys: string[] = [];
  private readonly vals: V[] = [];
  private readonly majors: number[] = [];

  /** @param major an ordering key before the digest (small non-negative integers sort fastest). */
  add(digest: string, value: V, major = 0): void {
    this.keys.push(digest);
    this.vals.push(value);
    this.majors.push(major);
  }

  /** The entries added, in string order of their keys (keys are expected to be distinct). */
  toMap(): Map<string, V> {
    const out = new Map<string, V>();
    for (const i of digestOrder(this.keys, this.majors)) out.set(this.keys[i] as string, this.vals[i] as V);
    return out;
  }

  /** The values added, in (major, key) order. */
  values(): V[] {
    const order = digestOrder(this.keys, this.majors);
    const out = new Array<V>(order.length);
    for (let i = 0; i < order.length; i++) out[i] = this.vals[order[i] as number] as V;
    return out;
  }
}
