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
import { ResourceEncoder, type EncodedResource } from './encoder.js';
import { resourceRefs, type ResourceRefs } from './references.js';
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

interface GroupState {
  readonly table: ResourceTable;
  readonly trees: Trees;
  doc?: { readonly text: string; readonly doc: TreeDocument };
}

/** A delta chain longer than this materializes the older content, so unread snapshots do not pile up. */
const MAX_CHAIN = 32;

/** What a delta did to the expanded content (applied when the content is first read). */
interface ContentStep {
  readonly info: SnapshotBuildInfo;
  readonly changes: readonly Change[];
  readonly removed: readonly GroupId[];
  readonly added: readonly GroupId[];
  readonly classes: { readonly classes: readonly ProxyClass[]; readonly selectors: readonly ClassSelector[] } | undefined;
}

/**
 * A delta snapshot's content: the content of the snapshot before it plus its step, computed on
 * first read. Reading it applies every step since the nearest computed content at once, so each
 * table they touch is copied once however long the chain (see applySteps).
 */
class LazyContent {
  private value: SnapshotContent | undefined;

  constructor(
    private prev: LazyContent | SnapshotContent | undefined,
    private step: ContentStep | undefined,
  ) {}

  get(): SnapshotContent {
    if (this.value) return this.value;
    const steps: ContentStep[] = [this.step as ContentStep];
    let at = this.prev;
    while (at instanceof LazyContent && at.value === undefined) {
      steps.push(at.step as ContentStep);
      at = at.prev;
    }
    const base = at instanceof LazyContent ? (at.value as SnapshotContent) : (at as SnapshotContent);
    this.value = applySteps(base, steps.reverse());
    this.prev = undefined;
    this.step = undefined;
    return this.value;
  }
}

export class SnapshotBuilder {
  readonly encoder: ResourceEncoder;
  readonly hasher: Hasher;
  private info: SnapshotBuildInfo;
  private readonly groups = new Map<GroupId, GroupState>();
  private readonly index = new TableTree(LAYER.index);
  private classes: readonly ProxyClass[] = [];
  private selectors: readonly ClassSelector[] = [];
  private classesDoc: TreeDocument | undefined;
  private readonly pairs = { clusters: new Map<string, number>(), endpoints: new Map<string, number>(), listeners: new Map<string, number>(), routes: new Map<string, number>() };
  private readonly objectRefs = new Map<string, { count: number; encoded: EncodedResource }>();
  /** Parts of the composite objects in objectRefs (composite.ts): digest → how many composites hold it. */
  private readonly partRefs = new Map<string, { count: number; bytes: Uint8Array }>();
  private consistency: ConsistencyIndex | undefined;
  private current: BuiltSnapshot | undefined;
  private chain = 0;
  /** The last delta's content (undefined after a full build, whose content is computed). */
  private lazy: LazyContent | undefined;

  constructor(info: SnapshotBuildInfo, opts: SnapshotBuildOptions = {}) {
    this.info = { inputsDigest: info.inputsDigest, compiler: { name: info.compiler.name, version: info.compiler.version } };
    this.encoder = opts.encoder ?? new ResourceEncoder(opts.hasher);
    this.hasher = opts.hasher ?? this.encoder.hasher;
  }

  /** The last snapshot built. */
  get snapshot(): BuiltSnapshot | undefined {
    return this.current;
  }

