/**
 * Builds immutable snapshots from the compiler's output: every resource encoded to protobuf once,
 * objects named by their digest, and the Merkle tree of documents described in content.ts.
 *
 * `SnapshotBuilder` keeps the last tree so that the next snapshot costs what changed:
 * - `build(output)` is a full build; it reuses the ResourceEncoder (unchanged message objects are
 *   not encoded again) and the previous build's documents (an unchanged document is not hashed again);
 * - `applyDelta(delta)` takes upserted/deleted resources per group and type, encodes only the
 *   upserted messages, re-checks consistency only around the changed names, rewrites only the
 *   touched leaves and their paths to the top, and returns only the new objects and documents.
 * A delta gives exactly the digest a full build of the resulting output gives.
 */
import type { ClassSelector, CompileOutput, GroupId, ProxyClass, ResourceMessages, ResourceTable } from '../compile/types.js';
import { emptyTable } from '../compile/types.js';
import { XDS_TYPES, type XdsType } from '../xds/type-urls.js';
import { canonicalJson } from './canonical-json.js';
import { assertConsistent, checkConsistency, ConsistencyIndex, InconsistentSnapshotError, type ConsistencyProblem, type ResourceChange } from './consistency.js';
import { SNAPSHOT_SCHEMA, snapshotDocuments, sortedClasses, sortedSelectors, type CompilerInfo, type GroupDigests, type SnapshotContent } from './content.js';
import type { Hasher } from './digest.js';
import { ResourceEncoder } from './encoder.js';
import { DocumentSink, LAYER, TableTree, type TreeDocument } from './tree.js';

export { snapshotDigest, snapshotDocuments } from './content.js';

export type { TreeDocument } from './tree.js';

export interface SnapshotBuildInfo {
  readonly inputsDigest: string;
  readonly compiler: CompilerInfo;
}

export interface SnapshotBuildOptions {
  /** Hash for object and document digests (default: the encoder's, else @noble/hashes). */
  readonly hasher?: Hasher;
  /** Reuse across builds so unchanged message objects are not encoded again. */
  readonly encoder?: ResourceEncoder;
}

export interface SnapshotCounts {
  readonly clusters: number;
  readonly endpoints: number;
  readonly listeners: number;
  readonly routes: number;
  readonly classes: number;
  /** Distinct stored objects. */
  readonly objects: number;
}

export interface BuiltSnapshot {
  /** The top document's digest. */
  readonly digest: string;
  readonly inputsDigest: string;
  readonly compiler: CompilerInfo;
  /** The expanded view (for a delta: computed on first use). */
  readonly content: SnapshotContent;
  readonly counts: SnapshotCounts;
  /** Objects to store, digest → protobuf bytes, sorted by digest: every object, or for a delta only the new ones. */
  readonly objects: ReadonlyMap<string, Uint8Array>;
  /** Documents to store, children before parents (ascending `layer`), the top document last: all of them, or for a delta only the rewritten ones. */
  readonly documents: readonly TreeDocument[];
  /** For a delta: the digest of the snapshot it applies to, whose objects and documents must already be stored. */
  readonly base?: string;
}

/** Changes to one type of one group. Deletes are applied before upserts. */
export interface TypeDelta<M> {
  readonly upserts?: ReadonlyMap<string, M>;
  readonly deletes?: Iterable<string>;
}

export type GroupDelta = { readonly [T in XdsType]?: TypeDelta<ResourceMessages[T]> };

/** Per group: its changes, or null to remove the group altogether. A group not yet there is created. */
export type SnapshotDelta = Readonly<Record<GroupId, GroupDelta | null>>;

export interface DeltaUpdate {
  readonly inputsDigest?: string;
  /** New classes (and/or selectors): consistency is then checked in full. */
  readonly classes?: readonly ProxyClass[];
  readonly selectors?: readonly ClassSelector[];
}

