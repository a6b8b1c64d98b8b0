/**
 * Visibility scopes: what a sidecar sees of the mesh, from exportTo and the Sidecar that applies
 * to it (istiod's SidecarScope, pilot/pkg/model/sidecar.go). A scope is (visible services,
 * VirtualServices, DestinationRules and the rule each service gets, outbound traffic policy); the
 * one that sees everything is `full` and uses the groups every sidecar shared before scopes
 * existed. Scopes with equal contents are one scope, named after the first namespace (and
 * Sidecar) that produced it, so its groups are shared by every class that fits.
 */
import type { DestinationRule, VirtualService } from '../../model/istio.js';
import type { MeshService } from '../../model/service-model.js';
import type { Sidecar } from '../../model/sidecar.js';
import type { CompileContext } from '../context.js';
import { indexDestinationRules, type WorkloadRules } from '../destination-rules.js';
import { Diagnostics } from '../../model/diagnostics.js';
import { hostMatches, resolveHost } from '../names.js';
import { sidecarTier } from '../virtual-services.js';
import { egressProxyCluster } from './egress-proxy.js';
import {
  egressListenerContents,
  shapesListeners,
  type EgressListenerContents,
  type EgressListenerView,
} from './egress-listeners.js';
import { egressImports, type EgressImports } from './egress-hosts.js';
import { viewContext, type ViewContents } from './view.js';
import { hostChoice, withHostChoices } from './host-choice.js';
import {
  destinationRuleVisible,
  meshVisibility,
  seesEverything,
  serviceVisible,
  virtualServiceVisible,
  type MeshVisibility,
} from './visibility.js';

export type Scope =
  | { readonly full: true; readonly name: 'full'; readonly ctx: CompileContext }
  | { readonly full: false; readonly name: string; readonly ctx: CompileContext };

export interface ScopeResolver {
  /** The scope that sees everything. */
  readonly full: Scope;
  /**
   * The scope of a sidecar of `namespace` to which `sidecar` (or none) applies, and which the
   * DestinationRules `selected` (with a workloadSelector, of its namespace) select.
   */
  scopeOf(namespace: string, sidecar: Sidecar | undefined, selected?: readonly DestinationRule[]): Scope;
}

export function scopeResolver(ctx: CompileContext): ScopeResolver {
  const vis = meshVisibility(ctx);
  const full: Scope = { full: true, name: 'full', ctx };
  const byOrigin = new Map<string, Scope>();
  const byContents = new Map<string, Scope>();
  const unselectedByNamespace = new Map<string, boolean>();
  /** Whether the namespace's rules with a selector change what the workloads they do not select get (warned once). */
  const unselectedChange = (ns: string): boolean => {
    let changed = unselectedByNamespace.get(ns);
    if (changed === undefined) {
      const found = unselectedRules(ctx, ns, vis.selectorRules.inNamespace(ns) ?? []);
      warnLostRules(ctx, found);
      unselectedByNamespace.set(ns, (changed = found.changed));
    }
    return changed;
  };
  return {
    full,
    scopeOf(namespace, sidecar, selected = []) {
      const base = sidecar ? `${namespace}/${sidecar.meta.namespace}.${sidecar.meta.name}` : namespace;
      const origin = selected.length ? `${base}#${selected.map((d) => d.meta.name).join('+')}` : base;
      const known = byOrigin.get(origin);
      if (known) return known;
      let scope: Scope = full;
      const namespaceRules = vis.selectorRules.inNamespace(namespace);
      const workloadRules: WorkloadRules | undefined = namespaceRules
        ? { namespaceRules, selected: new Set(selected) }
        : undefined;
      const unselectedDiffer = workloadRules !== undefined && unselectedChange(namespace);
      const shared = !sidecar && selected.length === 0 && !unselectedDiffer && seesEverything(ctx, vis, namespace);
      let contents: ViewContents | undefined = sidecar
        ? sidecarContents(ctx, vis, namespace, sidecar)
        : shared
          ? undefined
          : exportedContents(ctx, vis, namespace, undefined);
      if (contents && workloadRules) contents = { ...contents, workloadRules };
      let view: CompileContext | undefined;
      const egressProxy = sidecar?.spec.outboundTrafficPolicy?.egressProxy;
      if (sidecar && egressProxy && contents?.outboundTrafficPolicy === 'ALLOW_ANY') {
        const cluster = egressProxyCluster((view = viewContext(ctx, contents)), sidecar, egressProxy, ctx.diags);
        contents = { ...contents, egressProxyCluster: cluster };
        view = { ...view, egressProxyCluster: cluster };
      }
      if (contents && !isEverything(ctx, vis, contents, unselectedChange)) {
        view ??= viewContext(ctx, contents);
        const key = contentsKey(view, contents);
        scope = byContents.get(key) ?? { full: false, name: origin, ctx: view };
        byContents.set(key, scope);
      }
      byOrigin.set(origin, scope);
      return scope;
    },
  };
}

