/**
 * What of the mesh a namespace may see, precomputed once per compile so that a namespace's view
 * costs O(what it sees), not O(mesh): the objects whose exportTo (or the mesh default) is not `*`,
 * per-namespace lists of services, VirtualServices and DestinationRules, and where istiod's
 * per-client DestinationRule order (client namespace, service namespace, root) would pick another
 * rule than the one every sidecar shares (compile/destination-rules.ts).
 */
import type { DestinationRule, VirtualService } from '../../model/istio.js';
import type { MeshService } from '../../model/service-model.js';
import type { CompileContext } from '../context.js';
import { hasWorkloadSelector } from '../destination-rules.js';
import { hostMatches, resolveHost } from '../names.js';
import { appliesToSidecars, gatewayRouteApplies, sidecarOrder, sidecarTier } from '../virtual-services.js';
import { selectorRulesOf, type SelectorRuleIndex } from './select-rules.js';
import { exportedTo, exportedToAll } from '../../model/export-to.js';
import { seesModelHosts } from './host-choice.js';

export interface MeshVisibility {
  readonly servicesByNamespace: ReadonlyMap<string, readonly MeshService[]>;
  readonly virtualServicesByNamespace: ReadonlyMap<string, readonly VirtualService[]>;
  readonly destinationRulesByNamespace: ReadonlyMap<string, readonly DestinationRule[]>;
  /** The DestinationRules with a workloadSelector, per namespace (never exported: istiod treats them as `.`). */
  readonly selectorRules: SelectorRuleIndex;
  /** Services / VirtualServices / DestinationRules (without a workloadSelector) not exported to every namespace. */
  readonly restrictedServices: readonly MeshService[];
  readonly restrictedVirtualServices: readonly VirtualService[];
  readonly restrictedDestinationRules: readonly DestinationRule[];
  /** Namespace → services of other namespaces its DestinationRules match (istiod applies them there first). */
  readonly clientFirstRules: ReadonlyMap<string, readonly MeshService[]>;
  /** Namespaces (not the service's, not the root) whose rules the shared order applies mesh-wide; istiod only in them. */
  readonly foreignRuleNamespaces: ReadonlySet<string>;
  /**
   * Namespaces whose sidecars use another VirtualService for some host than the shared index (oldest
   * first): istiod takes those exported to a namespace alone, then those exported to it by name,
   * before public ones, and a namespace's own Gateway API routes first within each (a consumer
   * route's HTTP routes only there). They need a view.
   */
  readonly virtualServiceOrderNamespaces: ReadonlySet<string>;
}

export const serviceVisible = (ctx: CompileContext, s: MeshService, ns: string): boolean =>
  exportedTo(s.exportTo, ctx.mesh.defaultServiceExportTo, s.namespace, ns);
export const virtualServiceVisible = (ctx: CompileContext, vs: VirtualService, ns: string): boolean =>
  exportedTo(vs.spec.exportTo, ctx.mesh.defaultVirtualServiceExportTo, vs.meta.namespace, ns);
/** Rules with a workloadSelector are not among them: they reach views as WorkloadRules (scopes.ts). */
export const destinationRuleVisible = (ctx: CompileContext, dr: DestinationRule, ns: string): boolean =>
  !hasWorkloadSelector(dr) &&
  exportedTo(dr.spec.exportTo, ctx.mesh.defaultDestinationRuleExportTo, dr.meta.namespace, ns);

function groupBy<T>(items: readonly T[], ns: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(ns(item));
    if (list) list.push(item);
    else out.set(ns(item), [item]);
  }
  return out;
}

export function meshVisibility(ctx: CompileContext): MeshVisibility {
  const { model, mesh } = ctx;
  const clientFirst = new Map<string, MeshService[]>();
  for (const dr of model.destinationRules) {
    if (dr.spec.workloadSelector) continue;
    const ns = dr.meta.namespace;
    const host = resolveHost(dr.spec.host, ns, mesh.domainSuffix, model.byHostname);
    const exact = host.startsWith('*') ? undefined : model.byHostname.get(host);
    const matched = host.startsWith('*')
      ? model.services.filter((s) => s.namespace !== ns && hostMatches(host, s.hostname))
      : exact && exact.namespace !== ns
        ? [exact]
        : [];
    if (matched.length) clientFirst.set(ns, [...(clientFirst.get(ns) ?? []), ...matched]);
  }
  const foreign = new Set<string>();
  for (const s of model.services) {
    const chosen = ctx.destinationRules.lookup(s.hostname)?.sources[0]?.meta.namespace;
    if (chosen !== undefined && chosen !== s.namespace && chosen !== mesh.rootNamespace) foreign.add(chosen);
  }
  return {
    servicesByNamespace: groupBy(model.services, (s) => s.namespace),
    virtualServicesByNamespace: groupBy(model.virtualServices, (v) => v.meta.namespace),
    destinationRulesByNamespace: groupBy(model.destinationRules, (d) => d.meta.namespace),
    selectorRules: selectorRulesOf(ctx),
    restrictedServices: model.services.filter((s) => !exportedToAll(s.exportTo, mesh.defaultServiceExportTo)),
    restrictedVirtualServices: model.virtualServices.filter(
      (v) => !exportedToAll(v.spec.exportTo, mesh.defaultVirtualServiceExportTo),
    ),
    restrictedDestinationRules: model.destinationRules.filter(
      (d) => !hasWorkloadSelector(d) && !exportedToAll(d.spec.exportTo, mesh.defaultDestinationRuleExportTo),
    ),
    clientFirstRules: clientFirst,
    foreignRuleNamespaces: foreign,
    virtualServiceOrderNamespaces: virtualServiceOrderNamespaces(ctx),
  };
}

