/**
 * Gateway (router) proxies: which classes exist and what each one's own group holds.
 *
 * A router proxy gets the config of every Gateway whose selector its labels match, in any
 * namespace (istiod's default, PILOT_SCOPE_GATEWAY_TO_NAMESPACE=false); a Gateway without a
 * selector applies to every router proxy. Its listener ports also depend on the Services selecting
 * it in its namespace (port → targetPort binding). So a router class is one
 * (proxy namespace, selecting Services, selected Gateways) triple, found from the Pods the
 * Gateways' selectors match, and shared by every replica. AuthorizationPolicies and
 * RequestAuthentications selecting the pods by label are part of the class too (as for sidecars). Its groups: the shared `outbound`
 * clusters and `endpoints` (a gateway reaches every service, with DestinationRule policies and
 * auto mTLS as a sidecar does) plus `gateway/<…>` with its listeners, route configs and the
 * SNI-DNAT clusters of AUTO_PASSTHROUGH servers.
 */
import type { ProxyConfigParts } from '../../model/mesh-config.js';
import { gatewayKey, type Gateway } from '../../model/gateway.js';
import type { MeshService, Workload } from '../../model/service-model.js';
import { classServiceName, routerClassId, selects } from '../../proxy-class/class-id.js';
import type { Cluster, ClusterLoadAssignment } from '../../xds/proto.js';
import type { CompileContext } from '../context.js';
import type { RouterSecurity } from '../security/workload-security.js';
import { emptyTable, type GatewaySelectorRef, type ResourceTable } from '../types.js';
import { buildGatewayListeners } from './listeners.js';
import { withAccessLogs } from '../listener/access-log.js';
import { copyLocalityVariants } from '../locality-variants.js';
import { copyNodeVariants } from '../node-variants.js';
import { accessLoggers } from '../listeners.js';
import { hcmHeaders } from '../listener/hcm-headers.js';
import { mergeGateways, serviceTargets, type MergedGateway } from './merge.js';
import { parseGatewayRdsRouteName } from '../envoy-filter/route-patch.js';
import { buildGatewayRouteConfig } from './route-config.js';
import { reportRouterSecurity } from './security-diagnostics.js';
import type { SniDnatCluster } from './l4-chains.js';
import { labelsKey } from '../labels.js';
import { routeSourceOf, type RouteSource, type SourceSelectorIndex } from '../route/source-labels.js';
import { classKeysOf, type SelectorRuleIndex } from '../scope/select-rules.js';
import type { DestinationRule } from '../../model/istio.js';

export interface RouterShape {
  readonly id: string;
  readonly namespace: string;
  /** Services of the namespace selecting the proxy, hostname order. */
  readonly services: readonly MeshService[];
  /** Selected Gateways, namespace/name order. */
  readonly gateways: readonly Gateway[];
  /** The AuthorizationPolicies and RequestAuthentications that apply to its pods. */
  readonly security: RouterSecurity;
  /** Its labels, where they select some VirtualService match's `sourceLabels` (its route configs'). */
  readonly routeSource?: RouteSource;
  /** DestinationRules of its namespace whose workloadSelector picks its pods (istiod applies them to gateways too). */
  readonly destinationRules: readonly DestinationRule[];
  /** The workload-selected Telemetries with access logging that select its pods (their keys; absent: none). */
  readonly telemetry?: readonly string[];
  /** The keys of the label-selected EnvoyFilters that select its pods, sorted; absent: none. */
  readonly envoyFilters?: readonly string[];
  /** Its pods' own ProxyConfig (`proxy.istio.io/config`: proxy headers, gateway topology), over the mesh's. */
  readonly proxyConfig?: ProxyConfigParts;
}

export const gatewaySelects = (gw: Gateway, labels: Readonly<Record<string, string>>): boolean =>
  gw.spec.selector === undefined || selects(gw.spec.selector, labels);

const hasSelector = (gw: Gateway): boolean =>
  gw.spec.selector !== undefined && Object.keys(gw.spec.selector).length > 0;

/** Whether a workload is a gateway (router): a Gateway with a selector picks it. */
export const isRouterWorkload = (gateways: readonly Gateway[], labels: Readonly<Record<string, string>>): boolean =>
  gateways.some((g) => hasSelector(g) && gatewaySelects(g, labels));