/** Throws InconsistentSnapshotError (consistency.ts) rather than produce a snapshot a proxy would choke on. */
export function buildSnapshot(output: CompileOutput, info: SnapshotBuildInfo, opts: SnapshotBuildOptions = {}): BuiltSnapshot {
  return new SnapshotBuilder(info, opts).build(output);
}

type Trees = Record<XdsType, TableTree>;
type Change = { readonly group: GroupId; readonly type: XdsType; readonly name: string; readonly digest: string | undefined };

/** A delta chain longer than this materializes the older content, so unread snapshots do not pile up. */
const MAX_CHAIN = 32;

export class SnapshotBuilder {
  readonly encoder: ResourceEncoder;
  readonly hasher: Hasher;
  private info: SnapshotBuildInfo;
  private tables = new Map<GroupId, ResourceTable>();
  private trees = new Map<GroupId, Trees>();
  private groupDocs = new Map<GroupId, { text: string; digest: string }>();
  private index = new TableTree(LAYER.index);
  private classes: readonly ProxyClass[] = [];
  private selectors: readonly ClassSelector[] = [];
  private classesDigest = '';
  private pairs = {} as Record<XdsType, Map<string, number>>;
  private objectRefs = new Map<string, number>();
  private consistency: ConsistencyIndex | undefined;
  private docCache: ReadonlyMap<string, TreeDocument> = new Map();
  private current: BuiltSnapshot | undefined;
  private chain = 0;

  constructor(info: SnapshotBuildInfo, opts: SnapshotBuildOptions = {}) {
    this.info = { inputsDigest: info.inputsDigest, compiler: { name: info.compiler.name, version: info.compiler.version } };
    this.encoder = opts.encoder ?? new ResourceEncoder(opts.hasher);
    this.hasher = opts.hasher ?? this.encoder.hasher;
  }

  /** The last snapshot built. */
  get snapshot(): BuiltSnapshot | undefined {
    return this.current;
  }

  /** A full build (the output is copied: later changes to its maps do not affect the builder). */
  build(output: CompileOutput, info?: Partial<SnapshotBuildInfo>): BuiltSnapshot {
    assertConsistent(output);
    if (info) this.info = { inputsDigest: info.inputsDigest ?? this.info.inputsDigest, compiler: info.compiler ?? this.info.compiler };
    const sink = new DocumentSink(this.hasher, this.docCache, true);
    const found = new Map<string, Uint8Array>();
    this.tables = new Map();
    this.trees = new Map();
    this.groupDocs = new Map();
    this.objectRefs = new Map();
    for (const type of XDS_TYPES) this.pairs[type] = new Map();
    const groups: Record<GroupId, GroupDigests> = {};
    for (const id of [...output.groups.keys()].sort()) {
      const table = output.groups.get(id) as ResourceTable;
      const own = emptyTable();
      const trees = newTrees();
      const digests = {} as Record<XdsType, Record<string, string>>;
      for (const type of XDS_TYPES) {
        const messages = table[type] as ReadonlyMap<string, object>;
        const byName: Record<string, string> = {};
        const ownMap = own[type] as Map<string, object>;
        for (const name of [...messages.keys()].sort()) {
          const message = messages.get(name) as object;
          const encoded = this.encoder.encode(type, message);
          ownMap.set(name, message);
          byName[name] = encoded.digest;
          trees[type].set(name, encoded.digest);
          found.set(encoded.digest, encoded.bytes);
          this.count(type, name, encoded.digest, 1);
        }
        digests[type] = byName;
      }
      groups[id] = digests;
      this.tables.set(id, own);
      this.trees.set(id, trees);
      this.commitGroup(id, sink);
    }
    this.index = TableTree.of(
      [...this.groupDocs].map(([id, g]) => [id, g.digest] as const),
      LAYER.index,
    );
    this.setClasses(output.classes, output.selectors, sink);
    const digest = this.commitTop(sink);
    this.docCache = sink.seen as Map<string, TreeDocument>;
    this.consistency = undefined;
    this.chain = 0;

    const objects = new Map<string, Uint8Array>();
    for (const d of [...found.keys()].sort()) objects.set(d, found.get(d) as Uint8Array);
    const content: SnapshotContent = { schema: SNAPSHOT_SCHEMA, compiler: this.info.compiler, inputsDigest: this.info.inputsDigest, groups, classes: this.classes, selectors: this.selectors };
    this.current = { digest, inputsDigest: this.info.inputsDigest, compiler: this.info.compiler, content, counts: this.counts(), objects, documents: sink.sorted() };
    return this.current;
  }

