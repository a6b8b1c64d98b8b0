/**
 * The snapshot as a Merkle tree (the layout is described in content.ts): the in-memory tables a
 * builder keeps, and how they become content-addressed documents.
 *
 * A `TableTree` maps names to digests (resource name → object digest, or group id → group
 * document digest) and stores itself as a fixed-depth hash trie. The depth is a function of the
 * number of entries only, and an entry's leaf is a function of its name only, so the documents
 * are a pure function of the entry set: built from scratch or updated entry by entry, the same
 * entries give the same documents and root digest.
 */
import { ByteWriter } from '../canonical-json.js';
import { DigestSorter } from './sorted-digests.js';
import type { ByteSlab } from '../xds/wire/slab.js';
import { digestOf, utf8Bytes, type Hasher } from './digest.js';

/** Entries per leaf the depth aims at: a table of n entries has depth ⌈log16(n / LEAF_TARGET)⌉. */
export const LEAF_TARGET = 32;
/** Children per interior node (one hex digit of the bucket hash per level). */
export const FANOUT = 16;
/** 32-bit hash: 8 hex digits. */
export const MAX_DEPTH = 8;

/** Write layers: a document's children are always in lower layers (publish writes layer by layer). */
export const LAYER = { classes: 0, groupDoc: MAX_DEPTH + 1, index: MAX_DEPTH + 2, top: 2 * MAX_DEPTH + 4 } as const;

/**
 * The part of a name that picks its bucket: after the last `|` for Istio-style cluster names
 * (`outbound|8080|v1|reviews.default.svc.cluster.local`), so all resources of one service share a
 * leaf and a change to one service rewrites one leaf per table.
 */
export function bucketKey(name: string): string {
  const bar = name.lastIndexOf('|');
  return bar >= 0 ? name.slice(bar + 1) : name;
}

/** FNV-1a, 32 bits, over UTF-16 code units. */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The bucket hash of a name. */
export const nameHash = (name: string): number => fnv1a32(bucketKey(name));

export function tableDepth(size: number): number {
  let depth = 0;
  for (let cap = LEAF_TARGET; size > cap && depth < MAX_DEPTH; cap *= FANOUT) depth++;
  return depth;
}

const HEX = '0123456789abcdef';
const EMPTY_LEAF = '{"entries":{}}';
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Canonical JSON of a leaf: `{"entries":{name:digest,…}}`, names sorted. */
export function leafText(entries: ReadonlyMap<string, string>): string {
  const names = [...entries.keys()].sort(cmp);
  const parts = new Array<string>(names.length);
  for (let i = 0; i < names.length; i++)
    parts[i] = `${JSON.stringify(names[i])}:${JSON.stringify(entries.get(names[i] as string))}`;
  return `{"entries":{${parts.join(',')}}}`;
}

/**
 * The UTF-8 bytes of `leafText(entries)`, written into one reused buffer rather than built from a
 * string per entry (a full build writes ~50k leaves at 10k services). Plain ASCII strings, nearly
 * every name and all digests, are copied as they are; any other string goes through JSON.stringify.
 */
export function leafBytes(entries: ReadonlyMap<string, string>): Uint8Array {
  const names = [...entries.keys()].sort();
  const w = leafWriter;
  w.pos = 0;
  w.ascii('{"entries":{');
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (i > 0) w.byte(0x2c); // ,
    w.string(name);
    w.byte(0x3a); // :
    w.string(entries.get(name) as string);
  }
  w.ascii('}}');
  return w.buf.slice(0, w.pos);
}

const leafWriter = new ByteWriter(new Uint8Array(1 << 16));

/**
 * The bytes of the leaf holding `names[e]` → `digests[e]` for each e of `at` (ascending), or of
 * every entry when `at` is undefined; names sorted. A view of the reused buffer: valid until the next leaf.
 */
function leafBytesOf(
  names: readonly string[],
  digests: readonly string[],
  at?: ArrayLike<number>,
  start = 0,
  end = at ? at.length : names.length,
): Uint8Array {
  const w = leafWriter;
  w.pos = 0;
  w.ascii('{"entries":{');
  for (let i = start; i < end; i++) {
    const e = at ? (at[i] as number) : i;
    if (i > start) w.byte(0x2c); // ,
    w.string(names[e] as string);
    w.byte(0x3a); // :
    w.string(digests[e] as string);
  }
  w.ascii('}}');
  return w.buf.subarray(0, w.pos);
}

/**
 * Writes the documents of the table `names[i]` → `digests[i]` (names distinct and sorted) into
 * `sink` and returns its root: the same documents a `TableTree` of these entries commits, without
 * keeping a tree (the one-shot build writes ~40k tables, most of them empty or one leaf).
 */
