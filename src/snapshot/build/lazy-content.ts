/**
 * A delta snapshot's expanded content, computed only when read: the content before the delta
 * plus what the delta did to it. Reading it applies every step since the nearest computed
 * content at once, so each table they touch is copied once however long the chain.
 */
import type { GroupId } from '../../compile/types.js';
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import { SNAPSHOT_SCHEMA, type GroupDigests, type SnapshotContent } from '../content.js';
import type { BuiltSnapshot, ContentStep } from './types.js';

export type { ContentChange, ContentStep } from './types.js';

/**
 * How much of unread delta contents a chain keeps before it materializes the older content, so
 * unread snapshots do not pile up: its steps, and their entries (changes, added and removed
 * groups, a new class list counting one per class). Bounded by what the steps hold rather than by
 * their number alone: materializing copies every table the steps touched (at 10k services an
 * endpoint change touches ~50k entries of the `endpoints` group and its locality groups, ~30 ms),
 * which a chain of 32 steps made every 32nd endpoint change pay.
 */
export interface ChainLimits {
  readonly steps: number;
  readonly entries: number;
}

const CHAIN_LIMITS: ChainLimits = { steps: 1024, entries: 50_000 };

const entriesOf = (step: ContentStep): number =>
  step.changes.length + step.removed.length + step.added.length + (step.classes?.classes.length ?? 0);

/** The contents of the deltas since the last full build, each built on the one before. */
export class ContentChain {
  /** The last snapshot's content (undefined before the first full build). */
  private last: LazyContent | undefined;
  private length = 0;
  private entries = 0;
  private materializations = 0;

  constructor(private readonly limits: ChainLimits = CHAIN_LIMITS) {}

  /** How many times the chain computed an older content because it reached a limit. */
  get materialized(): number {
    return this.materializations;
  }

  /** After a full build: the next delta builds on its content. */
  reset(full: LazyContent): void {
    this.length = 0;
    this.entries = 0;
    this.last = full;
  }

  /** The content of the delta applied to `base` (the last snapshot built), computed on first read. */
  next(base: BuiltSnapshot, step: ContentStep): LazyContent {
    // The chain of unread delta contents stays bounded: once it holds as much as the limits allow,
    // the content before this step is computed and the chain starts again from it.
    if (this.last && (this.length >= this.limits.steps || this.entries >= this.limits.entries)) {
      this.last.get();
      this.materializations++;
      this.length = 0;
      this.entries = 0;
    }
    this.length++;
    this.entries += entriesOf(step);
    this.last = new LazyContent(this.last ?? base.content, step);
    return this.last;
  }
}

export class LazyContent {
  private value: SnapshotContent | undefined;
  /** A full build's content: computed from what the build kept, when first read. */
  private compute: (() => SnapshotContent) | undefined;

  constructor(
    private prev: LazyContent | SnapshotContent | undefined,
    private step: ContentStep | undefined,
  ) {}

  /** A full build's content, `compute`d on first read (a delta built on it does not read it). */
  static computed(compute: () => SnapshotContent): LazyContent {
    const root = new LazyContent(undefined, undefined);
    root.compute = compute;
    return root;
  }

  get(): SnapshotContent {
    if (this.value) return this.value;
    if (this.compute) {
      this.value = this.compute();
      this.compute = undefined;
      return this.value;
    }
    const steps: ContentStep[] = [this.step as ContentStep];
    let at = this.prev;
    while (at instanceof LazyContent && at.value === undefined && at.compute === undefined) {
      steps.push(at.step as ContentStep);
      at = at.prev;
    }
    const base = at instanceof LazyContent ? at.get() : (at as SnapshotContent);
    this.value = applySteps(base, steps.reverse());
    this.prev = undefined;
    this.step = undefined;
    return this.value;
  }
}

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

/** What a built snapshot holds besides its content (`base` and `changes` for a delta). */
export type BuiltFields = Omit<BuiltSnapshot, 'content' | 'base' | 'changes'> & {
  readonly base?: string | undefined;
  readonly changes?: ContentStep | undefined;
};

/** A built snapshot whose `content` is `content`'s, expanded when first read. */
export function withLazyContent(fields: BuiltFields, content: LazyContent): BuiltSnapshot {
  const { digest, inputsDigest, compiler, counts, objects, documents, base, changes } = fields;
  return {
    digest,
    inputsDigest,
    compiler,
    get content(): SnapshotContent {
      return content.get();
    },
    counts,
    objects,
    documents,
    ...(base !== undefined ? { base } : {}),
    ...(changes ? { changes } : {}),
  };
}
