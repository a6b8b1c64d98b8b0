/**
 * Consistency of a delta's result, checked only around the changed names: a ConsistencyIndex
 * (consistency.ts) built when first needed and kept up to date across deltas; when the proxy
 * classes change, also each class that is new or whose groups changed, on its own.
 */
import type { GroupId, ProxyClass } from '../../compile/types.js';
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import {
  compareProblems,
  ConsistencyIndex,
  envoyProblems,
  type ConsistencyProblem,
  type ResourceChange,
} from '../consistency.js';
import { proxylessOnlyGroups } from '../envoy-acceptance.js';
import { resourceRefParts, resourceRefs, type RefPart, type ResourceRefs } from '../../xds/references.js';
import { tablesOf, type Groups, type TableChanges } from './groups.js';
import type { SnapshotDelta, TypeDelta } from './types.js';

export class DeltaConsistency {
  private index: ConsistencyIndex | undefined;
  /** Groups only proxyless classes load, for the classes of the last beforeDelta. */
  private proxyless: ReadonlySet<GroupId> = new Set();
  private proxylessOf: readonly ProxyClass[] | undefined;

  /** The tables changed behind the index (a full build, a refused delta): rebuilt when next needed. */
  forget(): void {
    this.index = undefined;
  }

  /**
   * Call before the delta reaches the tables. The index is built when first needed, from the
   * tables before this delta: a delta that only replaces resources by ones with the same
   * references (an endpoint change) does not need it.
   */
  beforeDelta(delta: SnapshotDelta, groups: Groups, classes: readonly ProxyClass[]): void {
    if (this.proxylessOf !== classes) {
      this.proxyless = proxylessOnlyGroups(classes);
      this.proxylessOf = classes;
    }
    if (!this.index && mayBreakConsistency(delta, groups)) this.index = indexOf(groups, classes);
  }

  /** The problems the delta's changes (now in the tables) introduce: references, names, and resources Envoy would reject. */
  afterDelta(changes: readonly ResourceChange[], removed: readonly GroupId[]): ConsistencyProblem[] {
    // Without an index, see mayBreakConsistency; an index built later reads these tables.
    const problems = this.index ? this.index.update(changes, removed) : [];
    return withRejected(
      problems,
      this.rejected(changes, () => false),
    );
  }

  /** Call before a delta with new classes reaches the tables: the index is built from them if it was not kept. */
  beforeClassDelta(groups: Groups, classes: readonly ProxyClass[]): void {
    this.index ??= indexOf(groups, classes);
  }

  /**
   * The problems a delta with new classes (`next`; `before`: the classes until now) introduces,
   * with its changes now in the tables: the index's update for the classes whose groups did not
   * change, a check of its own for each class that is new or whose groups changed, and the Envoy
   * acceptance of the changed resources and of every resource of a group that became, or stopped
   * being, loaded by gRPC clients only. The rest was consistent and nothing it depends on changed.
   */
  afterClassDelta(
    { changes, removed }: TableChanges,
    groups: Groups,
    before: readonly ProxyClass[],
    next: readonly ProxyClass[],
  ): ConsistencyProblem[] {
    const index = this.index as ConsistencyIndex;
    const gone = new Set(removed);
    const was = this.proxylessOf === before ? this.proxyless : proxylessOnlyGroups(before);
    this.proxyless = proxylessOnlyGroups(next);
    this.proxylessOf = next;
    const flipped = new Set<GroupId>();
    for (const g of was) if (!this.proxyless.has(g)) flipped.add(g);
    for (const g of this.proxyless) if (!was.has(g)) flipped.add(g);

    const renewed = changedClasses(before, next);
    index.setClasses(next);
    const problems = index.update(changes, removed).filter((p) => !renewed.has(p.classId));
    const tableOf = (g: GroupId) => (gone.has(g) ? undefined : groups.get(g)?.table);
    for (const cls of renewed.values()) problems.push(...index.checkClass(cls, tableOf));

    const rejected = this.rejected(changes, (g) => flipped.has(g));
    const shared = new Set<object>();
    for (const g of flipped) {
      const table = tableOf(g);
      if (!table) continue;
      for (const type of XDS_TYPES)
        for (const [name, message] of table[type] as Map<string, object>)
          rejected.push(...envoyProblems(g, type, name, message, this.proxyless.has(g), shared));
    }
    return withRejected(problems.sort(compareProblems), rejected);
  }

  /** The changed resources Envoy (or a gRPC client) would reject, but those of the groups `skip` says. */
  private rejected(changes: readonly ResourceChange[], skip: (g: GroupId) => boolean): ConsistencyProblem[] {
    const rejected: ConsistencyProblem[] = [];
    const shared = new Set<object>();
    for (const ch of changes)
      if (ch.after && !skip(ch.group))
        rejected.push(...envoyProblems(ch.group, ch.type, ch.name, ch.after, this.proxyless.has(ch.group), shared));
    return rejected;
  }
}

/** An index over the builder's live groups: it reads their route configs when a cluster is deleted (ConsistencyIndex). */
function indexOf(groups: Groups, classes: readonly ProxyClass[]): ConsistencyIndex {
  return new ConsistencyIndex(tablesOf(groups), classes, function* routeTables() {
    for (const [id, state] of groups) yield [id, state.table.routes] as const;
  });
}

const withRejected = (problems: ConsistencyProblem[], rejected: ConsistencyProblem[]): ConsistencyProblem[] =>
  rejected.length ? [...problems, ...rejected].sort(compareProblems) : problems;

/** The classes of `next` that are new or whose groups are not those of the class of that id in `before`, by id. */
function changedClasses(before: readonly ProxyClass[], next: readonly ProxyClass[]): Map<string, ProxyClass> {
  const old = new Map(before.map((c) => [c.id, new Set(c.groups)]));
  const out = new Map<string, ProxyClass>();
  for (const cls of next) {
    const groups = old.get(cls.id);
    const same =
      groups !== undefined && new Set(cls.groups).size === groups.size && cls.groups.every((g) => groups.has(g));
    if (!same) out.set(cls.id, cls);
  }
  return out;
}

/**
 * Whether a delta can make a consistent snapshot inconsistent. One that only replaces existing
 * resources by ones with the same references cannot: a duplicate needs a new name, a missing
 * reference a new or changed referrer or a deleted target, an undecodable filter a changed
 * reference list. Conservative: anything else (a new or deleted name or group) says yes.
 */
function mayBreakConsistency(delta: SnapshotDelta, groups: Groups): boolean {
  for (const id of Object.keys(delta)) {
    const groupDelta = delta[id];
    const state = groups.get(id);
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
        if (before !== after && !sameReferences(type, before, after)) return true;
      }
    }
  }
  return false;
}

const REF_LISTS = ['routes', 'endpoints', 'clusters', 'undecodable'] as const;
const sameRefs = (a: ResourceRefs, b: ResourceRefs): boolean =>
  a === b || REF_LISTS.every((k) => a[k].length === b[k].length && a[k].every((r, i) => r === b[k][i]));

/**
 * Whether two resources name the same references, part by part first: a route config the
 * incremental diff rebuilt keeps the virtual hosts that did not change (their parts the same
 * objects), so most parts compare by identity and no flat list of ~10k names is made per config.
 */
function sameReferences(type: XdsType, before: object, after: object): boolean {
  const a = resourceRefParts(type, before);
  const b = resourceRefParts(type, after);
  if (a.length === b.length && a.every((p, i) => p === b[i] || sameRefs(p, b[i] as RefPart))) return true;
  return sameRefs(resourceRefs(type, before), resourceRefs(type, after));
}
