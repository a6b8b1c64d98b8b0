/**
 * What EnvoyFilter patches broke in one proxy class's config: a patched or added resource Envoy
 * would reject (its protos' rules, Envoy's cross-field rules), a name a resource refers to that the
 * class no longer has (a cluster a route sends to, a route config a listener loads, the endpoints
 * of an EDS cluster), a name held twice. istiod pushes such config and Envoy NACKs it or serves 503s;
 * meshsnap never publishes it (the snapshot's own check refuses it), so the compile leaves the
 * EnvoyFilter out for that class (groups.ts) and says why.
 *
 * Only what the patches changed is checked: resources that differ from the group they were copied
 * from, and names the copies no longer hold.
 */
import { validateResource } from '../../xds/validate/index.js';
import { resourceRefs } from '../../xds/references.js';
import type { XdsType } from '../../xds/type-urls.js';
import type { GroupId, ResourceTable } from '../types.js';

const PATCHED_TYPES = ['clusters', 'listeners', 'routes'] as const;
type RefKind = 'clusters' | 'routes' | 'endpoints';

const SINGULAR: Record<XdsType, string> = {
  clusters: 'cluster',
  endpoints: 'endpoints',
  listeners: 'listener',
  routes: 'route config',
};

/** At most this many problems are said per refusal. */
const MAX_PROBLEMS = 3;

export interface ClassCheck {
  /** The class's groups, patched copies in place of what they were copied from. */
  readonly groups: readonly GroupId[];
  /** Copy → the group it was copied from; added groups (ADDs) → undefined. */
  readonly copiedFrom: ReadonlyMap<GroupId, GroupId | undefined>;
}

/** The names each group's resources refer to, by kind: read once per group (removals only). */
export class GroupReferences {
  private readonly cache = new Map<GroupId, Record<RefKind, Set<string>>>();

  constructor(private readonly tables: ReadonlyMap<GroupId, ResourceTable>) {}

  of(group: GroupId): Record<RefKind, Set<string>> {
    let refs = this.cache.get(group);
    if (refs) return refs;
    refs = { clusters: new Set(), routes: new Set(), endpoints: new Set() };
    const table = this.tables.get(group);
    if (table)
      for (const type of PATCHED_TYPES)
        for (const r of table[type].values()) {
          const own = resourceRefs(type, r);
          for (const k of ['clusters', 'routes', 'endpoints'] as const) for (const n of own[k]) refs[k].add(n);
        }
    this.cache.set(group, refs);
    return refs;
  }
}

/** The problems the patches made in one class's config (at most MAX_PROBLEMS, in a stable order); [] when none. */
export function classProblems(
  tables: ReadonlyMap<GroupId, ResourceTable>,
  { groups, copiedFrom }: ClassCheck,
  references: GroupReferences,
): string[] {
  const problems: string[] = [];
  const holds = (type: XdsType, name: string, except?: GroupId) =>
    groups.some((g) => g !== except && tables.get(g)?.[type].has(name) === true);
  for (const g of groups) {
    if (!copiedFrom.has(g)) continue;
    const table = tables.get(g);
    if (!table) continue;
    const from = copiedFrom.get(g);
    const before = from === undefined ? undefined : tables.get(from);
    for (const type of PATCHED_TYPES) {
      const was = before?.[type] as ReadonlyMap<string, object> | undefined;
      for (const [name, r] of table[type] as ReadonlyMap<string, object>) {
        if (was?.get(name) === r) continue;
        for (const v of validateResource(type, r).slice(0, MAX_PROBLEMS))
          problems.push(`${SINGULAR[type]} ${name}: ${v.path ? `${v.path}: ` : ''}${v.message} [${v.rule}]`);
        // An added name must not be another group's too (a class holds a name once).
        if (was === undefined || !was.has(name))
          if (holds(type, name, g)) problems.push(`${SINGULAR[type]} ${name} is added but the proxy has one already`);
        const refs = resourceRefs(type, r);
        for (const kind of ['clusters', 'routes', 'endpoints'] as const)
          for (const target of refs[kind])
            if (!holds(kind, target))
              problems.push(
                `${SINGULAR[type]} ${name} refers to ${SINGULAR[kind]} "${target}", which the proxy does not have`,
              );
      }
      // Names the copy no longer holds: does anything the class keeps still refer to them?
      if (was)
        for (const name of was.keys()) {
          if (table[type].has(name) || type === 'listeners') continue;
          if (holds(type, name)) continue;
          const kind: RefKind = type;
          if (groups.some((other) => references.of(other)[kind].has(name)))
            problems.push(`${SINGULAR[type]} ${name} is removed but the proxy's config still refers to it`);
        }
    }
    if (problems.length >= MAX_PROBLEMS) break;
  }
  return problems.slice(0, MAX_PROBLEMS);
}