export function writeTable(
  names: readonly string[],
  digests: readonly string[],
  sink: DocumentSink,
  layerBase = 0,
): TreeDocument {
  if (names.length === 0) return sink.emit(EMPTY_LEAF, layerBase);
  const depth = tableDepth(names.length);
  if (depth === 0) return sink.emitCopy(leafBytesOf(names, digests), layerBase);
  return writeLeaves(names, digests, groupByLeaf(names, depth), depth, sink, layerBase);
}

/**
 * A table's entries grouped by leaf: leaf `leaves[k]` holds the entries `order[bounds[k]]` …
 * `order[bounds[k + 1] - 1]`, leaves ascending, each leaf's entries in their order in `names`.
 */
export interface LeafGroups {
  readonly order: Uint32Array;
  readonly leaves: readonly number[];
  readonly bounds: readonly number[];
}

/** Leaf numbers up to this many are counted in an array (depth ≤ 5: a million entries per table or more). */
const MAX_COUNTED_LEAVES = FANOUT ** 5;

/**
 * The entries of a table of `depth` by leaf: a stable counting sort, or a sort by leaf for a table
 * with more possible leaves than `maxCounted` (exported for its test, which lowers the bound).
 */
export function groupByLeaf(names: readonly string[], depth: number, maxCounted = MAX_COUNTED_LEAVES): LeafGroups {
  const n = names.length;
  const shift = 32 - 4 * depth;
  const leafOf = new Uint32Array(n);
  // (A shift by 32 is a shift by 0 in JS: depth 0 is one leaf, 0.)
  if (depth > 0) for (let i = 0; i < n; i++) leafOf[i] = nameHash(names[i] as string) >>> shift;
  let order: Uint32Array;
  if (FANOUT ** depth <= maxCounted) {
    const next = new Uint32Array(FANOUT ** depth + 1);
    for (let i = 0; i < n; i++) (next[(leafOf[i] as number) + 1] as number)++;
    for (let l = 1; l < next.length; l++) next[l] = (next[l] as number) + (next[l - 1] as number);
    order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[(next[leafOf[i] as number] as number)++] = i;
  } else order = Uint32Array.from(names.keys()).sort((a, b) => (leafOf[a] as number) - (leafOf[b] as number) || a - b);
  const leaves: number[] = [];
  const bounds: number[] = [];
  for (let i = 0; i < n; i++) {
    const leaf = leafOf[order[i] as number] as number;
    if (i === 0 || leaf !== leaves[leaves.length - 1]) {
      leaves.push(leaf);
      bounds.push(i);
    }
  }
  bounds.push(n);
  return { order, leaves, bounds };
}

/** Writes a table's leaves, their entries in the order `order` gives (name order), and the interior nodes above; returns the root. */
function writeLeaves(
  names: readonly string[],
  digests: readonly string[],
  { order, leaves, bounds }: LeafGroups,
  depth: number,
  sink: DocumentSink,
  layerBase: number,
): TreeDocument {
  const level = new Map<number, TreeDocument>();
  for (let k = 0; k < leaves.length; k++) {
    const bytes = leafBytesOf(names, digests, order, bounds[k] as number, bounds[k + 1] as number);
    level.set(leaves[k] as number, sink.emitCopy(bytes, layerBase));
  }
  return writeInterior(level, depth, sink, layerBase);
}

/** The interior nodes above a table's leaves (leaf number → its document), bottom-up; returns the root. */
function writeInterior(
  leaves: Map<number, TreeDocument>,
  depth: number,
  sink: DocumentSink,
  layerBase: number,
): TreeDocument {
  let level = leaves;
  for (let k = depth - 1; k >= 0; k--) {
    const parents = new Map<number, [string, string][]>();
    for (const [node, doc] of level) {
      const children = parents.get(node >>> 4);
      const child: [string, string] = [HEX[node & 15] as string, doc.digest];
      if (children) children.push(child);
      else parents.set(node >>> 4, [child]);
    }
    level = new Map();
    for (const [node, children] of parents) level.set(node, sink.emit(nodeText(children), layerBase + depth - k));
  }
  return level.get(0) as TreeDocument;
}

/**
 * `writeTable` of names in any order: the same documents, without sorting the whole table (a full
 * build of the stored inputs: ~40k names). The entries are grouped by leaf with a counting sort, then
 * each leaf's few entries sorted by name. Undefined, and nothing written, when a name repeats.
 */