/**
 * One shape per distinct (namespace, services, gateways) among the workloads at least one Gateway
 * with a selector picks. Selector-less Gateways join every shape but do not make a pod a router.
 */
export function routerShapes(
  ctx: CompileContext,
  servicesSelecting: (namespace: string, labels: Readonly<Record<string, string>>) => MeshService[],
  sourceSelectors?: SourceSelectorIndex,
  selectorRules?: SelectorRuleIndex,
): RouterShape[] {
  const gateways = ctx.model.gateways;
  if (!gateways.length) return [];
  const shapes = new Map<string, RouterShape>();
  // Label set → the shape its first pod made, and that pod (replicas share their labels).
  const seen = new Map<string, { id: string; pod: Workload }>();
  const withSelector = gateways.filter(hasSelector);
  for (const w of ctx.model.workloads as readonly Workload[]) {
    if (!isRouterWorkload(withSelector, w.labels)) continue;
    // Replicas share their labels: one shape per distinct label set.
    const labelKey = `${w.namespace}|${labelsKey(w.labels)}`;
    const first = seen.get(labelKey);
    if (first) {
      reportOtherProxyConfig(ctx, first.pod, w, first.id);
      continue;
    }
    const selected = gateways.filter((g) => gatewaySelects(g, w.labels));
    const services = servicesSelecting(w.namespace, w.labels);
    const security = ctx.security.forRouter(w.namespace, w.labels);
    const routeSource = sourceSelectors && routeSourceOf(sourceSelectors, w.labels);
    const destinationRules = selectorRules?.selecting(w.namespace, w.labels) ?? [];
    const telemetry = ctx.accessLogs?.selecting(w.namespace, w.labels) ?? [];
    const envoyFilters = ctx.envoyFilters?.selecting(w.namespace, w.labels) ?? [];
    const id = routerClassId(
      w.namespace,
      services.map((s) => classServiceName(s.hostname, s.serviceEntry !== undefined)),
      selected.map(gatewayKey),
      [
        ...(security.key === '' ? [] : security.key.split(',')),
        ...(routeSource?.keys ?? []),
        ...classKeysOf(destinationRules),
        ...telemetry,
        ...envoyFilters,
      ],
    );
    const known = shapes.get(id);
    if (known) {
      const pod = [...seen.values()].find((s) => s.id === id)?.pod;
      if (pod) reportOtherProxyConfig(ctx, pod, w, id);
    }
    seen.set(labelKey, { id, pod: w });
    if (!known)
      shapes.set(id, {
        id,
        namespace: w.namespace,
        services,
        gateways: selected,
        security,
        ...(routeSource ? { routeSource } : {}),
        destinationRules,
        ...(telemetry.length ? { telemetry } : {}),
        ...(envoyFilters.length ? { envoyFilters } : {}),
        ...(w.proxyConfig ? { proxyConfig: w.proxyConfig } : {}),
      });
  }
  return [...shapes.keys()].sort().map((k) => shapes.get(k) as RouterShape);
}

/** A gateway pod whose own ProxyConfig differs from its class's first pod's: the first applies (one class, one config). */
function reportOtherProxyConfig(ctx: CompileContext, first: Workload, other: Workload, classId: string): void {
  if (JSON.stringify(first.proxyConfig ?? null) === JSON.stringify(other.proxyConfig ?? null)) return;
  ctx.diags.warn({
    code: 'conflicting-proxy-config',
    kind: 'Pod',
    namespace: other.namespace,
    name: other.name,
    field: 'metadata.annotations.proxy.istio.io/config',
    message: `its proxy headers and gateway topology differ from those of pod ${first.namespace}/${first.name} of the same gateway class ${classId}; that pod's apply to the class`,
  });
}

/** The selectors of every Gateway a router class uses, for the relay's classifier. */
export const selectorRefs = (gateways: readonly Gateway[]): GatewaySelectorRef[] =>
  gateways.map((g) => ({
    namespace: g.meta.namespace,
    name: g.meta.name,
    ...(g.spec.selector !== undefined ? { selector: g.spec.selector } : {}),
  }));