  /**
   * Applies a delta to the last snapshot. Throws InconsistentSnapshotError (leaving the builder at
   * the last snapshot) when the result would be inconsistent.
   */
  applyDelta(delta: SnapshotDelta, update: DeltaUpdate = {}): BuiltSnapshot {
    const base = this.current;
    if (!base) throw new Error('SnapshotBuilder.applyDelta: build() a snapshot first');
    const classesChange = update.classes !== undefined || update.selectors !== undefined;
    if (!classesChange && !this.consistency) this.consistency = new ConsistencyIndex(this.tables, this.classes);

    // 1. The tables, with an undo log.
    const changes: ResourceChange[] = [];
    const removed: GroupId[] = [];
    const added: GroupId[] = [];
    const undo: (() => void)[] = [];
    for (const id of Object.keys(delta).sort()) {
      const groupDelta = delta[id];
      let table = this.tables.get(id);
      if (groupDelta === null || groupDelta === undefined) {
        if (!table) continue;
        const gone = table;
        for (const type of XDS_TYPES) for (const [name, before] of gone[type] as Map<string, object>) changes.push({ group: id, type, name, before, after: undefined });
        this.tables.delete(id);
        undo.push(() => this.tables.set(id, gone));
        removed.push(id);
        continue;
      }
      if (!table) {
        this.tables.set(id, (table = emptyTable()));
        undo.push(() => this.tables.delete(id));
        added.push(id);
      }
      for (const type of XDS_TYPES) {
        const typeDelta = groupDelta[type] as TypeDelta<object> | undefined;
        if (!typeDelta) continue;
        const map = table[type] as Map<string, object>;
        for (const name of typeDelta.deletes ?? []) {
          const before = map.get(name);
          if (before === undefined) continue;
          map.delete(name);
          undo.push(() => map.set(name, before));
          changes.push({ group: id, type, name, before, after: undefined });
        }
        for (const [name, after] of typeDelta.upserts ?? []) {
          const before = map.get(name);
          if (before === after) continue;
          map.set(name, after);
          undo.push(() => (before === undefined ? map.delete(name) : map.set(name, before)));
          changes.push({ group: id, type, name, before, after });
        }
      }
    }

    // 2. Consistency: around the changes, or in full when the classes change.
    const classes = update.classes ? sortedClasses(update.classes) : this.classes;
    const selectors = update.selectors ? sortedSelectors(update.selectors) : this.selectors;
    let problems: ConsistencyProblem[];
    if (classesChange) {
      problems = checkConsistency({ groups: this.tables, classes, selectors });
      this.consistency = undefined;
    } else {
      problems = (this.consistency as ConsistencyIndex).update(changes, removed);
    }
    if (problems.length) {
      for (let i = undo.length - 1; i >= 0; i--) (undo[i] as () => void)();
      this.consistency = undefined; // it saw the changes: rebuilt from the restored tables when next needed
      throw new InconsistentSnapshotError(problems);
    }

    // 3. Objects, trees and documents.
    const sink = new DocumentSink(this.hasher);
    const newObjects = new Map<string, Uint8Array>();
    const contentChanges: Change[] = [];
    const touched = new Set<GroupId>();
    for (const id of added) this.trees.set(id, newTrees());
    for (const ch of changes) {
      const trees = this.trees.get(ch.group) as Trees;
      const tree = trees[ch.type];
      const old = ch.before ? tree.get(ch.name) : undefined;
      let digest: string | undefined;
      if (ch.after) {
        const encoded = this.encoder.encode(ch.type, ch.after);
        digest = encoded.digest;
        if (this.count(ch.type, ch.name, digest, 1)) newObjects.set(digest, encoded.bytes);
        tree.set(ch.name, digest);
      } else tree.delete(ch.name);
      if (old !== undefined) this.count(ch.type, ch.name, old, -1);
      touched.add(ch.group);
      contentChanges.push({ group: ch.group, type: ch.type, name: ch.name, digest });
    }
    for (const id of removed) {
      this.trees.delete(id);
      this.groupDocs.delete(id);
      this.index.delete(id);
      touched.delete(id);
    }
    for (const id of added) touched.add(id);
    for (const id of [...touched].sort()) {
      const before = this.groupDocs.get(id)?.digest;
      const after = this.commitGroup(id, sink);
      if (after !== before) this.index.set(id, after);
    }
    if (classesChange) this.setClasses(classes, selectors, sink);
    if (update.inputsDigest !== undefined) this.info = { ...this.info, inputsDigest: update.inputsDigest };
    const digest = this.commitTop(sink);

    // The chain of unread delta contents stays short.
    if (++this.chain > MAX_CHAIN) {
      void base.content;
      this.chain = 1;
    }
    const objects = new Map<string, Uint8Array>();
    for (const d of [...newObjects.keys()].sort()) objects.set(d, newObjects.get(d) as Uint8Array);
    const info = this.info;
    const newClasses = classesChange ? { classes: this.classes, selectors: this.selectors } : undefined;
    let prev: BuiltSnapshot | undefined = base;
    let content: SnapshotContent | undefined;
    this.current = {
      digest,
      inputsDigest: info.inputsDigest,
      compiler: info.compiler,
      get content(): SnapshotContent {
        if (!content) {
          content = applyContent((prev as BuiltSnapshot).content, info, contentChanges, removed, added, newClasses);
          prev = undefined;
        }
        return content;
      },
      counts: this.counts(),
      objects,
      documents: sink.sorted(),
      base: base.digest,
    };
    return this.current;
  }

