/**
 * Filter chains of gateway servers that do not terminate HTTP (istiod's
 * createGatewayTCPFilterChainOpts):
 *
 * - TCP (no TLS): the first `tcp` route of a bound VirtualService whose matches fit the server's
 *   port and gateway → tcp_proxy;
 * - TLS terminated here (SIMPLE/MUTUAL/… on a TLS port): the same, behind the server's TLS context,
 *   matched by the server's SNI hosts;
 * - PASSTHROUGH: one chain per `tls` route match of a bound VirtualService, matched by its
 *   `sniHosts` (a host already matched on the port is skipped, as Envoy would refuse the listener);
 * - AUTO_PASSTHROUGH: one chain per service port (and DestinationRule subset) whose host the
 *   server's hosts cover, matched by the SNI `outbound_.<port>_.<subset>_.<host>` and Istio's mTLS
 *   ALPNs, to a cluster of that name.
 *
 * A bound VirtualService counts when one of its hosts overlaps the server's hosts in its namespace.
 */
import { objectAt } from '../../model/diagnostics.js';
import type { L4MatchAttributes, TCPRoute, TLSRoute } from '../../model/istio.js';
import { resolveGatewayRef, type GatewayProtocol } from '../../model/gateway.js';
import type { MeshServicePort, Protocol } from '../../model/service-model.js';
import type { FilterChain } from '../../xds/proto.js';
import type { CompileContext } from '../context.js';
import { ALL_ISTIO_MTLS_ALPNS, type NetworkFilter } from '../listener/filters.js';
import { checkedDestinations, destinationRuleTcpOptions, routeFilters } from '../listener/outbound-tcp.js';
import { tcpProxyFilter } from '../listener/tcp-proxy.js';
import { istioConfigMetadata } from '../metadata.js';
import { istioMtlsSni } from '../names.js';
import { reportOnce } from '../route/report-once.js';
import { l4RouteIndex } from '../virtual-services.js';
import { gatewayBindings } from './bindings.js';
import type { MergedServer } from './merge.js';
import { anyHostMatches, hostSubsetOf } from './server-hosts.js';

/** A filter chain before its transport socket: what istiod calls filterChainOpts. */
export interface GatewayChain {
  readonly filters: NetworkFilter[];
  readonly serverNames: readonly string[];
  readonly applicationProtocols?: readonly string[];
  readonly metadata?: FilterChain['metadata'];
}

const asServicePort = (port: number, protocol: GatewayProtocol): MeshServicePort => ({
  port,
  targetPort: port,
  protocol: (protocol === 'TLS' ? 'TLS' : 'TCP') satisfies Protocol,
});

/** istiod's l4SingleMatch: the match's port (if any) is the server's, its gateways (if any) name this one. */
function l4Matches(match: L4MatchAttributes, m: MergedServer, vsNamespace: string): boolean {
  if (match.port !== undefined && match.port !== m.server.port.number) return false;
  if (!match.gateways?.length) return true;
  return match.gateways.some((g) => resolveGatewayRef(g, vsNamespace) === m.gatewayKey);
}

const l4MultiMatch = (matches: readonly L4MatchAttributes[] | undefined, m: MergedServer, ns: string): boolean =>
  !matches?.length || matches.some((x) => l4Matches(x, m, ns));

/** TCP servers and TLS servers terminated here: the first fitting `tcp` route. */
export function tcpRouteChain(ctx: CompileContext, m: MergedServer, sniHosts: readonly string[]): GatewayChain[] {
  for (const bound of gatewayBindings(ctx).get(m.gatewayKey) ?? []) {
    if (!anyHostMatches(m.hosts, bound.hosts, bound.vs.meta.namespace)) continue;
    for (const { route, source } of bound.tcp) {
      if (!l4MultiMatch(route.match, m, source.meta.namespace) || route.route.length === 0) continue;
      const filters = l4Filters(ctx, route, m, `spec.tcp[${l4RouteIndex(route) ?? 0}]`, source);
      if (filters) return [{ filters, serverNames: sniHosts, metadata: istioConfigMetadata(source) }];
    }
  }
  reportNoRoute(ctx, m, 'tcp');
  return [];
}