export function writeUnsortedTable(
  names: readonly string[],
  digests: readonly string[],
  sink: DocumentSink,
  layerBase = 0,
): TreeDocument | undefined {
  if (names.length === 0) return sink.emit(EMPTY_LEAF, layerBase);
  const depth = tableDepth(names.length);
  const groups = groupByLeaf(names, depth);
  const { order, bounds } = groups;
  for (let k = 0; k + 1 < bounds.length; k++) {
    const start = bounds[k] as number;
    const end = bounds[k + 1] as number;
    sortRangeByName(order, start, end, names);
    for (let i = start + 1; i < end; i++)
      if (names[order[i] as number] === names[order[i - 1] as number]) return undefined;
  }
  return writeLeaves(names, digests, groups, depth, sink, layerBase);
}

/** Insertion-sorted up to this many entries; a larger leaf (names that happen to share a hash prefix) by a plain sort. */
const INSERTION_SORT_MAX = 64;

/** Sorts `order[start, end)` by the names they point at (a leaf holds a few dozen entries). */
function sortRangeByName(order: Uint32Array, start: number, end: number, names: readonly string[]): void {
  if (end - start > INSERTION_SORT_MAX) {
    order.subarray(start, end).sort((a, b) => cmp(names[a] as string, names[b] as string));
    return;
  }
  for (let i = start + 1; i < end; i++) {
    const e = order[i] as number;
    const name = names[e] as string;
    let j = i - 1;
    while (j >= start && (names[order[j] as number] as string) > name) {
      order[j + 1] = order[j] as number;
      j--;
    }
    order[j + 1] = e;
  }
}

/** Canonical JSON of an interior node: `{"children":{hexDigit:digest,…}}`. */
export function nodeText(children: readonly (readonly [string, string])[]): string {
  return `{"children":{${children.map(([k, d]) => `"${k}":${JSON.stringify(d)}`).join(',')}}}`;
}

export interface TreeDocument {
  readonly digest: string;
  readonly bytes: Uint8Array;
  /** Children are in lower layers. */
  readonly layer: number;
}

const SHORT_TEXT = 64;

/** Hashes document texts and collects the documents written by one build. */
export class DocumentSink {
  readonly documents = new Map<string, TreeDocument>();
  /** Short texts repeat (the leaf of every empty table, ~10k at 10k services): hashed once per sink. */
  private readonly short = new Map<string, TreeDocument>();

  /** @param slab where the documents' bytes go (xds/wire/slab.ts), for a sink whose documents all live as long as it does. */
  constructor(
    private readonly hasher: Hasher,
    private readonly slab?: ByteSlab,
  ) {}

  emit(text: string, layer: number): TreeDocument {
    const memo = text.length <= SHORT_TEXT;
    const known = memo ? this.short.get(text) : undefined;
    if (known?.layer === layer) return known;
    const bytes = this.slab ? this.slab.utf8(text) : utf8Bytes(text);
    const doc: TreeDocument = { digest: digestOf(bytes, this.hasher), bytes, layer };
    this.add(doc);
    if (memo) this.short.set(text, doc);
    return doc;
  }

  /** A document given as its bytes (not memoized: long texts rarely repeat). */
  emitBytes(bytes: Uint8Array, layer: number): TreeDocument {
    const doc: TreeDocument = { digest: digestOf(bytes, this.hasher), bytes, layer };
    this.add(doc);
    return doc;
  }

  /** A document given as bytes the caller reuses afterwards: hashed there, then copied. */
  emitCopy(bytes: Uint8Array, layer: number): TreeDocument {
    const digest = digestOf(bytes, this.hasher);
    const known = this.documents.get(digest)?.bytes;
    const copy = known ?? (this.slab ? this.slab.copy(bytes) : bytes.slice());
    const doc: TreeDocument = { digest, bytes: copy, layer };
    this.add(doc);
    return doc;
  }

  add(doc: TreeDocument): void {
    if (!this.documents.has(doc.digest)) this.documents.set(doc.digest, doc);
  }

  /** Documents sorted by layer, then digest: children before parents. */
  sorted(): TreeDocument[] {
    const sorter = new DigestSorter<TreeDocument>();
    for (const doc of this.documents.values()) sorter.add(doc.digest, doc, doc.layer);
    return sorter.values();
  }
}

/** A name → digest table and its documents, updatable entry by entry. */
export class TableTree {
  private depth = 0;
  private readonly flat = new Map<string, string>();
  /** Leaf number (the top 4·depth bits of the name hash) → its entries (at depth 0: `flat` itself). */
  private readonly leaves = new Map<number, Map<string, string>>();
  /** levels[k]: node number at level k → its document (k = depth: the leaves; level 0: the root). */
  private levels: Map<number, TreeDocument>[] = [];
  private readonly dirty = new Set<number>();
  private rehash = true;

