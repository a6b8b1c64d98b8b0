/**
 * Applies EnvoyFilter patches to the compile's groups, per proxy class, once everything is built and
 * split (istiod patches what it generated for one proxy, last).
 *
 * Groups are shared between classes, and EnvoyFilters select proxies: a class whose patches change
 * a group gets a patched copy `<group>~ef-<hash>` (before a variant mark: `outbound~ef-<hash>@`, so
 * the relay's locality and node variants keep working), one copy per distinct set of patches that
 * apply to it; classes without patches keep the group. Resource-level ADDs (a CLUSTER or LISTENER
 * added) go to a group of their own per class kind and patch set (`envoyfilter/<hash>`), so that
 * they are added once per proxy, not once per group.
 *
 * The patch context of each resource is istiod's: a sidecar's inbound listeners and clusters
 * (`inbound/…` groups, InboundPassthroughCluster) are SIDECAR_INBOUND, its other listeners,
 * clusters and route configs SIDECAR_OUTBOUND; everything a router gets is GATEWAY. Proxyless gRPC
 * clients and their endpoints are not patched (istiod's gRPC generator reads no EnvoyFilter).
 */
import type { Cluster, Listener, RouteConfiguration } from '../../xds/proto.js';
import { emptyTable, type GroupId, type ProxyClass, type ResourceTable } from '../types.js';
import {
  patchClusters,
  patchListeners,
  patchRouteConfigurations,
  ListenerPatchMemo,
  type GatewayPortMap,
  type PatchPanicHandler,
} from './patch.js';
import type { PatchContext, ResolvedPatch } from './types.js';
import { classProblems, GroupReferences } from './check.js';
import { patchId } from './util.js';

/** A class's patches, in istiod's order (selection.ts). */
export type PatchesOf = (c: ProxyClass) => readonly ResolvedPatch[];

const INBOUND_PASSTHROUGH = 'InboundPassthroughCluster';

/** Resource-level ADDs: applied once per proxy, into a group of their own. */
const isResourceAdd = (p: ResolvedPatch): boolean =>
  p.operation === 'ADD' && (p.applyTo === 'CLUSTER' || p.applyTo === 'LISTENER');

const LISTENER_SIDE = new Set(['LISTENER', 'FILTER_CHAIN', 'NETWORK_FILTER', 'HTTP_FILTER', 'LISTENER_FILTER']);
const ROUTE_SIDE = new Set(['ROUTE_CONFIGURATION', 'VIRTUAL_HOST', 'HTTP_ROUTE']);

const isInboundGroup = (id: GroupId): boolean => id.startsWith('inbound/');

function clusterContext(generator: ProxyClass['generator'], group: GroupId, name: string): PatchContext {
  if (generator === 'router') return 'GATEWAY';
  return isInboundGroup(group) || name.startsWith(INBOUND_PASSTHROUGH) ? 'SIDECAR_INBOUND' : 'SIDECAR_OUTBOUND';
}

function listenerContext(generator: ProxyClass['generator'], group: GroupId): PatchContext {
  if (generator === 'router') return 'GATEWAY';
  return isInboundGroup(group) ? 'SIDECAR_INBOUND' : 'SIDECAR_OUTBOUND';
}

const routeContext = (generator: ProxyClass['generator']): PatchContext =>
  generator === 'router' ? 'GATEWAY' : 'SIDECAR_OUTBOUND';

/** Whether a patch can change what `table` holds, seen in the contexts the resources of `group` are in. */
function reaches(p: ResolvedPatch, generator: ProxyClass['generator'], group: GroupId, table: ResourceTable): boolean {
  if (isResourceAdd(p)) return false;
  const fits = (ctx: PatchContext) => p.context === 'ANY' || p.context === ctx;
  if (p.applyTo === 'CLUSTER') {
    for (const name of table.clusters.keys()) if (fits(clusterContext(generator, group, name))) return true;
    return false;
  }
  if (LISTENER_SIDE.has(p.applyTo)) return table.listeners.size > 0 && fits(listenerContext(generator, group));
  if (ROUTE_SIDE.has(p.applyTo))
    return (
      (table.routes.size > 0 && fits(routeContext(generator))) ||
      // Inbound route configs are inline, in the inbound HCMs (istiod patches them with SIDECAR_INBOUND).
      (table.listeners.size > 0 && generator === 'sidecar' && isInboundGroup(group) && fits('SIDECAR_INBOUND'))
    );
  return false;
}

