/**
 * `SnapshotBuilder` keeps the last snapshot's tree so that the next snapshot costs what changed:
 * - `build(output)` is a full build; a message object it already holds is not encoded again (nor
 *   is an unchanged document hashed again); it lists every object, encoding again the unchanged
 *   ones' bytes, which the builder does not keep between builds (held-bytes.ts);
 * - `applyDelta(delta)` takes upserted/deleted resources per group and type, encodes only the
 *   upserted messages, re-checks consistency only around the changed names, rewrites only the
 *   touched leaves and their paths to the top, and returns only the new objects and documents;
 * - `rebuild(output)` compares a full output as `build` does and returns what `applyDelta` returns.
 * A delta gives exactly the digest a full build of the resulting output gives.
 */
import type { CompileOutput } from '../../compile/types.js';
import {
  assertConsistent,
  assertConsistentOnce,
  InconsistentSnapshotError,
  type ResourceChange,
} from '../consistency.js';
import type { Hasher } from '../digest.js';
import { ResourceEncoder } from '../encoder.js';
import { applyToTables } from './delta.js';
import { DeltaConsistency } from './delta-consistency.js';
import { diffOutput, fillDigests, lazyFullContent } from './full.js';
import type { Groups } from './groups.js';
import { canonicalJson } from '../../canonical-json.js';
import { sortedClasses, sortedSelectors } from '../content.js';
import { DigestSorter } from '../sorted-digests.js';
import { ContentChain, withLazyContent, type ContentStep, type LazyContent } from './lazy-content.js';
import type { ObjectSpool } from './object-spool.js';
import { SpoolingObjects } from './spooling-objects.js';
import { SnapshotTrees, type ClassesUpdate } from './trees.js';
import type { BuiltSnapshot, DeltaUpdate, SnapshotBuildInfo, SnapshotBuildOptions, SnapshotDelta } from './types.js';
import type { DocumentSink } from '../tree.js';

/** Throws InconsistentSnapshotError (consistency.ts) rather than produce a snapshot a proxy would choke on. */
export function buildSnapshot(
  output: CompileOutput,
  info: SnapshotBuildInfo,
  opts: SnapshotBuildOptions = {},
): BuiltSnapshot {
  return new SnapshotBuilder(info, opts).build(output);
}

export class SnapshotBuilder {
  readonly encoder: ResourceEncoder;
  readonly hasher: Hasher;
  private info: SnapshotBuildInfo;
  private readonly trees: SnapshotTrees;
  private readonly consistency = new DeltaConsistency();
  private readonly contents = new ContentChain();
  private current: BuiltSnapshot | undefined;
  private readonly keepObjects: boolean;
  private readonly collect: (() => void) | undefined;

  constructor(info: SnapshotBuildInfo, opts: SnapshotBuildOptions = {}) {
    this.info = {
      inputsDigest: info.inputsDigest,
      compiler: { name: info.compiler.name, version: info.compiler.version },
    };
    // Without an encoder given, none that remembers messages: the trees keep digests, not bytes.
    this.encoder = opts.encoder ?? new ResourceEncoder(opts.hasher, { cache: false });
    this.hasher = opts.hasher ?? this.encoder.hasher;
    this.trees = new SnapshotTrees(this.encoder, this.hasher);
    this.keepObjects = opts.keepObjects ?? true;
    this.collect = opts.collect;
  }

  /** The last snapshot built (with `keepObjects: false`, without its objects and documents). */
  get snapshot(): BuiltSnapshot | undefined {
    return this.current;
  }