  /**
   * A full build: every object and document is in the result. Against the previous build it is
   * computed as a delta (the output's maps are compared to the builder's copy, message objects by
   * identity, then by digest), so unchanged tables cost a comparison, not a re-serialization.
   */
  build(output: CompileOutput, info?: Partial<SnapshotBuildInfo>): BuiltSnapshot {
    assertConsistent(output);
    if (info) this.info = { inputsDigest: info.inputsDigest ?? this.info.inputsDigest, compiler: info.compiler ?? this.info.compiler };
    const changes: ResourceChange[] = [];
    const removed: GroupId[] = [];
    const added: GroupId[] = [];
    const content: Record<GroupId, GroupDigests> = {};
    for (const id of [...this.groups.keys()]) if (!output.groups.has(id)) removed.push(id);
    for (const id of removed) {
      const gone = (this.groups.get(id) as GroupState).table;
      for (const type of XDS_TYPES) for (const [name, before] of gone[type] as Map<string, object>) changes.push({ group: id, type, name, before, after: undefined });
    }
    for (const id of [...output.groups.keys()].sort()) {
      const next = output.groups.get(id) as ResourceTable;
      let state = this.groups.get(id);
      if (!state) {
        added.push(id);
        this.groups.set(id, (state = { table: emptyTable(), trees: newTrees() }));
      }
      const digests = {} as Record<XdsType, Record<string, string>>;
      for (const type of XDS_TYPES) {
        const mine = state.table[type] as Map<string, object>;
        const theirs = next[type] as ReadonlyMap<string, object>;
        const tree = state.trees[type];
        const byName: Record<string, string> = {};
        for (const name of [...theirs.keys()].sort()) {
          const after = theirs.get(name) as object;
          const before = mine.get(name);
          if (before !== after) {
            mine.set(name, after);
            changes.push({ group: id, type, name, before, after });
            byName[name] = this.encoder.encode(type, after).digest;
          } else byName[name] = tree.get(name) as string;
        }
        if (mine.size !== theirs.size) {
          for (const [name, before] of mine) {
            if (theirs.has(name)) continue;
            mine.delete(name);
            changes.push({ group: id, type, name, before, after: undefined });
          }
        }
        digests[type] = byName;
      }
      content[id] = digests;
    }
    this.consistency = undefined;
    this.chain = 0;
    this.lazy = undefined;
    const { sink } = this.commit(changes, removed, added, { classes: output.classes, selectors: output.selectors }, false);
    for (const id of removed) this.groups.delete(id);

    // Complete: every document and object, not only the new ones.
    for (const state of this.groups.values()) {
      for (const type of XDS_TYPES) state.trees[type].documents((d) => sink.add(d));
      if (state.doc) sink.add(state.doc.doc);
    }
    this.index.documents((d) => sink.add(d));
    if (this.classesDoc) sink.add(this.classesDoc);
    const all = new Map<string, Uint8Array>();
    for (const [d, r] of this.objectRefs) all.set(d, r.encoded.bytes);
    for (const [d, r] of this.partRefs) if (!all.has(d)) all.set(d, r.bytes);
    const objects = sortedObjects(all);
    const top = this.topDocument(sink);
    const snapshot: SnapshotContent = { schema: SNAPSHOT_SCHEMA, compiler: this.info.compiler, inputsDigest: this.info.inputsDigest, groups: content, classes: this.classes, selectors: this.selectors };
    this.current = { digest: top, inputsDigest: this.info.inputsDigest, compiler: this.info.compiler, content: snapshot, counts: this.counts(), objects, documents: sink.sorted() };
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
    // The index is built when first needed, from the tables before this delta: a delta that only
    // replaces resources by ones with the same references (an endpoint change) does not need it.
    if (!classesChange && !this.consistency && this.mayBreakConsistency(delta)) this.consistency = new ConsistencyIndex(this.tables(), this.classes);

    // 1. The tables, with an undo log.
    const changes: ResourceChange[] = [];
    const removed: GroupId[] = [];
    const added: GroupId[] = [];
    const undo: (() => void)[] = [];
    for (const id of Object.keys(delta).sort()) {
      const groupDelta = delta[id];
      let state = this.groups.get(id);
      if (groupDelta === null || groupDelta === undefined) {
        if (!state) continue;
        for (const type of XDS_TYPES) for (const [name, before] of state.table[type] as Map<string, object>) changes.push({ group: id, type, name, before, after: undefined });
        removed.push(id);
        continue;
      }
      if (!state) {
        this.groups.set(id, (state = { table: emptyTable(), trees: newTrees() }));
        undo.push(() => this.groups.delete(id));
        added.push(id);
      }
      for (const type of XDS_TYPES) {
        const typeDelta = groupDelta[type] as TypeDelta<object> | undefined;
        if (!typeDelta) continue;
        const map = state.table[type] as Map<string, object>;
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
    let problems: ConsistencyProblem[];
    if (classesChange) {
      const tables = this.tables();
      for (const id of removed) tables.delete(id);
      problems = checkConsistency({ groups: tables, classes: update.classes ?? this.classes, selectors: update.selectors ?? this.selectors });
      this.consistency = undefined;
    } else if (this.consistency) {
      problems = this.consistency.update(changes, removed);
    } else {
      problems = []; // see mayBreakConsistency; an index built later reads these tables
    }
    if (problems.length) {
      for (let i = undo.length - 1; i >= 0; i--) (undo[i] as () => void)();
      this.consistency = undefined; // it saw the changes: rebuilt from the restored tables when next needed
      throw new InconsistentSnapshotError(problems);
    }

    // 3. Objects, trees and documents.
    const { sink, newObjects, contentChanges } = this.commit(changes, removed, added, classesChange ? { classes: update.classes ?? this.classes, selectors: update.selectors ?? this.selectors } : undefined);
    for (const id of removed) this.groups.delete(id);
    if (update.inputsDigest !== undefined) this.info = { ...this.info, inputsDigest: update.inputsDigest };
    const digest = this.topDocument(sink);

    // The chain of unread delta contents stays short.
    if (++this.chain > MAX_CHAIN) {
      this.lazy?.get();
      this.chain = 1;
    }
    const objects = sortedObjects(newObjects);
    const info = this.info;
    const newClasses = classesChange ? { classes: this.classes, selectors: this.selectors } : undefined;
    const content = new LazyContent(this.lazy ?? base.content, { info, changes: contentChanges, removed, added, classes: newClasses });
    this.lazy = content;
    this.current = {
      digest,
      inputsDigest: info.inputsDigest,
      compiler: info.compiler,
      get content(): SnapshotContent {
        return content.get();
      },
      counts: this.counts(),
      objects,
      documents: sink.sorted(),
      base: base.digest,
    };
    return this.current;
  }

  /**
   * Whether a delta can make a consistent snapshot inconsistent. One that only replaces existing
   * resources by ones with the same references cannot: a duplicate needs a new name, a missing
   * reference a new or changed referrer or a deleted target, an undecodable filter a changed
   * reference list. Conservative: anything else (a new or deleted name or group) says yes.
   */
  private mayBreakConsistency(delta: SnapshotDelta): boolean {
    for (const id of Object.keys(delta)) {
      const groupDelta = delta[id];
      const state = this.groups.get(id);
      if (!groupDelta || !state) return true;
      for (const type of XDS_TYPES) {
        const typeDelta = groupDelta[type] as TypeDelta<object> | undefined;
        if (!typeDelta) continue;
        const map = state.table[type] as Map<string, object>;
        const deletes = typeDelta.deletes;
        if (deletes !== undefined) {
          if (!(deletes instanceof Set || Array.isArray(deletes))) return true; // may be a one-shot iterator
          for (const name of deletes as Iterable<string>) if (map.has(name)) return true;
        }
        for (const [name, after] of typeDelta.upserts ?? []) {
          const before = map.get(name);
          if (before === undefined) return true;
          if (before !== after && !sameRefs(resourceRefs(type, before), resourceRefs(type, after))) return true;
        }
      }
    }
    return false;
  }

  /** The compiler output the builder holds now (its own maps: do not change them). */
  output(): CompileOutput {
    return { groups: this.tables(), classes: this.classes, selectors: this.selectors };
  }

  private tables(): Map<GroupId, ResourceTable> {
    const out = new Map<GroupId, ResourceTable>();
    for (const [id, state] of this.groups) out.set(id, state.table);
    return out;
  }

  /**
   * Encodes the changed messages, updates counts, trees, group documents and the group index
   * (the tables already hold the changes; removed groups are dropped by the caller afterwards).
   */
  private commit(
    changes: readonly ResourceChange[],
    removed: readonly GroupId[],
    added: readonly GroupId[],
    classes: { classes: readonly ProxyClass[]; selectors: readonly ClassSelector[] } | undefined,
    recordContent = true,
  ): { sink: DocumentSink; newObjects: Map<string, Uint8Array>; contentChanges: Change[] } {
    const sink = new DocumentSink(this.hasher);
    const newObjects = new Map<string, Uint8Array>();
    const contentChanges: Change[] = [];
    const touched = new Set<GroupId>(added);
    for (const ch of changes) {
      const tree = (this.groups.get(ch.group) as GroupState).trees[ch.type];
      const old = ch.before ? tree.get(ch.name) : undefined;
      let digest: string | undefined;
      if (ch.after) {
        const encoded = this.encoder.encode(ch.type, ch.after);
        digest = encoded.digest;
        if (this.count(ch.type, digest, encoded)) {
          newObjects.set(digest, encoded.bytes);
          for (const part of encoded.parts ?? []) {
            const r = this.partRefs.get(part.digest);
            if (r) r.count++;
            else {
              this.partRefs.set(part.digest, { count: 1, bytes: part.bytes });
              newObjects.set(part.digest, part.bytes);
            }
          }
        }
        tree.set(ch.name, digest);
      } else tree.delete(ch.name);
      if (old !== undefined) this.count(ch.type, old, undefined);
      touched.add(ch.group);
      if (recordContent) contentChanges.push({ group: ch.group, type: ch.type, name: ch.name, digest });
    }
    for (const id of removed) {
      this.index.delete(id);
      touched.delete(id);
    }
    for (const id of [...touched].sort()) {
      const state = this.groups.get(id) as GroupState;
      const roots = {} as Record<XdsType, string>;
      for (const type of XDS_TYPES) roots[type] = state.trees[type].commit(sink).digest;
      const text = canonicalJson(roots);
      if (state.doc?.text === text) continue;
      state.doc = { text, doc: sink.emit(text, LAYER.groupDoc) };
      this.index.set(id, state.doc.doc.digest);
    }
    if (classes) {
      const sortedC = sortedClasses(classes.classes);
      const sortedS = sortedSelectors(classes.selectors);
      const doc = sink.emit(canonicalJson({ classes: sortedC, selectors: sortedS }), LAYER.classes);
      this.classes = sortedC;
      this.selectors = sortedS;
      this.classesDoc = doc;
    }
    return { sink, newObjects, contentChanges };
  }

  /**
   * Refcounts of resources per type and of objects; true when the object is new. `encoded`
   * undefined: a release. A resource's name is part of its bytes (every xDS type encodes it), so
   * distinct (name, digest) pairs of a type are its distinct digests.
   */
  private count(type: XdsType, digest: string, encoded: EncodedResource | undefined): boolean {
    const pairs = this.pairs[type];
    const p = (pairs.get(digest) ?? 0) + (encoded ? 1 : -1);
    if (p === 0) pairs.delete(digest);
    else pairs.set(digest, p);
    const o = this.objectRefs.get(digest);
    if (encoded) {
      if (o) o.count++;
      else this.objectRefs.set(digest, { count: 1, encoded });
      return o === undefined;
    }
    if (o && --o.count === 0) {
      this.objectRefs.delete(digest);
      for (const part of o.encoded.parts ?? []) {
        const r = this.partRefs.get(part.digest);
        if (r && --r.count === 0) this.partRefs.delete(part.digest);
      }
    }
    return false;
  }

  private counts(): SnapshotCounts {
    const p = this.pairs;
    return { clusters: p.clusters.size, endpoints: p.endpoints.size, listeners: p.listeners.size, routes: p.routes.size, classes: this.classes.length, objects: this.objectRefs.size };
  }

  private topDocument(sink: DocumentSink): string {
    const groups = this.index.commit(sink).digest;
    const top = { schema: SNAPSHOT_SCHEMA, compiler: this.info.compiler, inputsDigest: this.info.inputsDigest, classes: (this.classesDoc as TreeDocument).digest, groups };
    return sink.emit(canonicalJson(top), LAYER.top).digest;
  }
}

const REF_LISTS = ['routes', 'endpoints', 'clusters', 'undecodable'] as const;
const sameRefs = (a: ResourceRefs, b: ResourceRefs): boolean => a === b || REF_LISTS.every((k) => a[k].length === b[k].length && a[k].every((r, i) => r === b[k][i]));

/** Objects sorted by digest. */
function sortedObjects(objects: ReadonlyMap<string, Uint8Array>): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  for (const d of [...objects.keys()].sort()) out.set(d, objects.get(d) as Uint8Array);
  return out;
}

const newTrees = (): Trees => ({ clusters: new TableTree(), endpoints: new TableTree(), listeners: new TableTree(), routes: new TableTree() });

/**
 * The expanded content after some deltas, from the content before them: each table they touch
 * is copied once, and sorted again only when a name was added to it (an update keeps the order).
 */
function applySteps(prev: SnapshotContent, steps: readonly ContentStep[]): SnapshotContent {
  const last = steps[steps.length - 1];
  if (!last) return prev;
  const groups: Record<GroupId, GroupDigests> = { ...prev.groups };
  /** `group\ntype` → its copy, and whether a name was added to it. */
  const copies = new Map<string, { readonly table: Record<string, string>; added: boolean }>();
  const forget = (id: GroupId): void => {
    for (const type of XDS_TYPES) copies.delete(`${id}\n${type}`);
  };
  let classes: ContentStep['classes'];
  for (const step of steps) {
    for (const id of step.removed) {
      delete groups[id];
      forget(id);
    }
    for (const id of step.added) {
      groups[id] = { clusters: {}, endpoints: {}, listeners: {}, routes: {} };
      forget(id);
    }
    for (const ch of step.changes) {
      const group = groups[ch.group];
      if (!group) continue;
      const key = `${ch.group}\n${ch.type}`;
      let copy = copies.get(key);
      if (!copy) copies.set(key, (copy = { table: { ...group[ch.type] }, added: false }));
      if (ch.digest === undefined) delete copy.table[ch.name];
      else {
        if (!copy.added && !Object.hasOwn(copy.table, ch.name)) copy.added = true;
        copy.table[ch.name] = ch.digest;
      }
    }
    if (step.classes) classes = step.classes;
  }
  for (const [key, copy] of copies) {
    const [group, type] = key.split('\n') as [GroupId, XdsType];
    groups[group] = { ...(groups[group] as GroupDigests), [type]: copy.added ? sortedRecord(copy.table) : copy.table };
  }
  const sortedGroups: Record<GroupId, GroupDigests> = {};
  for (const id of Object.keys(groups).sort()) sortedGroups[id] = groups[id] as GroupDigests;
  return {
    schema: SNAPSHOT_SCHEMA,
    compiler: last.info.compiler,
    inputsDigest: last.info.inputsDigest,
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

