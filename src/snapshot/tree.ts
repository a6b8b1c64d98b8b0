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

/** The leaf prefix (`depth` hex digits, most significant first) of a name. */
export function leafPrefix(name: string, depth: number): string {
  if (depth === 0) return '';
  return fnv1a32(bucketKey(name)).toString(16).padStart(8, '0').slice(0, depth);
}

export function tableDepth(size: number): number {
  let depth = 0;
  for (let cap = LEAF_TARGET; size > cap && depth < MAX_DEPTH; cap *= FANOUT) depth++;
  return depth;
}

const HEX = '0123456789abcdef';
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Canonical JSON of a leaf: `{"entries":{name:digest,…}}`, names sorted. */
export function leafText(entries: ReadonlyMap<string, string>): string {
  const names = [...entries.keys()].sort(cmp);
  const parts = new Array<string>(names.length);
  for (let i = 0; i < names.length; i++) parts[i] = `${JSON.stringify(names[i])}:${JSON.stringify(entries.get(names[i] as string))}`;
  return `{"entries":{${parts.join(',')}}}`;
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

/**
 * Where documents go while building: hashes each text once (a cache from the previous full build
 * spares re-hashing unchanged documents) and collects each document once.
 */
export class DocumentSink {
  readonly documents = new Map<string, TreeDocument>();
  /** text → document, for the next build's cache (full builds only). */
  readonly seen: Map<string, TreeDocument> | undefined;
  hashed = 0;

  constructor(
    private readonly hasher: Hasher,
    private readonly cache: ReadonlyMap<string, TreeDocument> = new Map(),
    keepForCache = false,
  ) {
    this.seen = keepForCache ? new Map() : undefined;
  }

  emit(text: string, layer: number): string {
    let doc = this.cache.get(text) ?? this.seen?.get(text);
    if (!doc || doc.layer !== layer) {
      const bytes = utf8Bytes(text);
      doc = { digest: digestOf(bytes, this.hasher), bytes, layer };
      this.hashed++;
    }
    this.seen?.set(text, doc);
    if (!this.documents.has(doc.digest)) this.documents.set(doc.digest, doc);
    return doc.digest;
  }

  /** Documents sorted by layer, then digest: children before parents. */
  sorted(): TreeDocument[] {
    return [...this.documents.values()].sort((a, b) => a.layer - b.layer || cmp(a.digest, b.digest));
  }
}

/** A name → digest table and its documents, updatable entry by entry. */
export class TableTree {
  private depth = 0;
  private count = 0;
  private readonly leaves = new Map<string, Map<string, string>>();
  /** prefix → digest of the node (leaf or interior) at that prefix; '' is the root. */
  private readonly nodes = new Map<string, string>();
  private readonly dirty = new Set<string>();
  private rehash = true;

  /** @param layerBase layer of this table's leaves (the root is `layerBase + depth`). */
  constructor(private readonly layerBase = 0) {}

  static of(entries: Iterable<readonly [string, string]>, layerBase = 0): TableTree {
    const t = new TableTree(layerBase);
    for (const [name, digest] of entries) t.set(name, digest);
    return t;
  }

  get size(): number {
    return this.count;
  }

  get root(): string {
    const r = this.nodes.get('');
    if (r === undefined || this.rehash || this.dirty.size) throw new Error('TableTree: commit() before reading the root');
    return r;
  }

  get(name: string): string | undefined {
    return this.leaves.get(leafPrefix(name, this.depth))?.get(name);
  }

  set(name: string, digest: string): void {
    const prefix = leafPrefix(name, this.depth);
    let leaf = this.leaves.get(prefix);
    if (!leaf) this.leaves.set(prefix, (leaf = new Map()));
    if (leaf.get(name) === digest) return;
    if (!leaf.has(name)) this.resized(this.count + 1);
    leaf.set(name, digest);
    this.dirty.add(prefix);
  }

  delete(name: string): boolean {
    const prefix = leafPrefix(name, this.depth);
    const leaf = this.leaves.get(prefix);
    if (!leaf?.delete(name)) return false;
    this.resized(this.count - 1);
    this.dirty.add(prefix);
    return true;
  }

  /** Name → digest, names sorted. */
  entries(): [string, string][] {
    const out: [string, string][] = [];
    for (const leaf of this.leaves.values()) for (const e of leaf) out.push(e);
    return out.sort((a, b) => cmp(a[0], b[0]));
  }

  /** Writes the documents that changed since the last commit into `sink`; returns the root digest. */
  commit(sink: DocumentSink): string {
    if (this.rehash) this.redistribute();
    if (this.dirty.size === 0) return this.root;
    const depth = this.depth;
    let level = new Set<string>();
    for (const prefix of this.dirty) {
      const leaf = this.leaves.get(prefix);
      if (leaf && (leaf.size > 0 || prefix === '')) this.nodes.set(prefix, sink.emit(leafText(leaf), this.layerBase));
      else {
        this.leaves.delete(prefix);
        this.nodes.delete(prefix);
      }
      if (depth > 0) level.add(prefix.slice(0, depth - 1));
    }
    this.dirty.clear();
    for (let k = depth - 1; k >= 0; k--) {
      const parents = new Set<string>();
      for (const prefix of level) {
        const children: [string, string][] = [];
        for (const c of HEX) {
          const d = this.nodes.get(prefix + c);
          if (d !== undefined) children.push([c, d]);
        }
        if (children.length === 0 && k > 0) this.nodes.delete(prefix);
        else this.nodes.set(prefix, sink.emit(nodeText(children), this.layerBase + depth - k));
        if (k > 0) parents.add(prefix.slice(0, k - 1));
      }
      level = parents;
    }
    return this.root;
  }

  private resized(size: number): void {
    this.count = size;
    if (tableDepth(size) !== this.depth) this.rehash = true;
  }

  private redistribute(): void {
    const all: [string, string][] = [];
    for (const leaf of this.leaves.values()) for (const e of leaf) all.push(e);
    this.leaves.clear();
    this.nodes.clear();
    this.dirty.clear();
    this.depth = tableDepth(all.length);
    this.rehash = false;
    for (const [name, digest] of all) {
      const prefix = leafPrefix(name, this.depth);
      let leaf = this.leaves.get(prefix);
      if (!leaf) this.leaves.set(prefix, (leaf = new Map()));
      leaf.set(name, digest);
      this.dirty.add(prefix);
    }
    if (this.depth === 0) {
      if (!this.leaves.has('')) this.leaves.set('', new Map());
      this.dirty.add('');
    }
  }
}
