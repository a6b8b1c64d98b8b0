/**
 * Snapshot consistency, checked per proxy class (the union of its groups), as go-control-plane's
 * `Consistent()` does per node: no name twice in one type, and every RDS route config, EDS
 * service and cluster that a resource refers to is present. An inconsistent snapshot makes
 * Envoy wait forever for a missing resource (or reject an update), so it is never published.
 *
 * Cost: O(resources + references) once, plus per class O(Σ over its groups of the distinct
 * "holder sets" involved), never O(classes × resources):
 * - every (type, name) gets the set of groups holding it, interned: names held by the same groups
 *   share one holder set;
 * - a reference a group satisfies itself is settled for every class; the others are bucketed per
 *   group by the holder set of their target, and a class checks one bucket with one intersection
 *   of two small sets (the holder set and the class's groups);
 * - a duplicate needs two holders of one name in a class: per class, each group adds one to the
 *   shared holder sets it belongs to, and a set reaching two is a duplicate.
 * `ConsistencyIndex` keeps holders and reverse references so a delta re-checks only the changed
 * names: references from upserted resources, references to deleted names, and new names.
 */
import type { CompileOutput, GroupId, ResourceTable } from '../compile/types.js';
import { XDS_TYPES, type XdsType } from '../xds/type-urls.js';
import { resourceRefs } from './references.js';

export type ConsistencyCode = 'duplicate-name' | 'missing-route' | 'missing-endpoints' | 'missing-cluster' | 'unknown-group' | 'undecodable-filter';

export interface ConsistencyProblem {
  readonly classId: string;
  readonly code: ConsistencyCode;
  /** The resource with the problem (for `unknown-group`: the group id, type omitted). */
  readonly type?: XdsType;
  readonly name: string;
  /** The missing or duplicated name. */
  readonly ref?: string;
  readonly message: string;
}

export class InconsistentSnapshotError extends Error {
  override readonly name = 'InconsistentSnapshotError';
  constructor(readonly problems: readonly ConsistencyProblem[]) {
    const shown = problems.slice(0, 20).map((p) => `  ${p.message}`);
    if (problems.length > shown.length) shown.push(`  … and ${problems.length - shown.length} more`);
    super(`inconsistent snapshot (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${shown.join('\n')}`);
  }
}

type RefKind = 'routes' | 'endpoints' | 'clusters';
const REF_KINDS: readonly RefKind[] = ['routes', 'endpoints', 'clusters'];
const MISSING: Record<RefKind, { code: ConsistencyCode; what: string }> = {
  routes: { code: 'missing-route', what: 'route config' },
  endpoints: { code: 'missing-endpoints', what: 'ClusterLoadAssignment' },
  clusters: { code: 'missing-cluster', what: 'cluster' },
};
const SINGULAR: Record<XdsType, string> = { clusters: 'cluster', endpoints: 'ClusterLoadAssignment', listeners: 'listener', routes: 'route config' };

interface Ref {
  readonly type: XdsType;
  readonly name: string;
  readonly ref: string;
}

/** References of one group whose target is provided by exactly the groups in `providers`. */
interface RefBucket {
  readonly providers: readonly GroupId[];
  readonly refs: Ref[];
}

interface GroupRefs {
  readonly buckets: { [K in RefKind]: RefBucket[] };
  readonly undecodable: Ref[];
}

export function checkConsistency(output: CompileOutput): ConsistencyProblem[] {
  // name → groups that hold it, per type
  const providers = {} as Record<XdsType, Map<string, GroupId[]>>;
  for (const type of XDS_TYPES) {
    const index = new Map<string, GroupId[]>();
    for (const [id, table] of output.groups) {
      for (const name of table[type].keys()) {
        const list = index.get(name);
        if (list) list.push(id);
        else index.set(name, [id]);
      }
    }
    providers[type] = index;
  }

  const shared: { type: XdsType; name: string; holders: GroupId[] }[] = [];
  for (const type of XDS_TYPES) for (const [name, holders] of providers[type]) if (holders.length > 1) shared.push({ type, name, holders });

  const groupRefs = new Map<GroupId, GroupRefs>();
  for (const [id, table] of output.groups) groupRefs.set(id, collectGroupRefs(table, providers));

  const problems: ConsistencyProblem[] = [];
  for (const cls of output.classes) {
    const inClass = new Set(cls.groups);
    for (const g of cls.groups) {
      if (!output.groups.has(g)) problems.push({ classId: cls.id, code: 'unknown-group', name: g, message: `class ${cls.id}: group ${g} does not exist` });
    }
    for (const { type, name, holders } of shared) {
      const here = holders.filter((h) => inClass.has(h));
      if (here.length > 1) {
        problems.push({ classId: cls.id, code: 'duplicate-name', type, name, ref: name, message: `class ${cls.id}: ${SINGULAR[type]} ${name} is defined in several groups (${here.join(', ')})` });
      }
    }
    for (const g of new Set(cls.groups)) {
      const refs = groupRefs.get(g);
      if (!refs) continue;
      for (const r of refs.undecodable) {
        problems.push({ classId: cls.id, code: 'undecodable-filter', type: r.type, name: r.name, ref: r.ref, message: `class ${cls.id}: ${SINGULAR[r.type]} ${r.name} has an undecodable ${r.ref}` });
      }
      for (const kind of REF_KINDS) {
        for (const bucket of refs.buckets[kind]) {
          if (bucket.providers.some((p) => inClass.has(p))) continue;
          for (const r of bucket.refs) {
            problems.push({
              classId: cls.id,
              code: MISSING[kind].code,
              type: r.type,
              name: r.name,
              ref: r.ref,
              message: `class ${cls.id}: ${SINGULAR[r.type]} ${r.name} refers to ${MISSING[kind].what} ${JSON.stringify(r.ref)}, which the class does not have`,
            });
          }
        }
      }
    }
  }
  return problems.sort(compareProblems);
}

/** Throws InconsistentSnapshotError when the output has any problem. */
export function assertConsistent(output: CompileOutput): void {
  const problems = checkConsistency(output);
  if (problems.length) throw new InconsistentSnapshotError(problems);
}

function collectGroupRefs(table: ResourceTable, providers: Record<XdsType, Map<string, GroupId[]>>): GroupRefs {
  const buckets = { routes: new Map<string, RefBucket>(), endpoints: new Map<string, RefBucket>(), clusters: new Map<string, RefBucket>() };
  const undecodable: Ref[] = [];
  for (const type of XDS_TYPES) {
    for (const [name, message] of table[type] as Map<string, object>) {
      const refs = resourceRefs(type, message);
      for (const u of refs.undecodable) undecodable.push({ type, name, ref: u });
      for (const kind of REF_KINDS) {
        for (const ref of refs[kind]) {
          const holders = providers[kind].get(ref) ?? [];
          const key = holders.join('\n');
          let bucket = buckets[kind].get(key);
          if (!bucket) buckets[kind].set(key, (bucket = { providers: holders, refs: [] }));
          bucket.refs.push({ type, name, ref });
        }
      }
    }
  }
  return { buckets: { routes: [...buckets.routes.values()], endpoints: [...buckets.endpoints.values()], clusters: [...buckets.clusters.values()] }, undecodable };
}

const PROBLEM_KEYS = ['classId', 'code', 'type', 'name', 'ref'] as const;

function compareProblems(a: ConsistencyProblem, b: ConsistencyProblem): number {
  for (const k of PROBLEM_KEYS) {
    const x = a[k] ?? '';
    const y = b[k] ?? '';
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}
