/**
 * Consistency of a delta's result, checked only around the changed names: a ConsistencyIndex
 * (consistency.ts) built when first needed and kept up to date across deltas, or a full check
 * when the proxy classes change.
 */
import type { ClassSelector, GroupId, ProxyClass } from '../../compile/types.js';
import { XDS_TYPES } from '../../xds/type-urls.js';
import {
  checkConsistency,
  compareProblems,
  ConsistencyIndex,
  envoyProblems,
  type ConsistencyProblem,
  type ResourceChange,
} from '../consistency.js';
import { proxylessOnlyGroups } from '../envoy-acceptance.js';
import { resourceRefs, type ResourceRefs } from '../references.js';
import { tablesOf, type Groups } from './groups.js';
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
    if (!this.index && mayBreakConsistency(delta, groups)) this.index = new ConsistencyIndex(tablesOf(groups), classes);
  }

  /** The problems the delta's changes (now in the tables) introduce: references, names, and resources Envoy would reject. */
  afterDelta(changes: readonly ResourceChange[], removed: readonly GroupId[]): ConsistencyProblem[] {
    // Without an index, see mayBreakConsistency; an index built later reads these tables.
    const problems = this.index ? this.index.update(changes, removed) : [];
    const rejected: ConsistencyProblem[] = [];
    const shared = new Set<object>();
    for (const ch of changes)
      if (ch.after)
        rejected.push(...envoyProblems(ch.group, ch.type, ch.name, ch.after, this.proxyless.has(ch.group), shared));
    return rejected.length ? [...problems, ...rejected].sort(compareProblems) : problems;
  }

  /** With new classes: every problem of the tables (less the removed groups), checked in full. */
  checkAll(
    groups: Groups,
    removed: readonly GroupId[],
    classes: { readonly classes: readonly ProxyClass[]; readonly selectors: readonly ClassSelector[] },
  ): ConsistencyProblem[] {
    const tables = tablesOf(groups);
    for (const id of removed) tables.delete(id);
    const problems = checkConsistency({ groups: tables, classes: classes.classes, selectors: classes.selectors });
    this.index = undefined;
    return problems;
  }
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
        if (before !== after && !sameRefs(resourceRefs(type, before), resourceRefs(type, after))) return true;
      }
    }
  }
  return false;
}

const REF_LISTS = ['routes', 'endpoints', 'clusters', 'undecodable'] as const;
const sameRefs = (a: ResourceRefs, b: ResourceRefs): boolean =>
  a === b || REF_LISTS.every((k) => a[k].length === b[k].length && a[k].every((r, i) => r === b[k][i]));
