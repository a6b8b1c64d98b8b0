/**
 * Filter chains of `virtualInbound` (istiod: inboundChainForOpts with getFilterChainMatchOptions).
 * Each port gets one chain per way traffic may arrive under its PeerAuthentication mode:
 * - PERMISSIVE: Istio mTLS (recognised by the `istio*` ALPNs the client sidecar sends),
 *   plaintext, and for TCP also non-Istio TLS, which is proxied untouched;
 * - STRICT: only TLS, terminated as Istio mTLS (a client certificate is required), so plaintext
 *   matches no chain and is refused;
 * - DISABLE: only plaintext.
 * Chains of one port share a name, as in istiod. The workload's authorization filters run in
 * every chain: before the router in HTTP chains, before tcp_proxy in TCP ones.
 */
import { INBOUND_PASSTHROUGH_CLUSTER, inboundClusterName, VIRTUAL_INBOUND, wildcardListenerName } from '../names.js';
import { flat } from '../../model/flat-string.js';
import type { MeshTlsConfig } from '../../model/mesh-config.js';
import type { EffectiveMtlsMode } from '../../model/peer-authentication.js';
import { isHttpProtocol, type Protocol } from '../../model/service-model.js';
import type { envoy, FilterChain, Route, RouteConfiguration } from '../../xds/proto.js';
import { deepFreeze, InternTable } from '../intern.js';
import { modeForPort } from '../security/peer-authn.js';
import type { WorkloadSecurity } from '../security/workload-security.js';
import {
  ALL_ISTIO_MTLS_ALPNS,
  bool,
  MTLS_HTTP_ALPNS,
  MTLS_TCP_ALPNS,
  PLAINTEXT_HTTP_ALPNS,
  RAW_BUFFER_TRANSPORT,
  TLS_TRANSPORT,
  u32,
  type HttpFilter,
  type NetworkFilter,
} from './filters.js';
import { buildSidecarHcm, hcmFilter } from './http-connection-manager.js';
import type { ProxyHeaders } from './proxy-headers.js';
import { inboundHcmFilter } from './inbound-hcm.js';
import type { InboundPort } from './inbound-ports.js';
import { tcpProxyTo } from './tcp-proxy.js';
import { sidecarIngressTlsSocket, type InboundMtlsSockets } from './tls-context.js';

type ChainKind = 'http' | 'tcp';
type TransportSocket = envoy.config.core.v3.TransportSocket.$Properties;

interface MatchOption {
  readonly kind: ChainKind;
  readonly transportProtocol: string;
  readonly alpns?: readonly string[];
  /** Terminate Istio mTLS on this chain. */
  readonly mtls?: boolean;
}

const PERMISSIVE_HTTP: readonly MatchOption[] = [
  { kind: 'http', transportProtocol: TLS_TRANSPORT, alpns: ALL_ISTIO_MTLS_ALPNS, mtls: true },
  { kind: 'http', transportProtocol: RAW_BUFFER_TRANSPORT },
];
const PERMISSIVE_TCP: readonly MatchOption[] = [
  { kind: 'tcp', transportProtocol: TLS_TRANSPORT, alpns: ALL_ISTIO_MTLS_ALPNS, mtls: true },
  { kind: 'tcp', transportProtocol: TLS_TRANSPORT },
  { kind: 'tcp', transportProtocol: RAW_BUFFER_TRANSPORT },
];
/** Protocol not declared: sniff HTTP, else TCP. */
const PERMISSIVE_AUTO: readonly MatchOption[] = [
  { kind: 'http', transportProtocol: TLS_TRANSPORT, alpns: MTLS_HTTP_ALPNS, mtls: true },
  { kind: 'http', transportProtocol: RAW_BUFFER_TRANSPORT, alpns: PLAINTEXT_HTTP_ALPNS },
  { kind: 'tcp', transportProtocol: TLS_TRANSPORT, alpns: MTLS_TCP_ALPNS, mtls: true },
  { kind: 'tcp', transportProtocol: RAW_BUFFER_TRANSPORT },
  { kind: 'tcp', transportProtocol: TLS_TRANSPORT },
];

