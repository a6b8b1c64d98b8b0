/**
 * LDS for a gateway (istiod's buildGatewayListeners + buildGatewayListener): one listener per
 * merged port, `0.0.0.0_<port>` (or `<bind>_<port>`), bound to the port, traffic direction
 * OUTBOUND.
 *
 * - A plain-text HTTP port gets one chain: an HCM on RDS `http.<port>`.
 * - Otherwise one or more chains per server: HTTPS terminated here → an HCM on
 *   `https.<port>.<portName>.<gateway>.<ns>` behind the server's TLS context, matched by its SNI
 *   hosts; TCP, TLS and passthrough servers → l4-chains.ts.
 * - A TLS inspector is added when a chain matches on SNI or its TLS context offers ALPN; every
 *   chain gets istiod's 15 s transport socket connect timeout.
 *
 * - The router's security policies (security/workload-security.ts forRouter) go before the router
 *   in every HCM and before tcp_proxy on TCP, TLS-terminated and PASSTHROUGH chains.
 *
 * A listener left without chains (e.g. a TCP server no VirtualService routes) is not built.
 */
import { isHttpGatewayProtocol, isHttpServer, type ServerTlsSettings } from '../../model/gateway.js';
import type { MeshTlsConfig } from '../../model/mesh-config.js';
import { envoy, packAny, type FilterChain, type Listener } from '../../xds/proto.js';
import { TypeName } from '../../xds/type-urls.js';
import type { CompileContext } from '../context.js';
import {
  FilterName,
  listenerAddress,
  PROXY_PROTOCOL_FILTER,
  TLS_INSPECTOR_FILTER,
  type HttpFilter,
  type NetworkFilter,
} from '../listener/filters.js';
import { hcmFilter } from '../listener/http-connection-manager.js';
import type { ProxyHeaders } from '../listener/proxy-headers.js';
import type { RouterSecurity } from '../security/workload-security.js';
import { gatewayTlsContext } from './downstream-tls.js';
import { buildGatewayHcm } from './hcm.js';
import {
  autoPassthroughChains,
  passthroughChains,
  tcpRouteChain,
  type GatewayChain,
  type SniDnatCluster,
} from './l4-chains.js';
import type { MergedGateway, MergedPort } from './merge.js';
import { gatewayListenerName } from './names.js';

const OUTBOUND = envoy.config.core.v3.TrafficDirection.OUTBOUND;
/** istiod's ISTIO_GATEWAY_TRANSPORT_SOCKET_CONNECT_TIMEOUT default. */
const TRANSPORT_SOCKET_CONNECT_TIMEOUT = { seconds: 15 };

interface Chain extends GatewayChain {
  readonly tls?: { readonly settings: ServerTlsSettings; readonly tcpServer: boolean };
}

export interface GatewayListeners {
  readonly listeners: Map<string, Listener>;
  /** Clusters AUTO_PASSTHROUGH chains route to. */
  readonly sniDnatClusters: SniDnatCluster[];
}

/** `headers`: its HCMs' (../listener/hcm-headers.ts: the gateway class's, with its pods' tracing). */
export function buildGatewayListeners(
  ctx: CompileContext,
  merged: MergedGateway,
  security: RouterSecurity,
  headers: ProxyHeaders,
): GatewayListeners {
  const listeners = new Map<string, Listener>();
  const sniDnatClusters: SniDnatCluster[] = [];
  // Per listener port: SNI hosts passthrough routes already claimed.
  const seenSni = new Map<number, Map<string, string>>();
  for (const port of merged.ports) {
    const name = gatewayListenerName(port.bind, port.number);
    const chains = portChains(ctx, port, seenSni, sniDnatClusters, security, headers);
    // Ports are distinct per (number, bind), so names are too.
    if (chains.length)
      listeners.set(
        name,
        assemble(name, port, chains, ctx.mesh.gatewayTopology?.proxyProtocol === true, ctx.mesh.tlsDefaults),
      );
  }
  // The mesh's connectionSettings buffer limit, on every gateway listener (istiod's buildGatewayListeners).
  const bufferLimit = headers.listenerBufferLimit;
  if (bufferLimit !== undefined)
    for (const l of listeners.values()) l.per_connection_buffer_limit_bytes = { value: bufferLimit };
  return { listeners, sniDnatClusters };
}