  /** The compiler output the builder holds now (its own maps: do not change them). */
  output(): CompileOutput {
    return { groups: this.tables, classes: this.classes, selectors: this.selectors };
  }

  /** Refcounts of (type, name, digest) pairs and objects; true when the object is new. */
  private count(type: XdsType, name: string, digest: string, by: 1 | -1): boolean {
    const key = `${name}\n${digest}`;
    const pairs = this.pairs[type];
    const p = (pairs.get(key) ?? 0) + by;
    if (p === 0) pairs.delete(key);
    else pairs.set(key, p);
    const o = (this.objectRefs.get(digest) ?? 0) + by;
    if (o === 0) this.objectRefs.delete(digest);
    else this.objectRefs.set(digest, o);
    return by === 1 && o === 1;
  }

  private counts(): SnapshotCounts {
    const p = this.pairs;
    return { clusters: p.clusters.size, endpoints: p.endpoints.size, listeners: p.listeners.size, routes: p.routes.size, classes: this.classes.length, objects: this.objectRefs.size };
  }

  private commitGroup(id: GroupId, sink: DocumentSink): string {
    const trees = this.trees.get(id) as Trees;
    const roots = {} as Record<XdsType, string>;
    for (const type of XDS_TYPES) roots[type] = trees[type].commit(sink);
    const text = canonicalJson(roots);
    const known = this.groupDocs.get(id);
    if (known?.text === text) return known.digest;
    const digest = sink.emit(text, LAYER.groupDoc);
    this.groupDocs.set(id, { text, digest });
    return digest;
  }

