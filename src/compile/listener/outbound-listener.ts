/**
 * Assembles an outbound (sidecar, iptables-captured) listener from its filter chains the way
 * istiod's buildListenerFromEntry does: not bound to the port (traffic arrives through
 * virtualOutbound's original-dst hand-off) unless a Sidecar egress listener with captureMode NONE
 * asks for a socket of its own, a match-all chain becomes the default chain when other
 * chains exist, and without one a passthrough chain catches what no chain matched.
 */
import type { CompileContext } from '../context.js';
import { BLACKHOLE_CLUSTER, PASSTHROUGH_CLUSTER } from '../names.js';
import { envoy, type FilterChain, type Listener, type Metadata } from '../../xds/proto.js';
import {
  bool,
  HTTP_INSPECTOR_FILTER,
  listenerAddress,
  TLS_INSPECTOR_FILTER,
  u32,
  type NetworkFilter,
} from './filters.js';
import { detectionTimeout } from './detection-timeout.js';
import { tcpProxyTo } from './tcp-proxy.js';

export interface OutboundChain {
  readonly filters: NetworkFilter[];
  readonly serverNames?: readonly string[];
  readonly prefixRanges?: readonly string[];
  readonly transportProtocol?: string;
  readonly applicationProtocols?: readonly string[];
  readonly metadata?: Metadata;
  /** The route config the chain's HCM asks for over RDS, if it has one. */
  readonly rds?: string;
}

const isMatchAll = (c: OutboundChain): boolean =>
  !c.serverNames?.length && !c.prefixRanges?.length && !c.transportProtocol && !c.applicationProtocols?.length;

/** Where unknown destinations go: mesh.outboundTrafficPolicy, and under ALLOW_ANY the Sidecar's egress proxy if any. */
export const egressCluster = (ctx: CompileContext): string =>
  ctx.mesh.outboundTrafficPolicy === 'REGISTRY_ONLY'
    ? BLACKHOLE_CLUSTER
    : (ctx.egressProxyCluster ?? PASSTHROUGH_CLUSTER);

/** `PassthroughFilterChain`: the fallback of listeners whose chains all match on something. */
export function passthroughFilterChain(ctx: CompileContext): FilterChain {
  return { name: 'PassthroughFilterChain', filter_chain_match: {}, filters: [tcpProxyTo(egressCluster(ctx))] };
}

/** `10.0.0.0/8` or a bare address (a /32 or /128 host range). */
export function cidrRange(cidr: string): envoy.config.core.v3.CidrRange.$Properties {
  const slash = cidr.indexOf('/');
  if (slash < 0) return { address_prefix: cidr, prefix_len: u32(cidr.includes(':') ? 128 : 32) };
  return { address_prefix: cidr.slice(0, slash), prefix_len: u32(Number(cidr.slice(slash + 1))) };
}

function toFilterChain(c: OutboundChain): FilterChain {
  const chain: FilterChain = { filters: c.filters };
  if (c.metadata) chain.metadata = c.metadata;
  if (!isMatchAll(c)) {
    const match: envoy.config.listener.v3.FilterChainMatch.$Properties = {};
    if (c.prefixRanges?.length) match.prefix_ranges = [...c.prefixRanges].sort().map(cidrRange);
    if (c.serverNames?.length && !c.serverNames.includes('*')) match.server_names = [...c.serverNames].sort();
    if (c.transportProtocol) match.transport_protocol = c.transportProtocol;
    if (c.applicationProtocols?.length) match.application_protocols = [...c.applicationProtocols];
    chain.filter_chain_match = match;
  }
  return chain;
}

// Shared by every outbound listener (there is one per TCP service port).
const NOT_BOUND = bool(false);
const ONE = u32(1);
const NO_TIMEOUT = { seconds: 0 };
const OUTBOUND = envoy.config.core.v3.TrafficDirection.OUTBOUND;

export function assembleOutboundListener(
  ctx: CompileContext,
  name: string,
  address: string,
  port: number,
  chains: readonly OutboundChain[],
  bindToPort = false,
): Listener {
  const listener: Listener = {
    name,
    address: listenerAddress(address, port),
    traffic_direction: OUTBOUND,
    continue_on_listener_filters_timeout: true,
  };
  // A bound socket gets istiod's MAX_CONNECTIONS_PER_SOCKET_EVENT_LOOP (1); Envoy binds by default.
  if (bindToPort) listener.max_connections_to_accept_per_socket_event = ONE;
  else listener.bind_to_port = NOT_BOUND;
  const needsTls = chains.some((c) => c.serverNames?.length);
  const needsHttp = chains.some((c) => c.applicationProtocols?.length);
  const listenerFilters = [];
  if (needsTls) listenerFilters.push(TLS_INSPECTOR_FILTER);
  if (needsHttp) listenerFilters.push(HTTP_INSPECTOR_FILTER);
  if (listenerFilters.length) listener.listener_filters = listenerFilters;
  // MeshConfig.protocolDetectionTimeout (default 0s: never give up on sniffing halfway) where the
  // HTTP inspector sniffs; elsewhere no timeout at all (istiod's buildListenerFromEntry).
  listener.listener_filters_timeout = needsHttp ? detectionTimeout(ctx) : NO_TIMEOUT;

  let defaultChain: FilterChain | undefined;
  const filterChains: FilterChain[] = [];
  for (const c of chains) {
    if (isMatchAll(c)) defaultChain ??= toFilterChain(c);
    else filterChains.push(toFilterChain(c));
  }
  if (filterChains.length === 0 && defaultChain) {
    listener.filter_chains = [defaultChain];
  } else {
    listener.filter_chains = filterChains;
    listener.default_filter_chain = defaultChain ?? passthroughFilterChain(ctx);
  }
  return listener;
}
