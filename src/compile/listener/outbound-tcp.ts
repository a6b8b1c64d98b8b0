/**
 * Filter chains of an outbound TCP/TLS service port (istiod: buildSidecarOutboundTCPFilterChainOpts
 * and buildSidecarOutboundTLSFilterChainOpts): VirtualService `tcp`/`tls` routes that match the
 * port, else one tcp_proxy to `outbound|<port>||<host>`.
 *
 * A match naming `sourceLabels` or a `sourceNamespace` applies only where the listeners are built
 * for such a client (the context's routeSource and listenerNamespace, route/source-labels.ts), as
 * istiod's matchTCP decides it per proxy.
 */
import type { CompileContext } from '../context.js';
import { selects } from '../../proxy-class/class-id.js';
import { istioConfigMetadata } from '../metadata.js';
import { outboundClusterName, resolveHost } from '../names.js';
import { checkDestination, destinationCluster, portProblem, reportDestination } from '../route/destination.js';
import type { L4MatchAttributes, RouteDestination, TCPRoute, TLSRoute, VirtualService } from '../../model/istio.js';
import type { MeshService, MeshServicePort } from '../../model/service-model.js';
import type { Diagnostics } from '../../model/diagnostics.js';
import { l4RouteIndex } from '../virtual-services.js';
import type { NetworkFilter } from './filters.js';
import type { OutboundChain } from './outbound-listener.js';
import { tcpProxyFilter, type TcpProxyOptions } from './tcp-proxy.js';
import { isDynamicDns, sniDfpFilter } from '../dynamic-forward-proxy.js';

const MESH_GATEWAY = 'mesh';

export const isTlsProtocol = (p: MeshServicePort['protocol']): boolean => p === 'TLS' || p === 'HTTPS';

/**
 * Where a service port's chains listen when it has no IP of its own (istiod's listener opts): a
 * CIDR of a ServiceEntry becomes every chain's destination match, and a TLS port without an
 * address of its own is told apart by SNI (the service's hostname).
 */
export interface TcpBind {
  readonly cidr?: string;
  readonly sni?: boolean;
}

export function outboundTcpChains(
  ctx: CompileContext,
  service: MeshService,
  port: MeshServicePort,
  bind: TcpBind = {},
): OutboundChain[] {
  const chains = isTlsProtocol(port.protocol) ? tlsChains(ctx, service, port, bind) : tcpChains(ctx, service, port);
  const cidr = bind.cidr;
  if (cidr === undefined) return chains;
  return chains.map((c) => (c.prefixRanges?.length ? c : { ...c, prefixRanges: [cidr] }));
}

function tcpChains(ctx: CompileContext, service: MeshService, port: MeshServicePort): OutboundChain[] {
  const out: OutboundChain[] = [];
  const seenSubnets = new Set<string>();
  for (const sourced of ctx.virtualServices.tcpRoutes(service.hostname) ?? []) {
    const { route, source } = sourced;
    const field = `spec.tcp[${l4RouteIndex(route) ?? indexIn(source.spec.tcp, route)}]`;
    const destinations = checkedDestinations(ctx, route, source, field);
    if (destinations.length === 0) continue;
    if (!route.match?.length) {
      const filters = routeFilters(ctx, destinations, port, source, field);
      if (filters) return [...out, { filters, metadata: istioConfigMetadata(source) }];
      continue;
    }
    const subnets: string[] = [];
    for (const match of route.match) {
      if (!l4MatchApplies(ctx, match, port.port)) continue;
      if (!match.destinationSubnets?.length) {
        const filters = routeFilters(ctx, destinations, port, source, field);
        if (filters) return [...out, { filters, metadata: istioConfigMetadata(source) }];
        continue;
      }
      for (const s of match.destinationSubnets) subnets.push(s);
    }
    if (subnets.length) {
      const key = [...subnets].sort().join(',');
      // Two chains with the same match make Envoy reject the whole listener: the first one wins.
      if (seenSubnets.has(key)) continue;
      seenSubnets.add(key);
      const filters = routeFilters(ctx, destinations, port, source, field);
      if (filters) out.push({ filters, prefixRanges: subnets });
    }
  }
  out.push({ filters: [defaultFilter(ctx, service, port)] });
  return out;
}

