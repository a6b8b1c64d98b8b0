/**
 * A verified snapshot held in memory, in the shape the xDS server serves from: per class and type,
 * a name → ServedResource map and its version string.
 *
 * Memory: each object's bytes are held once (keyed by digest), each (name, digest) pair becomes one
 * ServedResource shared by every class that gets it, and classes whose groups hold the same tables
 * of a type share that type's map outright (most classes of a mesh share the one endpoints group).
 *
 * Time: a type's map is built once per distinct list of tables, and a switch takes it from the
 * previous snapshot when those tables are the very same (the loader hands unchanged tables over
 * as the same objects, content.ts): an endpoint change rebuilds the endpoint maps, not every
 * class's clusters, listeners and routes. A map that is rebuilt (a new Service changes the outbound
 * table every sidecar class's clusters are made of) merges its tables' sorted forms, each sorted
 * and its version text laid out once per table and taken over by the next snapshot
 * (sorted-table.ts): no per-class sort or per-entry hashing.
 */
import type { ExpandedTable, ExpandedTrees, SnapshotContent } from '../../snapshot/content.js';
import { classById, classifyParsedNode, type NodeIdentity } from '../../snapshot/classify.js';
import { parseProxyNode, type ParsedNode } from '../../proxy-class/node-id.js';
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import type { Placement, ServedResource, ServedSnapshot } from '../types.js';
import { mergeTables, sortTable, type SortedTable } from './sorted-table.js';

interface TypeTable {
  readonly resources: ReadonlyMap<string, ServedResource>;
  readonly version: string;
}
type ClassTables = Readonly<Record<XdsType, TypeTable>>;

export interface LoadedSnapshotInit {
  readonly channel: string;
  readonly version: number;
  readonly digest: string;
  readonly content: SnapshotContent;
  /** Every object any group references, by digest, already verified. */
  readonly objects: ReadonlyMap<string, Uint8Array>;
  /** What reading the content expanded (readSnapshotTrees): the next load reuses it. */
  readonly trees?: ExpandedTrees;
  /** The snapshot served before: type maps over the very same tables are taken from it. */
  readonly previous?: LoadedSnapshot;
  readonly loadedAt?: Date;
}

/** A type's map for a list of tables (the non-empty ones of a class's groups, in group order). */
interface SharedTable {
  readonly sources: readonly ExpandedTable[];
  readonly table: TypeTable;
}

const NONE: ReadonlySet<string> = new Set();

type NodeIdentityInfo = NodeIdentity & { readonly metadata: Readonly<Record<string, unknown>> };

/**
 * Parsed node ids and metadata by node object (a stream keeps its node): a switch that changes the
 * classes places every stream again, without parsing every node again.
 */
const parsedNodes = new WeakMap<object, ParsedNode>();

export class MissingObjectError extends Error {
  override readonly name = 'MissingObjectError';
}

export class LoadedSnapshot implements ServedSnapshot {
  readonly channel: string;
  readonly version: number;
  readonly digest: string;
  readonly content: SnapshotContent;
  readonly loadedAt: Date;
  /** Verified bytes by digest (reused by the next load for objects it shares). */
  readonly objects: ReadonlyMap<string, Uint8Array>;
  /** What reading the content expanded (the next load takes unchanged documents from here). */
  readonly trees: ExpandedTrees;
  private readonly classes = new Map<string, ClassTables>();
  /** Type maps by a class's group list (the locality classes built later share them too). */
  private readonly byGroups = new Map<string, ClassTables>();
  /** Per type: key of the contributing groups → the map built over their tables. */
  private readonly shared: Record<XdsType, Map<string, SharedTable>>;
  /**
   * Placements by node object (a stream keeps its node), shared with the previous snapshot when
   * the classes and selectors are the very same (an unchanged classes document): a switch then
   * places its streams without classifying each one again.
   */
  private readonly placements: WeakMap<object, Placement>;

  private readonly verified = new Map<string, ReadonlySet<string>>();
  /** Tables' sorted forms (sorted-table.ts), handed to the next snapshot for the tables it keeps. */
  private readonly sortedTables = new WeakMap<ExpandedTable, SortedTable>();

  constructor(init: LoadedSnapshotInit) {
    this.channel = init.channel;
    this.version = init.version;
    this.digest = init.digest;
    this.content = init.content;
    this.objects = init.objects;
    this.trees = init.trees ?? { tables: new Map(), groups: new Map() };
    this.loadedAt = init.loadedAt ?? new Date();
    this.shared = { clusters: new Map(), endpoints: new Map(), listeners: new Map(), routes: new Map() };
    const before = init.previous;
    this.placements =
      before && before.content.classes === init.content.classes && before.content.selectors === init.content.selectors
        ? before.placements
        : new WeakMap();

    const pool = new Map<string, ServedResource>();
    for (const cls of init.content.classes) {
      this.classes.set(cls.id, this.tablesOf(cls.groups, pool, init.previous));
      if (cls.verifiedSecrets?.length) this.verified.set(cls.id, new Set(cls.verifiedSecrets));
    }
  }

  /** A class's type maps, shared by the classes with the same groups. */
  private tablesOf(
    groups: readonly string[],
    pool: Map<string, ServedResource>,
    previous: LoadedSnapshot | undefined,
  ): ClassTables {
    const key = groups.join('\n');
    let tables = this.byGroups.get(key);
    if (!tables) this.byGroups.set(key, (tables = this.buildTables(groups, pool, previous)));
    return tables;
  }

