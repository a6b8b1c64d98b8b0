/**
 * The snapshot's Merkle tree as the builder keeps it between snapshots: per group, one TableTree
 * per type and the group document; the group index; the classes document; the top document.
 * `commit` brings it in line with changed tables, rewriting only the touched leaves and their
 * paths to the top.
 */
import type { ClassSelector, GroupId, ProxyClass } from '../../compile/types.js';
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import { canonicalJson } from '../../canonical-json.js';
import type { ResourceChange } from '../consistency.js';
import { SNAPSHOT_SCHEMA, sortedClasses, sortedSelectors } from '../content.js';
import { utf8Bytes, type Hasher } from '../digest.js';
import type { ResourceEncoder } from '../encoder.js';
import { DocumentSink, LAYER, TableTree, type TreeDocument } from '../tree.js';
import { tablesOf, type Groups, type GroupState, type TableChanges } from './groups.js';
import type { ContentChange } from './lazy-content.js';
import { addObjects } from './held-bytes.js';
import { ObjectRefs } from './refcounts.js';
import type { ObjectTarget } from './spooling-objects.js';
import type { SnapshotBuildInfo, SnapshotCounts } from './types.js';

export interface ClassesUpdate {
  readonly classes: readonly ProxyClass[];
  readonly selectors: readonly ClassSelector[];
}

export interface Committed {
  readonly sink: DocumentSink;
  /** Each change's new digest; empty unless `forDelta`. */
  readonly contentChanges: ContentChange[];
}

export class SnapshotTrees {
  readonly groups: Groups = new Map();
  readonly refs = new ObjectRefs();
  private readonly index = new TableTree(LAYER.index);
  /** The tree of every empty table no entry was ever set in (never set: it stays empty). */
  private readonly emptyTree = new TableTree();
  private sortedClasses: readonly ProxyClass[] = [];
  private sortedSelectors: readonly ClassSelector[] = [];
  private classesDoc: TreeDocument | undefined;

  constructor(
    private readonly encoder: ResourceEncoder,
    private readonly hasher: Hasher,
  ) {}

  get classes(): readonly ProxyClass[] {
    return this.sortedClasses;
  }

  get selectors(): readonly ClassSelector[] {
    return this.sortedSelectors;
  }

  /**
   * Encodes the changed messages, updates refcounts, trees, group documents and the group index
   * (the tables already hold the changes; removed groups are dropped by `drop` afterwards).
   * Adds to `objects`, with `forDelta`, the objects new to the snapshot (and new parts of
   * composites), and lists each change's digest; else every object the commit encoded, with its
   * parts (a full build adds those of the unchanged resources: addMissingObjects).
   */
  commit(
    { changes, removed, added }: TableChanges,
    classes: ClassesUpdate | undefined,
    objects: ObjectTarget,
    forDelta = true,
  ): Committed {
    const sink = new DocumentSink(this.hasher);
    const contentChanges: ContentChange[] = [];
    const touched = new Set<GroupId>(added);
    for (const ch of changes) {
      const digest = this.commitChange(ch, objects, forDelta);
      touched.add(ch.group);
      if (forDelta) contentChanges.push({ group: ch.group, type: ch.type, name: ch.name, digest });
    }
    for (const id of removed) {
      this.index.delete(id);
      touched.delete(id);
    }
    for (const id of [...touched].sort()) this.commitGroup(id, sink);
    if (classes) this.commitClasses(classes, sink);
    return { sink, contentChanges };
  }

  /** Forgets the groups a commit removed from the index. */
  drop(removed: readonly GroupId[]): void {
    for (const id of removed) this.groups.delete(id);
  }

  /** Emits the top document and returns its digest: the snapshot's. */
  topDocument(sink: DocumentSink, info: SnapshotBuildInfo): string {
    return emitTop(sink, info, (this.classesDoc as TreeDocument).digest, this.index.commit(sink).digest);
  }

  /** Adds every document below the top one to `sink`, not only the ones the last commit wrote. */
  addEveryDocument(sink: DocumentSink): void {
    for (const state of this.groups.values()) {
      for (const type of XDS_TYPES) (state.trees[type] ?? this.emptyTree).documents((d) => sink.add(d));
      if (state.doc) sink.add({ digest: state.doc.digest, bytes: utf8Bytes(state.doc.text), layer: LAYER.groupDoc });
    }
    this.index.documents((d) => sink.add(d));
    if (this.classesDoc) sink.add(this.classesDoc);
  }

