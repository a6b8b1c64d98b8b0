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
import { readRefs, resourceRefs } from '../../xds/references.js';
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

/** The names each group's resources refer to, by kind (read once per group, for removals), and what each copy changed. */
export class GroupReferences {
  private readonly cache = new Map<GroupId, Record<RefKind, Set<string>>>();

  private readonly changes = new Map<GroupId, CopyChanges | null>();

  constructor(private readonly tables: ReadonlyMap<GroupId, ResourceTable>) {}

  /** What the patches changed in copy `group` of `from` (undefined: an ADD group), found once. */
  changesOf(group: GroupId, from: GroupId | undefined): CopyChanges | undefined {
    let found = this.changes.get(group);
    if (found === undefined) {
      const table = this.tables.get(group);
      found = table ? copyChanges(table, from === undefined ? undefined : this.tables.get(from)) : null;
      this.changes.set(group, found);
    }
    return found ?? undefined;
  }

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

/** What the patches changed in one copied group, found once however many classes list it. */
interface CopyChanges {
  /** Envoy's rules the changed resources break. */
  readonly rejected: readonly string[];
  /** Names the changed resources refer to that their originals did not (the others resolved before). */
  readonly newRefs: readonly { readonly owner: string; readonly kind: RefKind; readonly name: string }[];
  /** Names added (not in the original). */
  readonly added: readonly { readonly type: XdsType; readonly name: string }[];
  /** Names removed (in the original, not in the copy). */
  readonly removed: readonly { readonly type: RefKind; readonly name: string }[];
}

const REF_KINDS = ['clusters', 'routes', 'endpoints'] as const;

function copyChanges(table: ResourceTable, before: ResourceTable | undefined): CopyChanges {
  const rejected: string[] = [];
  const newRefs: { owner: string; kind: RefKind; name: string }[] = [];
  const added: { type: XdsType; name: string }[] = [];
  const removed: { type: RefKind; name: string }[] = [];
  for (const type of PATCHED_TYPES) {
    const was = before?.[type] as ReadonlyMap<string, object> | undefined;
    for (const [name, r] of table[type] as ReadonlyMap<string, object>) {
      const old = was?.get(name);
      if (old === r) continue;
      // References first: they are read from the packed messages, which the Envoy check takes.
      // Read, not remembered: each copy is read once here (a listener per class at least).
      const refs = readRefs(type, r);
      const oldRefs = old === undefined ? undefined : readRefs(type, old);
      for (const v of validateResource(type, r).slice(0, MAX_PROBLEMS))
        rejected.push(`${SINGULAR[type]} ${name}: ${v.path ? `${v.path}: ` : ''}${v.message} [${v.rule}]`);
      if (old === undefined) added.push({ type, name });
      for (const kind of REF_KINDS)
        for (const target of refs[kind])
          if (!oldRefs?.[kind].includes(target))
            newRefs.push({ owner: `${SINGULAR[type]} ${name}`, kind, name: target });
    }
    if (was && type !== 'listeners')
      for (const name of was.keys()) if (!table[type].has(name)) removed.push({ type, name });
  }
  return { rejected, newRefs, added, removed };
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
    const changes = references.changesOf(g, copiedFrom.get(g));
    if (!changes) continue;
    problems.push(...changes.rejected);
    for (const { type, name } of changes.added)
      if (holds(type, name, g)) problems.push(`${SINGULAR[type]} ${name} is added but the proxy has one already`);
    for (const { owner, kind, name } of changes.newRefs)
      if (!holds(kind, name))
        problems.push(`${owner} refers to ${SINGULAR[kind]} "${name}", which the proxy does not have`);
    // Names the copy no longer holds: does anything the class keeps still refer to them?
    for (const { type, name } of changes.removed)
      if (!holds(type, name) && groups.some((other) => references.of(other)[type].has(name)))
        problems.push(`${SINGULAR[type]} ${name} is removed but the proxy's config still refers to it`);
    if (problems.length >= MAX_PROBLEMS) break;
  }
  return problems.slice(0, MAX_PROBLEMS);
}