function portChains(
  ctx: CompileContext,
  port: MergedPort,
  seenSni: Map<number, Map<string, string>>,
  sniDnat: SniDnatCluster[],
  security: RouterSecurity,
  headers: ProxyHeaders,
): Chain[] {
  const statPrefix = `outbound_${gatewayListenerName(port.bind, port.number)}`;
  const hcm = (prefix: string, routeName: string) =>
    hcmFilter(buildGatewayHcm(ctx.mesh, headers, prefix, routeName, security.httpFilters as HttpFilter[]));
  // Network RBAC goes before tcp_proxy; AUTO_PASSTHROUGH chains get none (istiod builds them without authz).
  const secured = (chains: GatewayChain[]): GatewayChain[] =>
    security.tcpFilters.length
      ? chains.map((c) => ({ ...c, filters: [...(security.tcpFilters as NetworkFilter[]), ...c.filters] }))
      : chains;
  if (isHttpGatewayProtocol(port.protocol)) {
    return [{ filters: [hcm(statPrefix, port.routeName)], serverNames: [] }];
  }
  const out: Chain[] = [];
  for (const m of port.servers) {
    const tls = m.server.tls;
    if (isHttpServer(m.server) && tls) {
      out.push({
        filters: [hcm(m.server.name || statPrefix, m.routeName)],
        serverNames: m.sniHosts,
        tls: { settings: tls, tcpServer: false },
      });
    } else if (!tls) {
      out.push(...secured(tcpRouteChain(ctx, m, [])));
    } else if (tls.mode === 'AUTO_PASSTHROUGH') {
      const built = autoPassthroughChains(ctx, m);
      out.push(...built.chains);
      sniDnat.push(...built.clusters);
    } else if (tls.mode === 'PASSTHROUGH') {
      let seen = seenSni.get(port.number);
      if (!seen) seenSni.set(port.number, (seen = new Map()));
      out.push(...secured(passthroughChains(ctx, m, seen)));
    } else {
      out.push(
        ...secured(tcpRouteChain(ctx, m, m.sniHosts)).map((c) => ({ ...c, tls: { settings: tls, tcpServer: true } })),
      );
    }
  }
  return out;
}

/** `proxyProtocol`: strip a PROXY protocol header first (istiod's buildGatewayListener, for TCP listeners). */
function assemble(
  name: string,
  port: MergedPort,
  chains: readonly Chain[],
  proxyProtocol: boolean,
  tlsDefaults: MeshTlsConfig | undefined,
): Listener {
  const listener: Listener = {
    name,
    // A unix socket bind is a pipe (istiod's BuildAddress).
    address: listenerAddress(port.bind || '0.0.0.0', port.number),
    traffic_direction: OUTBOUND,
    filter_chains: chains.map((c) => toFilterChain(c, tlsDefaults)),
  };
  // The TLS context of every terminating chain offers ALPN, so any TLS chain needs the inspector.
  const filters = [
    ...(proxyProtocol ? [PROXY_PROTOCOL_FILTER] : []),
    ...(chains.some((c) => c.serverNames.length > 0 || c.tls) ? [TLS_INSPECTOR_FILTER] : []),
  ];
  if (filters.length) listener.listener_filters = filters;
  return listener;
}

/** `tlsDefaults`: the mesh's, under a terminating server's own TLS parameters. */
function toFilterChain(c: Chain, tlsDefaults: MeshTlsConfig | undefined): FilterChain {
  const chain: FilterChain = { filters: c.filters, transport_socket_connect_timeout: TRANSPORT_SOCKET_CONNECT_TIMEOUT };
  const match: NonNullable<FilterChain['filter_chain_match']> = {};
  if (c.serverNames.length && !c.serverNames.includes('*')) match.server_names = [...c.serverNames].sort();
  if (c.applicationProtocols?.length) match.application_protocols = [...c.applicationProtocols];
  if (Object.keys(match).length) chain.filter_chain_match = match;
  if (c.tls) {
    chain.transport_socket = {
      name: FilterName.TlsTransportSocket,
      typed_config: packAny(
        TypeName.DownstreamTlsContext,
        gatewayTlsContext(c.tls.settings, c.tls.tcpServer, tlsDefaults),
      ),
    };
  }
  if (c.metadata) chain.metadata = c.metadata;
  return chain;
}
