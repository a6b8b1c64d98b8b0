/**
 * A group's companions: the groups that every class holding it also holds (itself among them). A
 * reference that a companion's table satisfies is satisfied in every class of the group, so the
 * consistency check settles it with a lookup in that table, without the holder index of all names
 * (consistency.ts): at 10k services the inbound groups' references lead to their own group or to
 * `outbound`, the sidecar route configs' to `outbound`, the EDS clusters' to `endpoints`, and only
 * the outbound listeners' RDS names (a route config in each namespace's `routes/<ns>`) need more.
 *
 * What a companion does not satisfy is left to the holder-set check, which gives the same answer
 * either way; this only spares it the references it would find satisfied in every class.
 */
import type { CompileOutput, GroupId, ResourceTable } from '../compile/types.js';
import type { RouteConfiguration, VirtualHost } from '../xds/proto.js';
import type { RefPart, ReferenceReader } from './references.js';

type RefKind = 'routes' | 'endpoints' | 'clusters';

/** The groups of one class: the existing ones, distinct, in class order, with their tables; and those that do not exist. */
export interface ClassGroups {
  readonly ids: readonly GroupId[];
  readonly tables: readonly ResourceTable[];
  readonly unknown: readonly GroupId[];
}

/** The groups of each class, in output order. */
export function classGroupsOf(output: CompileOutput): ClassGroups[] {
  return output.classes.map((cls) => {
    const ids: GroupId[] = [];
    const tables: ResourceTable[] = [];
    let unknown: GroupId[] | undefined;
    for (const g of cls.groups) {
      const table = output.groups.get(g);
      if (table === undefined) {
        if (!unknown?.includes(g)) (unknown ??= []).push(g);
      } else if (!ids.includes(g)) {
        ids.push(g);
        tables.push(table);
      }
    }
    return { ids, tables, unknown: unknown ?? NO_GROUPS };
  });
}

const NO_GROUPS: readonly GroupId[] = [];

/** A group's companions (their ids and tables: a class's own arrays when the group is in one class), and how many classes hold it. */
export interface Companions {
  readonly ids: readonly GroupId[];
  readonly tables: readonly ResourceTable[];
  classes: number;
}

/** The companions of every existing group some class holds (a group no class holds has none: no class checks it). */
export function companionsOf(classes: readonly ClassGroups[]): Map<GroupId, Companions> {
  const out = new Map<GroupId, Companions>();
  for (const cls of classes) {
    for (const g of cls.ids) {
      const kept = out.get(g);
      if (kept === undefined) out.set(g, { ids: cls.ids, tables: cls.tables, classes: 1 });
      else if (kept.ids.every((h) => cls.ids.includes(h))) kept.classes++;
      else {
        const at = kept.ids.map((h, k) => (cls.ids.includes(h) ? k : -1)).filter((k) => k >= 0);
        out.set(g, {
          ids: at.map((k) => kept.ids[k] as GroupId),
          tables: at.map((k) => kept.tables[k] as ResourceTable),
          classes: kept.classes + 1,
        });
      }
    }
  }
  return out;
}

/** The companion's table holding `ref` as a name of `kind` (the first), or undefined when none does. */
export function companionHolding(companions: Companions, kind: RefKind, ref: string): ResourceTable | undefined {
  const { tables } = companions;
  for (let i = 0; i < tables.length; i++) {
    const names = (tables[i] as ResourceTable)[kind];
    if (names.size !== 0 && names.has(ref)) return tables[i];
  }
  return undefined;
}

const REF_KINDS: readonly RefKind[] = ['routes', 'endpoints', 'clusters'];
/** Route configs with fewer virtual hosts are read host by host (as consistency.ts's targets). */
const MIN_BASIS_HOSTS = 64;

/**
 * Settles references by companions for one check: each part (references.ts) remembers the tables
 * that held its references (`held`, written with this check's token), so a part shared by many
 * groups is looked up once and then costs a check that those tables are companions of the next
 * group too. A big route config is compared by position with an earlier config of the same name,
 * as the holder-set check does: only the virtual hosts that differ are looked at.
 */
export class CompanionResolver {
  private readonly token = {};
  private readonly bases = new Map<string, { hosts: readonly VirtualHost[]; held: readonly object[] }>();

  constructor(private readonly references: ReferenceReader) {}

  /** The tables of `companions` holding every reference of `part`; undefined when a reference is held by none. */
  partHeld(part: RefPart, companions: Companions): readonly object[] | undefined {
    if (part.heldOf === this.token && part.held && allCompanions(part.held, companions)) return part.held;
    const held: ResourceTable[] = [];
    for (const kind of REF_KINDS)
      for (const ref of part[kind]) {
        const table = companionHolding(companions, kind, ref);
        if (table === undefined) return undefined;
        if (!held.includes(table)) held.push(table);
      }
    part.heldOf = this.token;
    part.held = held;
    return held;
  }

  /** Whether companions hold every cluster the virtual hosts of route config `name` send to. */
  routeConfigHeld(name: string, rc: RouteConfiguration, companions: Companions): boolean {
    const hosts = rc.virtual_hosts ?? [];
    const basis = hosts.length < MIN_BASIS_HOSTS ? undefined : this.bases.get(name);
    if (basis && !allCompanions(basis.held, companions)) return false;
    const kept = basis?.hosts ?? [];
    const held: object[] = basis ? [...basis.held] : [];
    let differing = 0;
    for (let i = 0; i < hosts.length; i++) {
      const vh = hosts[i] as VirtualHost;
      if (i < kept.length && kept[i] === vh) continue;
      differing++;
      const tables = this.partHeld(this.references.virtualHostRefPart(vh), companions);
      if (tables === undefined) return false;
      for (const t of tables) if (!held.includes(t)) held.push(t);
    }
    if (hosts.length >= MIN_BASIS_HOSTS && (!basis || differing * 2 > hosts.length))
      this.bases.set(name, { hosts, held });
    return true;
  }
}

/** Whether every table is one of the companions'. */
function allCompanions(tables: readonly object[], companions: Companions): boolean {
  for (const t of tables) if (!companions.tables.includes(t as ResourceTable)) return false;
  return true;
}