/** PASSTHROUGH servers: a chain per fitting `tls` match, by its sniHosts. */
export function passthroughChains(ctx: CompileContext, m: MergedServer, seenSni: Map<string, string>): GatewayChain[] {
  const out: GatewayChain[] = [];
  const bind = m.server.bind ?? '';
  for (const bound of gatewayBindings(ctx).get(m.gatewayKey) ?? []) {
    if (!anyHostMatches(m.hosts, bound.hosts, bound.vs.meta.namespace)) continue;
    for (const { route, source } of bound.tls) {
      if (route.route.length === 0) continue;
      const field = `spec.tls[${l4RouteIndex(route) ?? 0}]`;
      route.match.forEach((match, j) => {
        if (!l4Matches(match, m, source.meta.namespace)) return;
        const duplicates = match.sniHosts.filter((h) => seenSni.get(h) === bind);
        if (duplicates.length) {
          reportOnce(ctx.diags, {
            severity: 'warning',
            code: 'gateway-conflict',
            message: `SNI hosts ${duplicates.join(', ')} are already routed on port ${m.server.port.number} of this gateway proxy; this match is skipped`,
            ...objectAt(source.kind, source, `${field}.match[${j}].sniHosts`),
          });
          return;
        }
        for (const h of match.sniHosts) seenSni.set(h, bind);
        const filters = l4Filters(ctx, route, m, field, source);
        if (filters) out.push({ filters, serverNames: match.sniHosts, metadata: istioConfigMetadata(source) });
      });
    }
  }
  if (!out.length) reportNoRoute(ctx, m, 'tls');
  return out;
}

/** AUTO_PASSTHROUGH: every service port the server's hosts cover, by the SNI-DNAT cluster name. */
export function autoPassthroughChains(
  ctx: CompileContext,
  m: MergedServer,
): { chains: GatewayChain[]; clusters: SniDnatCluster[] } {
  const chains: GatewayChain[] = [];
  const clusters: SniDnatCluster[] = [];
  for (const service of ctx.model.services) {
    if (service.externalName !== undefined) continue;
    if (!m.sniHosts.some((h) => hostSubsetOf(service.hostname, h))) continue;
    const subsets = ctx.destinationRules.lookup(service.hostname)?.spec.subsets ?? [];
    for (const port of service.ports) {
      if (port.protocol === 'UDP') continue;
      for (const subset of ['', ...subsets.map((s) => s.name)]) {
        const name = istioMtlsSni(port.port, subset, service.hostname);
        clusters.push({ name, hostname: service.hostname, port: port.port, subset });
        chains.push({
          // The rule's tcp_proxy settings apply, its tunnel does not (istiod: tunnelingconfig.Skip).
          filters: [
            tcpProxyFilter({
              ...destinationRuleTcpOptions(ctx, service.hostname, subset, false),
              statPrefix: name,
              cluster: name,
            }),
          ],
          serverNames: [name],
          applicationProtocols: ALL_ISTIO_MTLS_ALPNS,
        });
      }
    }
  }
  return { chains, clusters };
}

/** A cluster an AUTO_PASSTHROUGH chain routes to: the outbound cluster's endpoints under the SNI name, without TLS. */
export interface SniDnatCluster {
  readonly name: string;
  readonly hostname: string;
  readonly port: number;
  readonly subset: string;
}

function l4Filters(
  ctx: CompileContext,
  route: TCPRoute | TLSRoute,
  m: MergedServer,
  field: string,
  source: Parameters<typeof routeFilters>[3],
): NetworkFilter[] | undefined {
  const destinations = checkedDestinations(ctx, route, source, field);
  if (!destinations.length) return undefined;
  return routeFilters(ctx, destinations, asServicePort(m.server.port.number, m.server.port.protocol), source, field);
}

function reportNoRoute(ctx: CompileContext, m: MergedServer, kind: 'tcp' | 'tls'): void {
  reportOnce(ctx.diags, {
    severity: 'info',
    code: 'gateway-server-unused',
    message: `no VirtualService bound to ${m.gatewayKey} has a ${kind} route for this server (port ${m.server.port.number}); it gets no filter chain`,
    ...objectAt('Gateway', m.gateway, m.field),
  });
}