/** STRICT: the HTTP chain only for HTTP over mTLS; anything else over TLS is TCP; plaintext matches nothing. */
const STRICT_HTTP: readonly MatchOption[] = [{ kind: 'http', transportProtocol: TLS_TRANSPORT, mtls: true }];
const STRICT_TCP: readonly MatchOption[] = [{ kind: 'tcp', transportProtocol: TLS_TRANSPORT, mtls: true }];
const STRICT_AUTO: readonly MatchOption[] = [
  { kind: 'http', transportProtocol: TLS_TRANSPORT, alpns: MTLS_HTTP_ALPNS, mtls: true },
  { kind: 'tcp', transportProtocol: TLS_TRANSPORT, mtls: true },
];
const PLAINTEXT_HTTP: readonly MatchOption[] = [{ kind: 'http', transportProtocol: RAW_BUFFER_TRANSPORT }];
const PLAINTEXT_TCP: readonly MatchOption[] = [{ kind: 'tcp', transportProtocol: RAW_BUFFER_TRANSPORT }];
const PLAINTEXT_AUTO: readonly MatchOption[] = [
  { kind: 'http', transportProtocol: RAW_BUFFER_TRANSPORT, alpns: PLAINTEXT_HTTP_ALPNS },
  { kind: 'tcp', transportProtocol: RAW_BUFFER_TRANSPORT },
];

const OPTIONS: Readonly<Record<EffectiveMtlsMode, Readonly<Record<ChainKind | 'auto', readonly MatchOption[]>>>> = {
  PERMISSIVE: { http: PERMISSIVE_HTTP, tcp: PERMISSIVE_TCP, auto: PERMISSIVE_AUTO },
  STRICT: { http: STRICT_HTTP, tcp: STRICT_TCP, auto: STRICT_AUTO },
  DISABLE: { http: PLAINTEXT_HTTP, tcp: PLAINTEXT_TCP, auto: PLAINTEXT_AUTO },
};

/** istiod's protocol.IsGRPC: gRPC-Web counts (it is HTTP/2 towards the app too). */
export const isGrpcFamily = (p: Protocol): boolean => p === 'GRPC' || p === 'GRPC-Web';

/**
 * A port's chains: HTTP, TCP, or both behind the HTTP inspector where the port names no protocol
 * (a Sidecar ingress port's `Unsupported`, a Service port defaulted to TCP but not one of the
 * well-known TCP ports: istiod sniffs both inbound). Only HTTP a client marks as such over Istio
 * mTLS (`istio-http/*` ALPNs, which istiod's clients send and meshsnap's do not) or plaintext
 * HTTP/1.1 and h2c reach the HTTP chain; the rest, meshsnap's sidecars' mTLS included, the TCP one.
 */
function optionsFor(port: { readonly protocol: Protocol; readonly protocolDefaulted?: true }, mode: EffectiveMtlsMode) {
  const byKind = OPTIONS[mode];
  if (isHttpProtocol(port.protocol)) return byKind.http;
  if (port.protocol === 'Unsupported' || port.protocolDefaulted) return byKind.auto;
  return byKind.tcp;
}

interface ChainTarget {
  readonly destinationPort?: number;
  readonly name: (kind: ChainKind) => string;
  readonly filters: (kind: ChainKind) => NetworkFilter[];
}

/**
 * The chains of `target`, one per option. `sharedTcp`: where the target's TCP chains are the same
 * for every workload (see portChains), the table that holds them.
 */
function chainsFor(
  target: ChainTarget,
  options: readonly MatchOption[],
  mtls: InboundMtlsSockets,
  ownTls?: TransportSocket,
  sharedTcp?: InternTable<FilterChain>,
): FilterChain[] {
  return options.map((o) =>
    sharedTcp && o.kind === 'tcp'
      ? sharedTcp.get(`${target.destinationPort}|${optionKey(o)}|${mtls.key}`, () => chainFor(target, o, mtls))
      : chainFor(target, o, mtls, ownTls),
  );
}

function chainFor(
  target: ChainTarget,
  o: MatchOption,
  mtls: InboundMtlsSockets,
  ownTls?: TransportSocket,
): FilterChain {
  const chain: FilterChain = {
    name: target.name(o.kind),
    filter_chain_match: chainMatch(target.destinationPort, o),
    filters: target.filters(o.kind),
  };
  if (ownTls) chain.transport_socket = ownTls;
  else if (o.mtls) chain.transport_socket = o.kind === 'http' ? mtls.http : mtls.tcp;
  return chain;
}

const optionKey = (o: MatchOption): string =>
  `${o.transportProtocol}|${o.alpns?.join(',') ?? '-'}|${o.mtls ? 'm' : ''}`;