  /**
   * A full build: every object and document is in the result. Against the previous build it is
   * computed as a delta (the output's maps are compared to the builder's copy, message objects by
   * identity, then by digest), so unchanged tables cost a comparison, not a re-serialization.
   * Given a spool (object-spool.ts), the objects' bytes go there as they are encoded, and the
   * result's `objects` reads them back from it: the caller keeps the spool open while it reads them.
   */
  build(output: CompileOutput, info?: Partial<SnapshotBuildInfo>, spool?: ObjectSpool): BuiltSnapshot {
    // Checked once, with a reader and an Envoy validator of its own: the references read and the
    // clean messages remembered die with the check (a delta checks only the resources it changes,
    // and a rebuild's full compile made new messages, which the process validator then sees; at
    // 10k, keeping them cost the watcher ~25 MB of peak RSS); then the check's data is collected.
    assertConsistentOnce(output);
    this.collect?.();
    this.updateInfo(info);
    const diff = diffOutput(this.trees.groups, output);
    this.consistency.forget();
    const classes = { classes: output.classes, selectors: output.selectors };
    const encoded = spool ? new SpoolingObjects(spool) : new Map<string, Uint8Array>();
    // Into a spool, each object is copied there as it is encoded: no bytes of its own first.
    const encodeAll = <T>(encode: () => T): T => (spool ? this.encoder.viewsDuring(encode) : encode());
    const { sink } = encodeAll(() => this.trees.commit(diff, classes, encoded, false));
    this.trees.drop(diff.removed);
    fillDigests(this.trees.groups, diff.content);

    // Complete: every document and object, not only the new ones.
    this.trees.addEveryDocument(sink);
    if (diff.unchanged > 0) encodeAll(() => this.trees.addMissingObjects(encoded));
    const objects = encoded instanceof SpoolingObjects ? encoded.sorted() : sortedObjects(encoded);
    const top = this.trees.topDocument(sink, this.info);
    const { trees } = this;
    const { compiler, inputsDigest } = this.info;
    const content = lazyFullContent(this.info, diff.content, trees.classes, trees.selectors);
    this.contents.reset(content);
    const built = withLazyContent(
      { digest: top, inputsDigest, compiler, counts: trees.counts(), objects, documents: sink.sorted() },
      content,
    );
    return this.keep(built, content);
  }

  /**
   * A full compile's output as a delta of the last snapshot (for a caller that has stored the last
   * snapshot, as the watcher has after a publish): compared with the builder's tables as `build`
   * compares them, but only the objects and documents new to this snapshot are returned, with its
   * `base` and the resources whose digest changed, as `applyDelta` returns them. The digest is the
   * one `build` gives. Without a last snapshot, `build`.
   */
  rebuild(output: CompileOutput, info?: Partial<SnapshotBuildInfo>): BuiltSnapshot {
    const base = this.current;
    if (!base) return this.build(output, info);
    assertConsistent(output);
    this.updateInfo(info);
    const { trees } = this;
    const diff = diffOutput(trees.groups, output);
    this.consistency.forget();
    const before = digestsBefore(trees.groups, diff.changes);
    const classes = changedClasses(output, trees);
    const newObjects = new Map<string, Uint8Array>();
    const { sink, contentChanges } = trees.commit(diff, classes, newObjects);
    trees.drop(diff.removed);
    const digest = trees.topDocument(sink, this.info);
    // A message compiled again with the same bytes is no change of the content.
    const changes = contentChanges.filter((ch, i) => ch.digest !== before[i]);
    const { info: current } = this;
    const newClasses = classes ? { classes: trees.classes, selectors: trees.selectors } : undefined;
    const step = { info: current, changes, removed: diff.removed, added: diff.added, classes: newClasses };
    return this.keepDelta(base, step, digest, newObjects, sink);
  }

  /**
   * Applies a delta to the last snapshot. Throws InconsistentSnapshotError (leaving the builder at
   * the last snapshot) when the result would be inconsistent.
   */
  applyDelta(delta: SnapshotDelta, update: DeltaUpdate = {}): BuiltSnapshot {
    const base = this.current;
    if (!base) throw new Error('SnapshotBuilder.applyDelta: build() a snapshot first');
    const { trees } = this;
    const classes: ClassesUpdate | undefined =
      update.classes !== undefined || update.selectors !== undefined
        ? { classes: update.classes ?? trees.classes, selectors: update.selectors ?? trees.selectors }
        : undefined;

    // 1. The tables, with an undo log; 2. consistency: around the changes (and the classes that changed).
    if (classes) this.consistency.beforeClassDelta(trees.groups, trees.classes);
    else this.consistency.beforeDelta(delta, trees.groups, trees.classes);
    const tables = applyToTables(trees.groups, delta);
    const problems = classes
      ? this.consistency.afterClassDelta(tables, trees.groups, trees.classes, classes.classes)
      : this.consistency.afterDelta(tables.changes, tables.removed);
    if (problems.length) {
      tables.undo();
      this.consistency.forget(); // it saw the changes: rebuilt from the restored tables when next needed
      throw new InconsistentSnapshotError(problems);
    }

    // 3. Objects, trees and documents.
    const newObjects = new Map<string, Uint8Array>();
    const { sink, contentChanges } = trees.commit(tables, classes, newObjects);
    trees.drop(tables.removed);
    if (update.inputsDigest !== undefined) this.info = { ...this.info, inputsDigest: update.inputsDigest };
    const digest = trees.topDocument(sink, this.info);

    const info = this.info;
    const newClasses = classes ? { classes: trees.classes, selectors: trees.selectors } : undefined;
    const step = { info, changes: contentChanges, removed: tables.removed, added: tables.added, classes: newClasses };
    return this.keepDelta(base, step, digest, newObjects, sink);
  }