/** What a namespace sees through exportTo alone, limited to `imports` when a Sidecar applies. */
function exportedContents(
  ctx: CompileContext,
  vis: MeshVisibility,
  ns: string,
  imports: EgressImports | undefined,
): ViewContents {
  // With imports naming no `*` namespace, only the named namespaces' objects can be seen.
  const named = imports && !imports.has('*') ? [...imports.keys()] : undefined;
  const services = named
    ? named.flatMap((n) => vis.servicesByNamespace.get(n) ?? [])
    : (ctx.model.services as MeshService[]);
  const virtualServices = named
    ? named.flatMap((n) => vis.virtualServicesByNamespace.get(n) ?? [])
    : (ctx.model.virtualServices as VirtualService[]);
  return {
    clientNamespace: ns,
    services: withHostChoices(
      ctx,
      services.filter((s) => serviceVisible(ctx, s, ns)),
      ns,
      named && new Set(named),
    ),
    virtualServices: virtualServices.filter((v) => virtualServiceVisible(ctx, v, ns)),
    destinationRules: ctx.model.destinationRules.filter((d) => destinationRuleVisible(ctx, d, ns)),
    outboundTrafficPolicy: ctx.mesh.outboundTrafficPolicy,
  };
}

/**
 * A Sidecar's contents (istiod's initSidecarScopeInternalIndexes): the union over its egress
 * listeners of the visible services their hosts import and of the services the imported
 * VirtualServices route to; its outbound traffic policy, or the mesh's.
 */
function sidecarContents(ctx: CompileContext, vis: MeshVisibility, ns: string, sidecar: Sidecar): ViewContents {
  const egress = sidecar.spec.egress?.length ? sidecar.spec.egress : [{ hosts: ['*/*'] }];
  const imports = egressImports(
    egress.flatMap((e) => e.hosts),
    ns,
  );
  const exported = exportedContents(ctx, vis, ns, imports);
  const suffix = ctx.mesh.domainSuffix;
  const outboundTrafficPolicy = sidecar.spec.outboundTrafficPolicy?.mode ?? ctx.mesh.outboundTrafficPolicy;
  const built = egressListenerContents(egress, ns, exported, visibleLookup(ctx, ns), suffix);
  // Listeners are built per egress listener only where that differs from one import list for every port.
  const perListener = shapesListeners(egress) || importsDestinationsOnly(built);
  return {
    clientNamespace: ns,
    services: built.services,
    virtualServices: built.virtualServices,
    destinationRules: rulesSeen(exported.destinationRules, ns, ctx.mesh.rootNamespace, built.services),
    outboundTrafficPolicy,
    ...(perListener ? { egressListeners: built.listeners } : {}),
  };
}

const visibleLookup =
  (ctx: CompileContext, ns: string) =>
  (h: string): MeshService | undefined => {
    const shared = ctx.model.hostCandidates?.get(h);
    if (shared) return hostChoice(ctx, shared, ns)?.service;
    const s = ctx.model.byHostname.get(h);
    return s && serviceVisible(ctx, s, ns) ? s : undefined;
  };

/**
 * Whether a VirtualService imports a destination no egress listener's hosts import: istiod gives
 * such a service clusters (the SidecarScope's services) but no listeners or virtual hosts (those
 * come from the egress listener's own services), so the listeners are built per egress listener.
 */
function importsDestinationsOnly(built: EgressListenerContents): boolean {
  const listed = new Set(built.listeners.flatMap((l) => l.services.map((s) => s.hostname)));
  return built.services.some((s) => !listed.has(s.hostname));
}

/** selectDestinationRules: the rules of the sidecar's namespace, the root namespace and the imported services' namespaces. */
function rulesSeen(
  rules: readonly DestinationRule[],
  ns: string,
  rootNamespace: string,
  services: readonly MeshService[],
): DestinationRule[] {
  const namespaces = new Set([ns, rootNamespace, ...services.map((s) => s.namespace)]);
  return rules.filter((d) => namespaces.has(d.meta.namespace));
}

/** What rules with a workloadSelector do to the workloads of their namespace that none of them selects. */
interface UnselectedRules {
  /** Whether those workloads get other rules than the shared index gives (they need a view). */
  readonly changed: boolean;
  /** The services for which they get no rule where, without the rules with a selector, they would have one. */
  readonly lost: readonly { readonly service: MeshService; readonly rules: readonly DestinationRule[] }[];
}

/**
 * Where a rule with a workloadSelector names the host the namespace's lookup stops at and the
 * namespace has no rule without a selector for it, a workload none of them selects gets no rule
 * (istiod), where the shared index may have one. Only the services their hosts match can differ.
 */