  /**
   * Adds to `objects` each object (and its parts) the snapshot holds and `objects` lacks, encoded
   * again from its message: a full build's resources that did not change (held without bytes).
   */
  addMissingObjects(objects: ObjectTarget): void {
    for (const state of this.groups.values()) {
      for (const type of XDS_TYPES) {
        const tree = state.trees[type];
        for (const [name, message] of state.table[type] as ReadonlyMap<string, object>)
          if (!objects.has(tree?.get(name) as string)) addObjects(objects, this.encoder.encode(type, message));
      }
    }
  }

  counts(): SnapshotCounts {
    const { clusters, endpoints, listeners, routes, objects } = this.refs.sizes();
    return { clusters, endpoints, listeners, routes, classes: this.sortedClasses.length, objects };
  }

  tables(): ReturnType<typeof tablesOf> {
    return tablesOf(this.groups);
  }

  /**
   * The change's object held (without its bytes: held-bytes.ts), its tree entry set; returns its new
   * digest (undefined: deleted). Its bytes go to `objects` when new to the snapshot, or always (`!onlyNew`).
   */
  private commitChange(ch: ResourceChange, objects: ObjectTarget, onlyNew: boolean): string | undefined {
    const { trees } = this.groups.get(ch.group) as GroupState;
    const tree = (trees[ch.type] ??= new TableTree());
    const old = ch.before ? tree.get(ch.name) : undefined;
    let digest: string | undefined;
    if (ch.after) {
      const encoded = this.encoder.encode(ch.type, ch.after);
      digest = encoded.digest;
      if (onlyNew) this.refs.hold(ch.type, encoded, objects);
      else {
        this.refs.hold(ch.type, encoded);
        addObjects(objects, encoded);
      }
      tree.set(ch.name, digest);
    } else tree.delete(ch.name);
    // Released after the new one is held: an unchanged digest keeps its object.
    if (old !== undefined) this.refs.release(ch.type, old);
    return digest;
  }

  private commitGroup(id: GroupId, sink: DocumentSink): void {
    const state = this.groups.get(id) as GroupState;
    const roots = {} as Record<XdsType, string>;
    for (const type of XDS_TYPES) roots[type] = (state.trees[type] ?? this.emptyTree).commit(sink).digest;
    const text = groupDocumentText(roots);
    if (state.doc?.text === text) return;
    state.doc = { text, digest: sink.emit(text, LAYER.groupDoc).digest };
    this.index.set(id, state.doc.digest);
  }

  private commitClasses(classes: ClassesUpdate, sink: DocumentSink): void {
    const emitted = emitClasses(classes, sink);
    this.classesDoc = emitted.doc;
    this.sortedClasses = emitted.classes;
    this.sortedSelectors = emitted.selectors;
  }
}

/** The classes document (classes and selectors sorted); returns it with the sorted lists. */
export function emitClasses(
  classes: ClassesUpdate,
  sink: DocumentSink,
): ClassesUpdate & { readonly doc: TreeDocument } {
  const sorted = { classes: sortedClasses(classes.classes), selectors: sortedSelectors(classes.selectors) };
  return { ...sorted, doc: sink.emit(canonicalJson(sorted), LAYER.classes) };
}

/** A group's document (its tables' roots). */
export const emitGroupDocument = (roots: Readonly<Record<XdsType, string>>, sink: DocumentSink): TreeDocument =>
  sink.emit(groupDocumentText(roots), LAYER.groupDoc);

/** `canonicalJson(roots)`, written without walking an object (the types are its keys in sorted order). */
export const groupDocumentText = (roots: Readonly<Record<XdsType, string>>): string =>
  `{"clusters":${JSON.stringify(roots.clusters)},"endpoints":${JSON.stringify(roots.endpoints)},` +
  `"listeners":${JSON.stringify(roots.listeners)},"routes":${JSON.stringify(roots.routes)}}`;

/** Emits the top document and returns its digest: the snapshot's. */
export function emitTop(sink: DocumentSink, info: SnapshotBuildInfo, classes: string, groups: string): string {
  const top = { schema: SNAPSHOT_SCHEMA, compiler: info.compiler, inputsDigest: info.inputsDigest, classes, groups };
  return sink.emit(canonicalJson(top), LAYER.top).digest;
}
