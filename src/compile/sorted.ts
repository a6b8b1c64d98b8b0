/** Tables of resources by name, in code unit order of their names (the order snapshots list them in). */

/** The entries as a map in name order: the map itself when they came in order (most builders add them so). */
export function sortedByName<V>(entries: Map<string, V>): Map<string, V> {
  let last: string | undefined;
  for (const name of entries.keys()) {
    if (last !== undefined && !(last < name)) {
      return new Map([...entries.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    last = name;
  }
  return entries;
}

/**
 * Builds a table of names like `outbound|<port>|<subset>|<host>` in name order without sorting it
 * whole: entries go to a bucket per prefix (up to the last `|`), and when they are added in host
 * order (services come sorted by hostname) each bucket is in order already. Only the few prefixes
 * are sorted; whatever is still out of order is sorted at the end.
 */
export class NameOrderedTable<V> {
  private readonly buckets = new Map<string, Map<string, V>>();

  /** Adds the entry unless its name is taken (the first wins). */
  add(name: string, value: V): void {
    const bucket = this.bucket(name);
    if (!bucket.has(name)) bucket.set(name, value);
  }

  /** Sets the entry (the last wins). */
  set(name: string, value: V): void {
    this.bucket(name).set(name, value);
  }

  toMap(): Map<string, V> {
    if (this.buckets.size === 1) return sortedByName(this.buckets.values().next().value as Map<string, V>);
    const out = new Map<string, V>();
    for (const prefix of [...this.buckets.keys()].sort())
      for (const [name, value] of sortedByName(this.buckets.get(prefix) as Map<string, V>)) out.set(name, value);
    return sortedByName(out);
  }

  private bucket(name: string): Map<string, V> {
    const prefix = name.slice(0, name.lastIndexOf('|') + 1);
    let bucket = this.buckets.get(prefix);
    if (!bucket) this.buckets.set(prefix, (bucket = new Map()));
    return bucket;
  }
}

/**
 * Sorts a short list of strings in place, in code unit order (what `sort()` gives): by insertion,
 * without the work array `Array#sort` allocates on every call (~0.9 KB for 4 strings), which adds up
 * for the tens of thousands of label sets and locality keys a compile sorts.
 */
export function sortShortStrings(list: string[]): string[] {
  for (let i = 1; i < list.length; i++) {
    const s = list[i] as string;
    let j = i - 1;
    for (; j >= 0 && (list[j] as string) > s; j--) list[j + 1] = list[j] as string;
    list[j + 1] = s;
  }
  return list;
}