/**
 * Where the shared VirtualService index (virtual-services.ts, built for no client namespace: oldest
 * first) is not what a namespace's sidecars get: for some host and route kind, the first
 * VirtualService in the namespace's order (sidecarOrder: those exported to it alone before those
 * exported to it by name before public ones, its own Gateway API routes first within each; a
 * consumer route's HTTP routes only for it) is not the first in the shared order. Only namespaces a
 * VirtualService's exportTo names (its own for `.`) or that hold Gateway API mesh routes can differ,
 * and only for the hosts of those VirtualServices (an exact host beats a wildcard in the index).
 */
function virtualServiceOrderNamespaces(ctx: CompileContext): Set<string> {
  const { model, mesh } = ctx;
  const defaults = mesh.defaultVirtualServiceExportTo;
  const out = new Set<string>();
  const byHost = new Map<string, Set<VirtualService>>();
  /** Namespace → the hosts of the VirtualServices that name it. */
  const named = new Map<string, Set<string>>();
  for (const vs of model.virtualServices) {
    if (!vs.spec.hosts.length || !appliesToSidecars(vs)) continue;
    const hosts = vs.spec.hosts.map((h) =>
      resolveHost(h, vs.meta.namespace, mesh.domainSuffix, model.byHostname).toLowerCase(),
    );
    for (const h of hosts) {
      const set = byHost.get(h);
      if (set) set.add(vs);
      else byHost.set(h, new Set([vs]));
    }
    const list = vs.spec.exportTo?.length ? vs.spec.exportTo : (defaults ?? []);
    const namespaces = list.includes('*') ? [] : list.map((e) => (e === '.' ? vs.meta.namespace : e));
    if (vs.gatewaySemantics === true) namespaces.push(vs.meta.namespace);
    for (const ns of namespaces) {
      const set = named.get(ns);
      if (set) for (const h of hosts) set.add(h);
      else named.set(ns, new Set(hosts));
    }
  }
  const kinds = ['http', 'tcp', 'tls'] as const;
  for (const [ns, hosts] of named) {
    for (const h of hosts) {
      // A wildcard host: which services it routes depends on the other VirtualServices; assume it differs.
      if (h.startsWith('*')) {
        out.add(ns);
        break;
      }
      const service = model.byHostname.get(h);
      if (!service) continue;
      const candidates = [...(byHost.get(h) ?? [])];
      const seen = candidates.filter((c) => sidecarTier(c, ns, defaults) !== undefined);
      const first = (client: string | undefined, kind: (typeof kinds)[number]) =>
        sidecarOrder(client === undefined ? candidates : seen, client, defaults).find(
          (c) =>
            (c.spec[kind]?.length ?? 0) > 0 && (kind !== 'http' || gatewayRouteApplies(c, service.namespace, client)),
        );
      if (kinds.some((kind) => first(ns, kind) !== first(undefined, kind))) {
        out.add(ns);
        break;
      }
    }
  }
  return out;
}

/**
 * Whether a namespace without a Sidecar sees exactly what every sidecar shares: every service,
 * VirtualService and DestinationRule is exported to it, and istiod's rule order picks the shared rules.
 */
export function seesEverything(ctx: CompileContext, vis: MeshVisibility, ns: string): boolean {
  // A host several namespaces' ServiceEntries define: the namespace may see another one than the model's.
  if (!seesModelHosts(ctx, ns)) return false;
  if (vis.virtualServiceOrderNamespaces.has(ns)) return false;
  // istiod looks in the client's namespace first: a difference only where the shared rule is another namespace's.
  const own = vis.clientFirstRules.get(ns);
  if (own?.some((s) => ctx.destinationRules.lookup(s.hostname)?.sources[0]?.meta.namespace !== ns)) return false;
  for (const f of vis.foreignRuleNamespaces) if (f !== ns) return false;
  return (
    vis.restrictedServices.every((s) => serviceVisible(ctx, s, ns)) &&
    vis.restrictedVirtualServices.every((v) => virtualServiceVisible(ctx, v, ns)) &&
    vis.restrictedDestinationRules.every((d) => destinationRuleVisible(ctx, d, ns))
  );
}