type ChainMatch = envoy.config.listener.v3.FilterChainMatch.$Properties;
/** Chains of one port and match option look alike in every workload: one shared match (../intern.ts). */
const chainMatches = new InternTable<ChainMatch>();

function chainMatch(destinationPort: number | undefined, o: MatchOption): ChainMatch {
  return chainMatches.get(`${destinationPort}|${o.transportProtocol}|${o.alpns?.join(',') ?? '-'}`, () => ({
    ...(destinationPort !== undefined ? { destination_port: u32(destinationPort) } : {}),
    transport_protocol: o.transportProtocol,
    ...(o.alpns ? { application_protocols: [...o.alpns] } : {}),
  }));
}

/** istiod's Protocol.AfterTLSTermination. */
const afterTlsTermination = (p: Protocol): Protocol => (p === 'HTTPS' ? 'HTTP' : p === 'TLS' ? 'TCP' : p);

/**
 * The chains of one service target port, named like istiod's `0.0.0.0_<targetPort>`. A Sidecar
 * ingress `tls` applies only where the port's mTLS mode is DISABLE (istiod: buildInboundListeners):
 * one chain for TLS, terminated with the listener's certificates, serving the protocol inside.
 */
export function portChains(
  input: InboundPort,
  security: WorkloadSecurity,
  headers: ProxyHeaders,
  mtls: InboundMtlsSockets,
  tlsDefaults?: MeshTlsConfig,
): FilterChain[] {
  const mode = modeForPort(security.mtls, input.targetPort);
  const ownTls = input.tls && mode === 'DISABLE' ? input.tls : undefined;
  const p = ownTls ? { ...input, port: { ...input.port, protocol: afterTlsTermination(input.port.protocol) } } : input;
  const cluster = inboundClusterName(p.targetPort);
  const name = wildcardListenerName(p.targetPort);
  const grpc = isGrpcFamily(p.port.protocol);
  const http2 = grpc || p.port.protocol === 'HTTP2';
  let http: NetworkFilter[] | undefined;
  let tcp: NetworkFilter[] | undefined;
  const filters = (kind: ChainKind): NetworkFilter[] => {
    if (kind === 'tcp') return (tcp ??= [...security.tcpFilters, tcpProxyTo(cluster)]);
    return (http ??= [
      inboundHcmFilter({
        statPrefix: flat(`inbound_${name}`),
        routeConfig: inboundRouteConfig(cluster, p.port.port, flat(`${p.service.hostname}:${p.port.port}/*`), !grpc),
        inbound: true,
        http2,
        securityFilters: security.httpFilters as HttpFilter[],
        headers,
      }),
    ]);
  };
  const target: ChainTarget = { destinationPort: p.targetPort, name: () => name, filters };
  if (ownTls) {
    const kind: ChainKind = isHttpProtocol(p.port.protocol) ? 'http' : 'tcp';
    return chainsFor(
      target,
      [{ kind, transportProtocol: TLS_TRANSPORT }],
      mtls,
      sidecarIngressTlsSocket(ownTls, tlsDefaults),
    );
  }
  return chainsFor(target, optionsFor(p.port, mode), mtls, undefined, sharedTcpChains(security));
}

/**
 * A port's TCP chains depend only on its target port (which names the chain and the cluster and
 * is matched), the match option and the workload's policies: one shared, frozen chain for every
 * workload with the same policies (../intern.ts), whose bytes and check are kept (the wire
 * writer's and the validator's frozen-shared types).
 */
const tcpChains = new WeakMap<WorkloadSecurity, InternTable<FilterChain>>();

function sharedTcpChains(security: WorkloadSecurity): InternTable<FilterChain> {
  let table = tcpChains.get(security);
  if (!table) tcpChains.set(security, (table = new InternTable<FilterChain>()));
  return table;
}

const passthroughCache = new WeakMap<
  WorkloadSecurity,
  Map<ProxyHeaders, Map<InboundMtlsSockets, readonly FilterChain[]>>
>();

/**
 * Traffic to ports no service declares still reaches the application, through
 * `InboundPassthroughCluster`: chains without a port match in the workload's mode, then chains for
 * each port of its PeerAuthentication's portLevelMtls that no service declares (istiod:
 * ForPassthrough). The same for every workload with the same policies: built once per security.
 */