function tlsChains(ctx: CompileContext, service: MeshService, port: MeshServicePort, bind: TcpBind): OutboundChain[] {
  const out: OutboundChain[] = [];
  const handled = new Set<string>();
  for (const sourced of ctx.virtualServices.tlsRoutes(service.hostname) ?? []) {
    const { route, source } = sourced;
    const field = `spec.tls[${l4RouteIndex(route) ?? indexIn(source.spec.tls, route)}]`;
    const destinations = checkedDestinations(ctx, route, source, field);
    if (destinations.length === 0) continue;
    for (const match of route.match) {
      if (!l4MatchApplies(ctx, match, port.port)) continue;
      // Matches with the same runtime predicates: only the first can ever be reached.
      const key = `${match.sniHosts.join(',')}|${(match.destinationSubnets ?? []).join(',')}`;
      if (handled.has(key)) continue;
      handled.add(key);
      const filters = routeFilters(ctx, destinations, port, source, field);
      if (filters)
        out.push({
          filters,
          serverNames: match.sniHosts,
          prefixRanges: match.destinationSubnets ?? [],
          metadata: istioConfigMetadata(source),
        });
    }
  }
  // With a VIP of its own no SNI match is needed; on a shared (wildcard or CIDR) bind the hostname tells it apart.
  // A DYNAMIC_DNS host: the SNI dynamic forward proxy filter resolves the server name first, and
  // the chain always matches the host (istiod's buildCompleteNetworkFilters and
  // buildSidecarOutboundTLSFilterChainOpts; a `tls` route's chains get no such filter there either).
  if (out.length === 0) {
    const dfp = isDynamicDns(service);
    out.push({
      filters: dfp
        ? [sniDfpFilter(service.hostname, port.port), defaultFilter(ctx, service, port)]
        : [defaultFilter(ctx, service, port)],
      ...(dfp || bind.sni || bind.cidr !== undefined ? { serverNames: [service.hostname] } : {}),
    });
  }
  return out;
}

/** istiod's matchTCP for a sidecar: port, the `mesh` gateway, source labels and namespace of the client built for. */
function l4MatchApplies(ctx: CompileContext, match: L4MatchAttributes, port: number): boolean {
  if (match.port !== undefined && match.port !== port) return false;
  if (match.gateways?.length && !match.gateways.includes(MESH_GATEWAY)) return false;
  if (match.sourceNamespace !== undefined && match.sourceNamespace !== ctx.listenerNamespace) return false;
  const labels = match.sourceLabels;
  if (labels && Object.keys(labels).length > 0)
    return ctx.routeSource !== undefined && selects(labels, ctx.routeSource.labels);
  return true;
}

/**
 * The route's destinations that exist in the model, as the HTTP routes check them: an unknown host,
 * port or subset is reported (`spec.tcp[i].route[j].destination…`) and dropped rather than sent to
 * Envoy as a tcp_proxy to a cluster that does not exist. Checked once per compile: a route is met
 * once per service port it applies to.
 */
const checked = new WeakMap<Diagnostics, WeakMap<TCPRoute | TLSRoute, readonly RouteDestination[]>>();
/** A checked destination's index in the route as written (for the diagnostics routeFilters reports). */
const writtenIndex = new WeakMap<RouteDestination, number>();

export function checkedDestinations(
  ctx: CompileContext,
  route: TCPRoute | TLSRoute,
  source: VirtualService,
  field: string,
): readonly RouteDestination[] {
  let perDiags = checked.get(ctx.diags);
  if (!perDiags) checked.set(ctx.diags, (perDiags = new WeakMap()));
  const hit = perDiags.get(route);
  if (hit) return hit;
  const kept: RouteDestination[] = [];
  for (const [j, d] of route.route.entries()) {
    // The VirtualService index has already qualified the hosts; resolving again is a no-op then.
    const host = resolveHost(
      d.destination.host,
      source.meta.namespace,
      ctx.mesh.domainSuffix,
      ctx.model.byHostname,
    ).toLowerCase();
    const rd = host === d.destination.host ? d : { ...d, destination: { ...d.destination, host } };
    const problem = checkDestination(ctx, rd.destination);
    if (problem) reportDestination(ctx.diags, source, `${field}.route[${j}]`, problem);
    else {
      kept.push(rd);
      writtenIndex.set(rd, j);
    }
  }
  perDiags.set(route, kept);
  return kept;
}