function unselectedRules(ctx: CompileContext, ns: string, namespaceRules: readonly DestinationRule[]): UnselectedRules {
  const { model, mesh } = ctx;
  const matched = new Map<MeshService, DestinationRule[]>();
  const match = (s: MeshService, dr: DestinationRule) => {
    const list = matched.get(s);
    if (list) list.push(dr);
    else matched.set(s, [dr]);
  };
  for (const dr of namespaceRules) {
    const host = resolveHost(dr.spec.host, ns, mesh.domainSuffix, model.byHostname);
    if (!host.startsWith('*')) {
      const s = model.byHostname.get(host);
      if (s) match(s, dr);
    } else for (const s of model.services) if (hostMatches(host, s.hostname)) match(s, dr);
  }
  const services = [...matched.keys()].filter((s) => serviceVisible(ctx, s, ns));
  if (services.length === 0) return { changed: false, lost: [] };
  const visible = model.destinationRules.filter((d) => destinationRuleVisible(ctx, d, ns));
  const index = (rules: readonly DestinationRule[]) =>
    indexDestinationRules({ ...model, services, destinationRules: visible }, mesh, new Diagnostics(), ns, {
      namespaceRules: rules,
      selected: new Set(),
    });
  const unselected = index(namespaceRules);
  const without = index([]);
  const sources = (r: { sources: readonly DestinationRule[] } | undefined) => r?.sources ?? [];
  const changed = services.some((s) => {
    const a = sources(unselected.lookup(s.hostname));
    const b = sources(ctx.destinationRules.lookup(s.hostname));
    return a.length !== b.length || a.some((dr, i) => dr !== b[i]);
  });
  const lost = services
    .filter((s) => !unselected.lookup(s.hostname) && without.lookup(s.hostname))
    .map((service) => ({ service, rules: matched.get(service) ?? [] }));
  return { changed, lost };
}

/** Says where workloads of a namespace lose a rule to the namespace's rules with a selector (once per rule). */
function warnLostRules(ctx: CompileContext, found: UnselectedRules): void {
  const byRule = new Map<DestinationRule, string[]>();
  for (const { service, rules } of found.lost)
    for (const dr of rules) byRule.set(dr, [...(byRule.get(dr) ?? []), service.hostname]);
  for (const [dr, hosts] of byRule)
    ctx.diags.warn({
      kind: 'DestinationRule',
      namespace: dr.meta.namespace,
      name: dr.meta.name,
      file: dr.origin.file,
      index: dr.origin.index,
      code: 'selector-rule-shadows',
      field: 'spec.workloadSelector',
      message: `workloads of ${dr.meta.namespace} this rule does not select get no DestinationRule for ${hosts.join(', ')}: as istiod, their namespace's rules for the host are the only ones looked at (add one without a workloadSelector there to keep the other namespace's)`,
    });
}

/** Whether the contents are the whole mesh as every sidecar shares it (a Sidecar importing `*\/*`, say). */
function isEverything(
  ctx: CompileContext,
  vis: MeshVisibility,
  contents: ViewContents,
  unselected: (ns: string) => boolean,
): boolean {
  const { model, mesh } = ctx;
  return (
    (contents.workloadRules === undefined ||
      (contents.workloadRules.selected.size === 0 && !unselected(contents.clientNamespace))) &&
    contents.outboundTrafficPolicy === mesh.outboundTrafficPolicy &&
    contents.egressProxyCluster === undefined &&
    contents.egressListeners === undefined &&
    contents.services.length === model.services.length &&
    contents.services.every((s) => model.byHostname.get(s.hostname) === s) &&
    contents.virtualServices.length === model.virtualServices.length &&
    contents.destinationRules.length === model.destinationRules.length - vis.selectorRules.count &&
    seesEverything(ctx, vis, contents.clientNamespace)
  );
}

/**
 * Two views with the same key build the same outbound clusters, listeners and endpoints. Each
 * VirtualService carries its tier in the client namespace's order (sidecarTier: exported to it
 * alone, by name, or public; its own Gateway API route or not): equal lists with equal tiers order
 * alike, so they choose alike.
 */
function contentsKey(view: CompileContext, contents: ViewContents): string {
  const rule = (h: string) =>
    view.destinationRules
      .lookup(h)
      ?.sources.map((d) => `${d.meta.namespace}/${d.meta.name}`)
      .join('+') ?? '';
  return [
    `${contents.outboundTrafficPolicy}${contents.egressProxyCluster !== undefined ? `>${contents.egressProxyCluster}` : ''}`,
    contents.services
      .map((s) => `${s.namespace}/${s.hostname}:${s.ports.map((p) => p.port).join(':')}=${rule(s.hostname)}`)
      .join(','),
    contents.virtualServices
      .map(
        (v) =>
          `${v.meta.namespace}/${v.meta.name}#${sidecarTier(v, contents.clientNamespace, view.mesh.defaultVirtualServiceExportTo) ?? ''}`,
      )
      .join(','),
    ...(contents.egressListeners ? [egressListenersKey(contents.egressListeners)] : []),
  ].join('|');
}

/** Egress listeners build the same listeners and route configs when their ports, binds, services and VirtualServices are the same. */
const egressListenersKey = (listeners: readonly EgressListenerView[]): string =>
  listeners
    .map((l) =>
      [
        l.port ? `${l.port.number}/${l.port.protocol}` : '*',
        `${l.bind ?? ''}${l.bindToPort ? '!' : ''}`,
        l.services.map((s) => `${s.hostname}:${s.ports.map((p) => p.port).join(':')}`).join(','),
        l.virtualServices.map((v) => `${v.meta.namespace}/${v.meta.name}`).join(','),
      ].join(' '),
    )
    .join(';');