/** A short stable hash (FNV-1a, two lanes): no crypto here, the compiler also runs in Workers. */
export function shortHash(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0').slice(0, 4);
}

/** `g` with `~ef-<h>` before its variant mark (`@`, `#`), so a variant of the copy is the copy of the variant. */
function patchedId(group: GroupId, hash: string): GroupId {
  const mark = group.search(/[@#]/);
  return mark < 0 ? `${group}~ef-${hash}` : `${group.slice(0, mark)}~ef-${hash}${group.slice(mark)}`;
}

function byContext<M extends { readonly name?: string | null }>(
  resources: ReadonlyMap<string, M>,
  contextOf: (name: string) => PatchContext,
): Map<PatchContext, M[]> {
  const out = new Map<PatchContext, M[]>();
  for (const [name, r] of resources) {
    const ctx = contextOf(name);
    const list = out.get(ctx);
    if (list) list.push(r);
    else out.set(ctx, [r]);
  }
  return out;
}

function toMap<M extends { readonly name?: string | null }>(list: readonly M[]): Map<string, M> {
  const out = new Map<string, M>();
  for (const r of list) if (r.name) out.set(r.name, r);
  return out;
}

/** One group's table with the patches applied (a new table; untouched maps are shared). */
function patchTable(
  c: ProxyClass,
  group: GroupId,
  table: ResourceTable,
  patches: readonly ResolvedPatch[],
  onPanic: PatchPanicHandler | undefined,
  gatewayPortMap: GatewayPortMap | undefined,
  memo?: ListenerPatchMemo,
): ResourceTable {
  const generator = c.generator;
  // Maps of their own: later stages (the incremental compiler's state) edit tables in place.
  const out: ResourceTable = {
    clusters: new Map(table.clusters),
    endpoints: new Map(table.endpoints),
    listeners: new Map(table.listeners),
    routes: new Map(table.routes),
  };
  if (table.clusters.size > 0 && patches.some((p) => p.applyTo === 'CLUSTER')) {
    const patched: Cluster[] = [];
    for (const [ctx, list] of byContext(table.clusters, (n) => clusterContext(generator, group, n)))
      patched.push(
        ...patchClusters(ctx, list, patches, {
          // An inbound cluster's name holds no host: istiod matches `service` against the workload's services.
          inboundHosts: (name) => (name.startsWith('inbound|') ? c.services : undefined),
          ...(onPanic ? { onPanic } : {}),
        }),
      );
    out.clusters = toMap(patched);
  }
  if (table.listeners.size > 0 && patches.some((p) => LISTENER_SIDE.has(p.applyTo) || ROUTE_SIDE.has(p.applyTo)))
    out.listeners = toMap(
      patchListeners(listenerContext(generator, group), [...table.listeners.values()], patches, {
        ...(onPanic ? { onPanic } : {}),
        ...(memo ? { memo } : {}),
      }),
    );
  if (table.routes.size > 0 && patches.some((p) => ROUTE_SIDE.has(p.applyTo)))
    out.routes = toMap(
      patchRouteConfigurations(
        routeContext(generator),
        [...table.routes.values()] as RouteConfiguration[],
        patches,
        gatewayPortMap ? { gatewayPortMap } : {},
      ),
    );
  return out;
}

/** The resources a class's ADD patches add (istiod's InsertedClusters and listener ADDs), for each of its contexts. */
function addedTable(generator: ProxyClass['generator'], adds: readonly ResolvedPatch[]): ResourceTable {
  const table = emptyTable();
  const contexts: PatchContext[] = generator === 'router' ? ['GATEWAY'] : ['SIDECAR_OUTBOUND', 'SIDECAR_INBOUND'];
  for (const ctx of contexts) {
    for (const c of patchClusters(ctx, [], adds)) if (c.name) table.clusters.set(c.name, c);
    for (const l of patchListeners(ctx, [] as Listener[], adds)) if (l.name) table.listeners.set(l.name, l);
  }
  return table;
}

/**
 * How a patched copy is made from the group it copies: an endpoint round that rebuilds the original
 * makes the copy again this way (the incremental compiler), rather than compiling in full.
 */
export interface CopyRecipe {
  /** The group it copies. */
  readonly from: GroupId;
  /** The copy of `table` (the original's content), patches that panic told to `onPanic`. */
  patch(table: ResourceTable, onPanic: PatchPanicHandler): ResourceTable;
}

/** The patched copies of a compile and how each was made; `refused`: an EnvoyFilter was left out for some class. */
export interface EnvoyFilterCopies {
  readonly copies: ReadonlyMap<GroupId, CopyRecipe>;
  readonly refused: boolean;
}

/** EnvoyFilters left out for some classes: by source (`<ns>/<name>`), the classes and the first problems. */
export type Refusals = Map<string, { readonly classes: string[]; readonly problems: readonly string[] }>;

/** Makes and remembers the patched copies of groups (one per group, class kind and patch list). */
class Copier {
  private readonly copies = new Map<string, GroupId>();
  /** Every group made here, with the group it was copied from (undefined: an ADD group). */
  readonly made = new Map<GroupId, GroupId | undefined>();
  /** How each copy (not ADD groups) was made. */
  readonly recipes = new Map<GroupId, CopyRecipe>();
  /** Chains and HCMs patched so far: the classes' groups share them as their originals do. */
  private readonly memo = new ListenerPatchMemo();

  constructor(
    private readonly groups: Map<GroupId, ResourceTable>,
    private readonly onPanic: PatchPanicHandler | undefined,
    private readonly gatewayPortMapOf: ((c: ProxyClass) => GatewayPortMap | undefined) | undefined,
  ) {}

  /** The class's groups with `patches` applied (copies in place of what they change), plus its ADD group. */
  groupsFor(c: ProxyClass, patches: readonly ResolvedPatch[]): GroupId[] {
    const list = c.groups.map((g) => this.copy(c, g, patches));
    const adds = patches.filter(isResourceAdd);
    if (adds.length > 0) {
      const key = `envoyfilter|${c.generator}|${adds.map(patchId).join(',')}`;
      let id = this.copies.get(key);
      if (!id) {
        id = `envoyfilter/${shortHash(key)}`;
        const table = addedTable(c.generator, adds);
        if (table.clusters.size + table.listeners.size > 0) {
          this.groups.set(id, table);
          this.made.set(id, undefined);
        }
        this.copies.set(key, id);
      }
      if (this.groups.has(id)) list.push(id);
    }
    return list;
  }

  /** By class kind, group and patch (no key strings: a class's own groups are met once each, ~10k at 10k services). */
  private readonly reached = new Map<ProxyClass['generator'], Map<GroupId, Map<ResolvedPatch, boolean>>>();

  /** `reaches`, remembered per patch, group and class kind: classes share most groups. */
  private reaches(p: ResolvedPatch, generator: ProxyClass['generator'], g: GroupId, table: ResourceTable): boolean {
    let byGroup = this.reached.get(generator);
    if (!byGroup) this.reached.set(generator, (byGroup = new Map()));
    let byPatch = byGroup.get(g);
    if (!byPatch) byGroup.set(g, (byPatch = new Map()));
    let hit = byPatch.get(p);
    if (hit === undefined) byPatch.set(p, (hit = reaches(p, generator, g, table)));
    return hit;
  }

  private copy(c: ProxyClass, g: GroupId, patches: readonly ResolvedPatch[]): GroupId {
    const table = this.groups.get(g);
    if (!table || this.made.has(g)) return g;
    const reaching = patches.filter((p) => this.reaches(p, c.generator, g, table));
    if (reaching.length === 0) return g;
    // Inbound clusters match `service` against the class's services: part of the key there.
    const hosts = isInboundGroup(g) ? `|${c.services.join(',')}` : '';
    const key = `${g}|${c.generator}${hosts}|${reaching.map(patchId).join(',')}`;
    let id = this.copies.get(key);
    if (id) return id;
    id = patchedId(g, shortHash(key));
    if (this.groups.has(id)) throw new Error(`EnvoyFilter group ${id} collides`);
    this.groups.set(id, patchTable(c, g, table, reaching, this.onPanic, this.gatewayPortMapOf?.(c), this.memo));
    this.made.set(id, g);
    this.remember(id, c, g, reaching);
    // The variants of a variant base group (`g<key>`) are patched alike: the relay picks one per proxy.
    if (/[@#]$/.test(g))
      for (const [vid, vt] of [...this.groups])
        if (vid !== g && vid.startsWith(g) && !this.made.has(vid)) {
          const copy = `${id}${vid.slice(g.length)}`;
          this.groups.set(copy, patchTable(c, vid, vt, reaching, this.onPanic, this.gatewayPortMapOf?.(c), this.memo));
          this.made.set(copy, vid);
          this.remember(copy, c, vid, reaching);
        }
    this.copies.set(key, id);
    return id;
  }

  private remember(id: GroupId, c: ProxyClass, from: GroupId, reaching: readonly ResolvedPatch[]): void {
    const portMap = this.gatewayPortMapOf?.(c);
    this.recipes.set(id, { from, patch: (table, onPanic) => patchTable(c, from, table, reaching, onPanic, portMap) });
  }
}

/**
 * Patches the groups of every class with patches (`patchesOf`), in `groups`; returns the classes
 * with their groups replaced by their patched copies, and the EnvoyFilters left out for some class
 * because their patches broke its config (check.ts): the first EnvoyFilter, in patch order, whose
 * patches with those before it break it is left out, and the rest tried again. Groups no class
 * lists any more (what was copied, trial copies) are dropped.
 */
export function applyEnvoyFilters(
  groups: Map<GroupId, ResourceTable>,
  classes: readonly ProxyClass[],
  patchesOf: PatchesOf,
  onPanic?: PatchPanicHandler,
  gatewayPortMapOf?: (c: ProxyClass) => GatewayPortMap | undefined,
): {
  readonly classes: ProxyClass[];
  readonly refusals: Refusals;
  /** The groups (and variant groups) patched copies were made of. */
  readonly originals: ReadonlySet<GroupId>;
  /** How each copy the classes list was made. */
  readonly copies: ReadonlyMap<GroupId, CopyRecipe>;
} {
  const copier = new Copier(groups, onPanic, gatewayPortMapOf);
  const references = new GroupReferences(groups);
  const refusals: Refusals = new Map();
  const checked = new Map<string, string[]>();
  const problemsOf = (list: readonly GroupId[]): string[] => {
    const key = list.join('\n');
    let found = checked.get(key);
    if (!found) {
      found = classProblems(groups, { groups: list, copiedFrom: copier.made }, references);
      checked.set(key, found);
    }
    return found;
  };
  const touched = new Set<GroupId>();
  const out = classes.map((c) => {
    if (c.generator === 'grpc') return c;
    const all = patchesOf(c);
    if (all.length === 0) return c;
    const left = new Set<string>();
    let list = copier.groupsFor(c, all);
    let problems = problemsOf(list);
    while (problems.length > 0) {
      // The first source whose patches, with those of the sources before it, break the class.
      const sources = [...new Set(all.map((p) => p.source))].filter((s) => !left.has(s));
      let culprit = sources[sources.length - 1] as string;
      let why = problems;
      for (let k = 0; k < sources.length; k++) {
        const prefix = new Set(sources.slice(0, k + 1));
        const found = problemsOf(
          copier.groupsFor(
            c,
            all.filter((p) => prefix.has(p.source)),
          ),
        );
        if (found.length > 0) {
          culprit = sources[k] as string;
          why = found;
          break;
        }
      }
      left.add(culprit);
      const refusal = refusals.get(culprit);
      if (refusal) refusal.classes.push(c.id);
      else refusals.set(culprit, { classes: [c.id], problems: why });
      list = copier.groupsFor(
        c,
        all.filter((p) => !left.has(p.source)),
      );
      problems = problemsOf(list);
    }
    for (const g of c.groups) touched.add(g);
    return list.every((g, i) => g === c.groups[i]) && list.length === c.groups.length ? c : { ...c, groups: list };
  });
  // Drop what no class lists: copied originals, and copies only a trial made.
  const used = new Set<GroupId>();
  for (const c of out) for (const g of c.groups) used.add(g);
  const unused = (g: GroupId) => !used.has(g);
  for (const g of touched)
    if (unused(g)) {
      groups.delete(g);
      // Its variants go with it once no class lists the base.
      if (/[@#]$/.test(g))
        for (const vid of [...groups.keys()])
          if (vid !== g && vid.startsWith(g) && !copier.made.has(vid)) groups.delete(vid);
    }
  for (const [g, from] of copier.made) {
    const base = /[@#]/.test(g) ? g.slice(0, g.search(/[@#]/) + 1) : g;
    // A variant copy stays while its base copy is listed.
    if (from !== undefined && base !== g && /[@#]$/.test(base) && used.has(base)) continue;
    if (unused(g)) groups.delete(g);
  }
  const originals = new Set<GroupId>();
  for (const from of copier.made.values()) if (from !== undefined) originals.add(from);
  const copies = new Map<GroupId, CopyRecipe>();
  for (const [id, recipe] of copier.recipes) if (groups.has(id)) copies.set(id, recipe);
  return { classes: out, refusals, originals, copies };
}