/** The tcp_proxy for one route's (checked, non-empty) destinations (istiod: buildOutboundNetworkFilters). */
export function routeFilters(
  ctx: CompileContext,
  routes: readonly RouteDestination[],
  port: MeshServicePort,
  source: VirtualService,
  field: string,
): NetworkFilter[] | undefined {
  // A destination naming no port of a service with several goes to this port, which it must have.
  const onPort = routes.filter((r) => {
    const problem = portProblem(ctx, r.destination, port.port);
    if (problem)
      reportDestination(ctx.diags, source, `${field}.route[${writtenIndex.get(r) ?? routes.indexOf(r)}]`, problem);
    return !problem;
  });
  if (onPort.length === 0) return undefined;
  routes = onPort;
  const first = routes[0] as RouteDestination;
  const policy = destinationRuleTcpOptions(
    ctx,
    first.destination.host,
    routes.length === 1 ? first.destination.subset : undefined,
  );
  if (routes.length === 1) {
    const cluster = destinationCluster(ctx, first.destination, port.port);
    return [tcpProxyFilter({ ...policy, statPrefix: cluster, cluster })];
  }
  const weightedClusters = routes
    .filter((r) => (r.weight ?? 0) > 0)
    .map((r) => ({ name: destinationCluster(ctx, r.destination, port.port), weight: r.weight as number }));
  if (weightedClusters.length === 0) {
    ctx.diags.warn({
      code: 'invalid-field',
      message: 'route has several destinations but none with a positive weight; it is ignored',
      kind: source.kind,
      namespace: source.meta.namespace,
      name: source.meta.name,
      field: `${field}.route`,
      file: source.origin.file,
      index: source.origin.index,
    });
    return undefined;
  }
  return [tcpProxyFilter({ ...policy, statPrefix: `${source.meta.name}.${source.meta.namespace}`, weightedClusters })];
}

function defaultFilter(ctx: CompileContext, service: MeshService, port: MeshServicePort): NetworkFilter {
  const cluster = outboundClusterName(port.port, '', service.hostname);
  return tcpProxyFilter({
    ...destinationRuleTcpOptions(ctx, service.hostname, undefined),
    statPrefix: cluster,
    cluster,
  });
}

/**
 * What a DestinationRule changes on a tcp_proxy: idle timeout, connection lifetime, source-IP
 * hashing and, unless `withTunnel` is false (a gateway's AUTO_PASSTHROUGH), tunnelling (istiod's
 * buildOutboundNetworkFiltersWithSingleDestination with tunnelingconfig.Apply or Skip).
 */
export function destinationRuleTcpOptions(
  ctx: CompileContext,
  hostname: string,
  subset: string | undefined,
  withTunnel = true,
): Omit<TcpProxyOptions, 'statPrefix'> {
  const spec = ctx.destinationRules.lookup(hostname)?.spec;
  if (!spec) return {};
  const tcp = spec.trafficPolicy?.connectionPool?.tcp;
  const named = spec.subsets?.find((s) => s.name === (subset ?? ''));
  let hashOnSourceIp = spec.trafficPolicy?.loadBalancer?.consistentHash?.useSourceIp ?? false;
  const subsetLb = named?.trafficPolicy?.loadBalancer;
  if (subsetLb) hashOnSourceIp = subsetLb.consistentHash?.useSourceIp ?? false;
  // istiod's tunnelingconfig.Apply: a named subset's own tunnel only (no fall back to the rule's).
  const tunnel = withTunnel ? (subset ? named?.trafficPolicy?.tunnel : spec.trafficPolicy?.tunnel) : undefined;
  return {
    ...(tcp?.idleTimeoutMs !== undefined ? { idleTimeoutMs: tcp.idleTimeoutMs } : {}),
    ...(tcp?.maxConnectionDurationMs !== undefined ? { maxConnectionDurationMs: tcp.maxConnectionDurationMs } : {}),
    ...(hashOnSourceIp ? { hashOnSourceIp } : {}),
    ...(tunnel
      ? {
          tunnel: { hostname: joinHostPort(tunnel.targetHost, tunnel.targetPort), usePost: tunnel.protocol === 'POST' },
        }
      : {}),
  };
}

/** Go's net.JoinHostPort: an IPv6 address in brackets. */
const joinHostPort = (host: string, port: number): string =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;

function indexIn<T>(list: readonly T[] | undefined, item: T): number {
  const i = list?.indexOf(item) ?? -1;
  return i < 0 ? 0 : i;
}