export function passthroughChains(
  security: WorkloadSecurity,
  servicePorts: ReadonlySet<number>,
  headers: ProxyHeaders,
  mtls: InboundMtlsSockets,
): readonly FilterChain[] {
  const extraPorts = [...security.mtls.perPort.keys()].filter((p) => !servicePorts.has(p));
  if (extraPorts.length > 0) return buildPassthroughChains(security, extraPorts, headers, mtls);
  let byHeaders = passthroughCache.get(security);
  if (!byHeaders) passthroughCache.set(security, (byHeaders = new Map()));
  let byMtls = byHeaders.get(headers);
  if (!byMtls) byHeaders.set(headers, (byMtls = new Map()));
  let chains = byMtls.get(mtls);
  // Frozen: one copy in every listener of these policies, encoded and checked once.
  if (!chains) byMtls.set(mtls, (chains = deepFreeze(buildPassthroughChains(security, [], headers, mtls))));
  return chains;
}

function buildPassthroughChains(
  security: WorkloadSecurity,
  extraPorts: readonly number[],
  headers: ProxyHeaders,
  mtls: InboundMtlsSockets,
): FilterChain[] {
  const cluster = INBOUND_PASSTHROUGH_CLUSTER;
  const http = [
    hcmFilter(
      buildSidecarHcm({
        statPrefix: cluster,
        routeConfig: inboundRouteConfig(cluster, 0, ':0/*', true),
        inbound: true,
        securityFilters: security.httpFilters as HttpFilter[],
        headers,
      }),
    ),
  ];
  const tcp = [...security.tcpFilters, tcpProxyTo(cluster)];
  const target = (destinationPort?: number): ChainTarget => ({
    ...(destinationPort !== undefined ? { destinationPort } : {}),
    name: (kind) => (kind === 'http' ? 'virtualInbound-catchall-http' : VIRTUAL_INBOUND),
    filters: (kind) => (kind === 'http' ? http : tcp),
  });
  return [
    ...chainsFor(target(), OPTIONS[security.mtls.mode].auto, mtls),
    ...extraPorts.flatMap((port) => chainsFor(target(port), OPTIONS[modeForPort(security.mtls, port)].auto, mtls)),
  ];
}

/** Connections addressed to the listener's own port (15006 by default) would loop through it forever. */
export function blackholeChain(listenerPort: number, blackholeCluster: string): FilterChain {
  return blackholeChains.get(`${listenerPort}|${blackholeCluster}`, () => ({
    name: 'virtualInbound-blackhole',
    filter_chain_match: { destination_port: u32(listenerPort) },
    filters: [tcpProxyTo(blackholeCluster)],
  }));
}
const blackholeChains = new InternTable<FilterChain>();

/**
 * The inline route of an inbound HTTP chain (istiod: buildSidecarInboundHTTPRouteConfig): everything
 * to the inbound cluster with no timeout; a retry when the connection to the app resets before the
 * request was sent, except for gRPC where that breaks streaming.
 */
function inboundRouteConfig(
  cluster: string,
  servicePort: number,
  operation: string,
  retry: boolean,
): RouteConfiguration {
  // Only the decorator names the service: the action is the same for every workload's port.
  const route: Route = {
    name: 'default',
    match: MATCH_ALL,
    decorator: { operation },
    route: inboundAction(cluster, retry),
  };
  return {
    name: cluster,
    virtual_hosts: [{ name: `inbound|http|${servicePort}`, domains: ANY_DOMAIN, routes: [route] }],
    validate_clusters: NO_VALIDATION,
  };
}

const MATCH_ALL = deepFreeze({ prefix: '/' });
const ANY_DOMAIN = deepFreeze(['*']);
const NO_VALIDATION = deepFreeze(bool(false));
const inboundActions = new InternTable<NonNullable<Route['route']>>();

/** Everything to the inbound cluster, no timeout; a retry when the connection to the app resets before the request was sent. */
const inboundAction = (cluster: string, retry: boolean): NonNullable<Route['route']> =>
  inboundActions.get(`${retry ? 'r' : '-'}${cluster}`, () => ({
    cluster,
    timeout: { seconds: 0 },
    max_stream_duration: { max_stream_duration: { seconds: 0 }, grpc_timeout_header_max: { seconds: 0 } },
    ...(retry ? { retry_policy: { retry_on: 'reset-before-request', num_retries: u32(2) } } : {}),
  }));