  /**
   * A class's tables; a locality class (`<class>@<locality>`, ../../proxy-class/locality.ts) or a
   * node class (`…#<node>`, ../../proxy-class/node-local.ts) is built when a proxy of that locality
   * or node first asks: a snapshot has classes × localities (× nodes) of them.
   */
  private located(classId: string): ClassTables | undefined {
    const known = this.classes.get(classId);
    if (known || !(classId.includes('@') || classId.includes('#'))) return known;
    const cls = classById(this.content, classId);
    if (!cls) return undefined;
    // Only the locality groups' tables are new here: their resources need not be shared with the rest.
    const tables = this.tablesOf(cls.groups, new Map(), undefined);
    this.classes.set(classId, tables);
    if (cls.verifiedSecrets?.length) this.verified.set(classId, new Set(cls.verifiedSecrets));
    return tables;
  }

  classify(node: NodeIdentityInfo): Placement {
    let placement = this.placements.get(node);
    if (!placement) this.placements.set(node, (placement = this.place(node)));
    return placement;
  }

  /** classifyNode reads only the classes and selectors. */
  private place(node: NodeIdentityInfo): Placement {
    let parsed = parsedNodes.get(node);
    if (!parsed) parsedNodes.set(node, (parsed = parseProxyNode(node.id, node.metadata, node.locality)));
    const placed = parsed.ok ? classifyParsedNode(this.content, node, parsed.node) : parsed;
    if (placed.ok) return { ok: true, classId: placed.classId };
    // classifyNode's reasons: a node id that does not parse is the client's mistake; a well-formed
    // node the snapshot has no class for is "not found" (it may exist in a later snapshot).
    const code = placed.reason.startsWith('malformed node id') ? 'invalid-argument' : 'not-found';
    return { ok: false, reason: placed.reason, code };
  }

  resources(classId: string, type: XdsType): ReadonlyMap<string, ServedResource> | undefined {
    return this.located(classId)?.[type].resources;
  }

  typeVersion(classId: string, type: XdsType): string {
    return this.located(classId)?.[type].version ?? '';
  }

  verifiedSecrets(classId: string): ReadonlySet<string> {
    this.located(classId);
    return this.verified.get(classId) ?? NONE;
  }

  get classIds(): readonly string[] {
    return [...this.classes.keys()];
  }

  /** Total bytes of the distinct objects held. */
  get objectBytes(): number {
    let n = 0;
    for (const b of this.objects.values()) n += b.byteLength;
    return n;
  }

  private buildTables(
    groups: readonly string[],
    pool: Map<string, ServedResource>,
    previous: LoadedSnapshot | undefined,
  ): ClassTables {
    const out = {} as Record<XdsType, TypeTable>;
    for (const type of XDS_TYPES) {
      // Only the groups that hold resources of this type decide its map (most classes differ only
      // in an inbound group, which holds no endpoints and no routes).
      const ids: string[] = [];
      const sources: ExpandedTable[] = [];
      for (const g of groups) {
        const table = this.content.groups[g]?.[type];
        if (!table || isEmpty(table)) continue;
        ids.push(g);
        sources.push(table);
      }
      const key = ids.join('\n');
      let entry = this.shared[type].get(key);
      if (!entry) {
        const before = previous?.shared[type].get(key);
        const same = before !== undefined && before.sources.every((t, i) => t === sources[i]);
        entry = { sources, table: same ? before.table : this.buildTable(sources, pool, previous) };
        this.shared[type].set(key, entry);
      }
      out[type] = entry.table;
    }
    return out;
  }

  private buildTable(
    sources: readonly ExpandedTable[],
    pool: Map<string, ServedResource>,
    previous: LoadedSnapshot | undefined,
  ): TypeTable {
    return mergeTables(sources.map((t) => this.sortedTable(t, pool, previous)));
  }

  /** A table's sorted form: built once, and taken from the snapshot before for the very same table. */
  private sortedTable(
    table: ExpandedTable,
    pool: Map<string, ServedResource>,
    previous: LoadedSnapshot | undefined,
  ): SortedTable {
    let sorted = this.sortedTables.get(table) ?? previous?.sortedTables.get(table);
    if (!sorted) sorted = sortTable(table, (name, digest) => this.resource(pool, name, digest));
    this.sortedTables.set(table, sorted);
    return sorted;
  }

  private resource(pool: Map<string, ServedResource>, name: string, digest: string): ServedResource {
    const key = `${digest} ${name}`;
    let r = pool.get(key);
    if (!r) {
      const bytes = this.objects.get(digest);
      if (!bytes) throw new MissingObjectError(`snapshot ${this.digest}: object ${digest} (${name}) was not loaded`);
      r = Object.freeze({ name, digest, bytes });
      pool.set(key, r);
    }
    return r;
  }
}

/** Tables are shared between snapshots and classes: each is measured once. */
const emptiness = new WeakMap<ExpandedTable, boolean>();

function isEmpty(table: ExpandedTable): boolean {
  let empty = emptiness.get(table);
  if (empty === undefined) emptiness.set(table, (empty = Object.keys(table).length === 0));
  return empty;
}