/** Listeners, route configs and SNI-DNAT clusters/assignments of one router shape. */
export function buildRouterGroup(
  ctx: CompileContext,
  shape: RouterShape,
  shared: {
    readonly clusters: ReadonlyMap<string, Cluster>;
    readonly endpoints: ReadonlyMap<string, ClusterLoadAssignment>;
  },
  /** Told the Gateway server ports of each route config's listener port (istiod's MergedGateway.PortMap, for EnvoyFilters). */
  onPortMap?: (portMap: ReadonlyMap<number, readonly number[]>) => void,
): ResourceTable {
  // Its route configs are built for its labels when they select some sourceLabels.
  if (shape.routeSource) ctx = { ...ctx, routeSource: shape.routeSource };
  const table = emptyTable();
  const targets = serviceTargets(
    shape.services,
    (s, port) => ctx.model.endpoints.get(s.hostname)?.get(port)?.[0]?.port,
  );
  const merged = mergeGateways(shape.gateways, targets, ctx.diags);
  if (onPortMap) onPortMap(targetPortMap(merged.serversByRoute));
  reportRouterSecurity(ctx, shape.namespace, shape.gateways, shape.security);
  // Its HCMs trace as a gateway's (istiod's proxy.Type == Router) of the CLIENT mode.
  const headers = hcmHeaders(ctx, 'gateway', {
    mode: 'CLIENT',
    namespace: shape.namespace,
    workload: shape.telemetry,
    seen: ctx.model.byHostname,
    gateway: true,
  });
  const built = buildGatewayListeners(ctx, merged, shape.security, headers);
  // Every gateway listener logs unmatched connections too (istiod's buildGatewayListener).
  const logs = accessLoggers(ctx, 'CLIENT', shape.namespace, shape.telemetry);
  for (const [name, l] of withAccessLogs(logs, built.listeners, () => true)) table.listeners.set(name, l);
  for (const [routeName, servers] of merged.serversByRoute)
    table.routes.set(routeName, buildGatewayRouteConfig(ctx, routeName, servers, shape.namespace));
  for (const c of built.sniDnatClusters) addSniDnat(table, c, shared);
  return table;
}

/** istiod's getTargetPortMap: a route config's listener port → the Gateway server ports whose servers it holds. */
function targetPortMap(serversByRoute: MergedGateway['serversByRoute']): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const [route, servers] of serversByRoute) {
    const port = parseGatewayRdsRouteName(route).port;
    const list = out.get(port) ?? [];
    for (const m of servers) if (!list.includes(m.server.port.number)) list.push(m.server.port.number);
    out.set(port, list);
  }
  return out;
}

/**
 * istiod's SNI-DNAT cluster for AUTO_PASSTHROUGH: the outbound cluster's settings and endpoints
 * under the SNI name, without upstream TLS (the client's own mTLS passes through).
 */
function addSniDnat(
  table: ResourceTable,
  c: SniDnatCluster,
  shared: {
    readonly clusters: ReadonlyMap<string, Cluster>;
    readonly endpoints: ReadonlyMap<string, ClusterLoadAssignment>;
  },
): void {
  const outbound = `outbound|${c.port}|${c.subset}|${c.hostname}`;
  const base = shared.clusters.get(outbound);
  if (!base || table.clusters.has(c.name)) return;
  const sniDnat = (from: Cluster): Cluster => {
    const cluster: Cluster = { ...from, name: c.name };
    delete cluster.transport_socket;
    delete cluster.transport_socket_matches;
    if (cluster.eds_cluster_config)
      cluster.eds_cluster_config = { ...cluster.eds_cluster_config, service_name: c.name };
    return cluster;
  };
  // A DNS cluster's and an assignment's locality and node variants (../locality-variants.ts,
  // ../node-variants.ts) follow them here.
  const cluster = copyLocalityVariants(base, sniDnat(base), sniDnat);
  table.clusters.set(c.name, cluster);
  const cla = shared.endpoints.get(outbound);
  const named = (from: ClusterLoadAssignment): ClusterLoadAssignment => ({ ...from, cluster_name: c.name });
  if (cla && cluster.eds_cluster_config)
    table.endpoints.set(c.name, copyNodeVariants(cla, copyLocalityVariants(cla, named(cla), named), named));
}