  /** @param layerBase layer of this table's leaves (the root is `layerBase + depth`). */
  constructor(private readonly layerBase = 0) {}

  static of(entries: Iterable<readonly [string, string]>, layerBase = 0): TableTree {
    const t = new TableTree(layerBase);
    for (const [name, digest] of entries) t.set(name, digest);
    return t;
  }

  get size(): number {
    return this.flat.size;
  }

  get root(): TreeDocument {
    const r = this.levels[0]?.get(0);
    if (r === undefined || this.rehash || this.dirty.size)
      throw new Error('TableTree: commit() before reading the root');
    return r;
  }

  get(name: string): string | undefined {
    return this.flat.get(name);
  }

  /** Name → digest (insertion order). */
  entries(): IterableIterator<[string, string]> {
    return this.flat.entries();
  }

  set(name: string, digest: string): void {
    const had = this.flat.get(name);
    if (had === digest) return;
    this.flat.set(name, digest);
    if (had === undefined && tableDepth(this.flat.size) !== this.depth) this.rehash = true;
    if (this.rehash) return; // redistributed at commit
    const leaf = this.depth === 0 ? 0 : nameHash(name) >>> (32 - 4 * this.depth);
    let entries = this.leaves.get(leaf);
    if (!entries) this.leaves.set(leaf, (entries = new Map()));
    entries.set(name, digest);
    this.dirty.add(leaf);
  }

  delete(name: string): boolean {
    if (!this.flat.delete(name)) return false;
    if (tableDepth(this.flat.size) !== this.depth) this.rehash = true;
    if (this.rehash) return true;
    const leaf = this.depth === 0 ? 0 : nameHash(name) >>> (32 - 4 * this.depth);
    this.leaves.get(leaf)?.delete(name);
    this.dirty.add(leaf);
    return true;
  }

  /** Every document of the table. */
  documents(out: (doc: TreeDocument) => void): void {
    for (const level of this.levels) for (const doc of level.values()) out(doc);
  }

  /** Writes the documents that changed since the last commit into `sink`; returns the root. */
  commit(sink: DocumentSink): TreeDocument {
    if (this.rehash) this.redistribute();
    if (this.dirty.size === 0) return this.root;
    const depth = this.depth;
    const leafLevel = this.levels[depth] as Map<number, TreeDocument>;
    let changed = new Set<number>();
    for (const leaf of this.dirty) {
      const entries = this.leaves.get(leaf);
      if (entries && entries.size > 0) leafLevel.set(leaf, sink.emitBytes(leafBytes(entries), this.layerBase));
      else if (entries && depth === 0) leafLevel.set(leaf, sink.emit(EMPTY_LEAF, this.layerBase));
      else {
        this.leaves.delete(leaf);
        leafLevel.delete(leaf);
      }
      changed.add(leaf >>> 4);
    }
    this.dirty.clear();
    for (let k = depth - 1; k >= 0; k--) {
      const level = this.levels[k] as Map<number, TreeDocument>;
      const below = this.levels[k + 1] as Map<number, TreeDocument>;
      const parents = new Set<number>();
      for (const node of changed) {
        const children: [string, string][] = [];
        for (let c = 0; c < FANOUT; c++) {
          const d = below.get(node * FANOUT + c);
          if (d !== undefined) children.push([HEX[c] as string, d.digest]);
        }
        if (children.length === 0 && k > 0) level.delete(node);
        else level.set(node, sink.emit(nodeText(children), this.layerBase + depth - k));
        parents.add(node >>> 4);
      }
      changed = parents;
    }
    return this.root;
  }

  private redistribute(): void {
    this.leaves.clear();
    this.dirty.clear();
    this.depth = tableDepth(this.flat.size);
    this.levels = [];
    for (let k = 0; k <= this.depth; k++) this.levels.push(new Map<number, TreeDocument>());
    this.rehash = false;
    if (this.depth === 0) {
      // One leaf holding every entry: the table itself (most tables are this small), not a copy.
      this.leaves.set(0, this.flat);
      this.dirty.add(0);
      return;
    }
    const shift = 32 - 4 * this.depth;
    for (const [name, digest] of this.flat) {
      const leaf = this.depth === 0 ? 0 : nameHash(name) >>> shift;
      let entries = this.leaves.get(leaf);
      if (!entries) this.leaves.set(leaf, (entries = new Map()));
      entries.set(name, digest);
      this.dirty.add(leaf);
    }
  }
}