  /** Keeps and returns the delta of `base` that `step` made: its new objects and documents only. */
  private keepDelta(
    base: BuiltSnapshot,
    step: ContentStep,
    digest: string,
    newObjects: ReadonlyMap<string, Uint8Array>,
    sink: DocumentSink,
  ): BuiltSnapshot {
    const content = this.contents.next(base, step);
    const built = withLazyContent(
      {
        digest,
        inputsDigest: step.info.inputsDigest,
        compiler: step.info.compiler,
        counts: this.trees.counts(),
        objects: sortedObjects(newObjects),
        documents: sink.sorted(),
        base: base.digest,
        changes: step,
      },
      content,
    );
    return this.keep(built, content);
  }

  private updateInfo(info: Partial<SnapshotBuildInfo> | undefined): void {
    if (info)
      this.info = {
        inputsDigest: info.inputsDigest ?? this.info.inputsDigest,
        compiler: info.compiler ?? this.info.compiler,
      };
  }

  /** Remembers `built` as the last snapshot (without its objects and documents unless `keepObjects`); returns it. */
  private keep(built: BuiltSnapshot, content: LazyContent): BuiltSnapshot {
    this.current = this.keepObjects ? built : withoutObjects(built, content);
    return built;
  }

  /** The compiler output the builder holds now (its own maps: do not change them). */
  output(): CompileOutput {
    return { groups: this.trees.tables(), classes: this.trees.classes, selectors: this.trees.selectors };
  }
}

/** Each change's digest in the trees before it is committed (undefined: the resource is new). */
function digestsBefore(groups: Groups, changes: readonly ResourceChange[]): (string | undefined)[] {
  return changes.map((ch) => (ch.before ? groups.get(ch.group)?.trees[ch.type]?.get(ch.name) : undefined));
}

/** The output's classes and selectors when they differ from the trees' (else undefined: their document stays). */
function changedClasses(output: CompileOutput, trees: SnapshotTrees): ClassesUpdate | undefined {
  const next = { classes: sortedClasses(output.classes), selectors: sortedSelectors(output.selectors) };
  const same = canonicalJson(next) === canonicalJson({ classes: trees.classes, selectors: trees.selectors });
  return same ? undefined : next;
}

const NO_OBJECTS: ReadonlyMap<string, Uint8Array> = new Map();

/** The snapshot as a builder remembers it when its caller keeps the objects and documents (nothing refers to `built`). */
function withoutObjects(built: BuiltSnapshot, content: LazyContent): BuiltSnapshot {
  const { digest, inputsDigest, compiler, counts, base, changes } = built;
  return withLazyContent(
    { digest, inputsDigest, compiler, counts, objects: NO_OBJECTS, documents: [], base, changes },
    content,
  );
}

/** Fewer objects (a delta's) are sorted the plain way. */
const SORT_BUCKETS_MIN = 1024;

/** Objects sorted by digest. */
function sortedObjects(objects: ReadonlyMap<string, Uint8Array>): Map<string, Uint8Array> {
  if (objects.size < SORT_BUCKETS_MIN) {
    const out = new Map<string, Uint8Array>();
    for (const d of [...objects.keys()].sort()) out.set(d, objects.get(d) as Uint8Array);
    return out;
  }
  const sorter = new DigestSorter<Uint8Array>();
  for (const [digest, bytes] of objects) sorter.add(digest, bytes);
  return sorter.toMap();
}