  private setClasses(classes: readonly ProxyClass[], selectors: readonly ClassSelector[], sink: DocumentSink): void {
    this.classes = sortedClasses(classes);
    this.selectors = sortedSelectors(selectors);
    this.classesDigest = sink.emit(canonicalJson({ classes: this.classes, selectors: this.selectors }), LAYER.classes);
  }

  private commitTop(sink: DocumentSink): string {
    const groups = this.index.commit(sink);
    const top = { schema: SNAPSHOT_SCHEMA, compiler: this.info.compiler, inputsDigest: this.info.inputsDigest, classes: this.classesDigest, groups };
    return sink.emit(canonicalJson(top), LAYER.top);
  }
}

const newTrees = (): Trees => ({ clusters: new TableTree(), endpoints: new TableTree(), listeners: new TableTree(), routes: new TableTree() });

/** The expanded content after a delta, from the content before it. */
function applyContent(
  prev: SnapshotContent,
  info: SnapshotBuildInfo,
  changes: readonly Change[],
  removed: readonly GroupId[],
  added: readonly GroupId[],
  classes: { classes: readonly ProxyClass[]; selectors: readonly ClassSelector[] } | undefined,
): SnapshotContent {
  const groups: Record<GroupId, GroupDigests> = { ...prev.groups };
  for (const id of removed) delete groups[id];
  for (const id of added) groups[id] = { clusters: {}, endpoints: {}, listeners: {}, routes: {} };
  const copies = new Map<string, Record<string, string>>();
  for (const ch of changes) {
    if (!(ch.group in groups)) continue;
    const key = `${ch.group}\n${ch.type}`;
    let table = copies.get(key);
    if (!table) copies.set(key, (table = { ...(groups[ch.group] as GroupDigests)[ch.type] }));
    if (ch.digest === undefined) delete table[ch.name];
    else table[ch.name] = ch.digest;
  }
  for (const [key, table] of copies) {
    const [group, type] = key.split('\n') as [GroupId, XdsType];
    groups[group] = { ...(groups[group] as GroupDigests), [type]: sortedRecord(table) };
  }
  const sortedGroups: Record<GroupId, GroupDigests> = {};
  for (const id of Object.keys(groups).sort()) sortedGroups[id] = groups[id] as GroupDigests;
  return {
    schema: SNAPSHOT_SCHEMA,
    compiler: info.compiler,
    inputsDigest: info.inputsDigest,
    groups: sortedGroups,
    classes: classes ? classes.classes : prev.classes,
    selectors: classes ? classes.selectors : prev.selectors,
  };
}

const sortedRecord = (r: Record<string, string>): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const k of Object.keys(r).sort()) out[k] = r[k] as string;
  return out;
};

/** Distinct resources per type (a resource in several groups counts once; same name, other bytes counts twice). */
export function snapshotCounts(content: SnapshotContent): SnapshotCounts {
  const perType = {} as Record<XdsType, number>;
  const objects = new Set<string>();
  for (const type of XDS_TYPES) {
    const seen = new Set<string>();
    for (const group of Object.values(content.groups)) {
      for (const [name, digest] of Object.entries(group[type])) {
        seen.add(`${name}\n${digest}`);
        objects.add(digest);
      }
    }
    perType[type] = seen.size;
  }
  return { ...perType, classes: content.classes.length, objects: objects.size };
}

/**
 * A BuiltSnapshot from an expanded snapshot and its objects (e.g. a snapshot compiled elsewhere):
 * every object and document, as a full build gives them.
 */
export function snapshotFromContent(content: SnapshotContent, objects: ReadonlyMap<string, Uint8Array>, hasher?: Hasher): BuiltSnapshot {
  const { digest, documents } = snapshotDocuments(content, hasher);
  const sorted = new Map<string, Uint8Array>();
  for (const d of [...objects.keys()].sort()) sorted.set(d, objects.get(d) as Uint8Array);
  return { digest, inputsDigest: content.inputsDigest, compiler: content.compiler, content, counts: snapshotCounts(content), objects: sorted, documents };
}

