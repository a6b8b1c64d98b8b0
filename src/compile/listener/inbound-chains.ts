/**
 * Filter chains of `virtualInbound` under PERMISSIVE mTLS (istiod: inboundChainForOpts with the
 * *WithMxc match options). Each port gets one chain per way traffic can arrive: Istio mTLS
 * (recognised by the `istio*` ALPNs the client sidecar sends), plaintext, and for TCP also
 * non-Istio TLS, which is proxied untouched. Chains of one port share a name, as in istiod.
 */
import { INBOUND_PASSTHROUGH_CLUSTER, inboundClusterName, VIRTUAL_INBOUND, wildcardListenerName } from '../names.js';
import { isHttpProtocol, type Protocol } from '../../model/service-model.js';
import type { FilterChain, Route, RouteConfiguration } from '../../xds/proto.js';
import {
  ALL_ISTIO_MTLS_ALPNS,
  bool,
  MTLS_HTTP_ALPNS,
  MTLS_TCP_ALPNS,
  PLAINTEXT_HTTP_ALPNS,
  RAW_BUFFER_TRANSPORT,
  TLS_TRANSPORT,
  u32,
  type NetworkFilter,
} from './filters.js';
import { buildSidecarHcm, hcmFilter } from './http-connection-manager.js';
import type { InboundPort } from './inbound-ports.js';
import { tcpProxyTo } from './tcp-proxy.js';
import { INBOUND_MTLS_HTTP_SOCKET, INBOUND_MTLS_TCP_SOCKET } from './tls-context.js';

type ChainKind = 'http' | 'tcp';

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

/** istiod's protocol.IsGRPC: gRPC-Web counts (it is HTTP/2 towards the app too). */
export const isGrpcFamily = (p: Protocol): boolean => p === 'GRPC' || p === 'GRPC-Web';

function optionsFor(protocol: Protocol): readonly MatchOption[] {
  if (isHttpProtocol(protocol)) return PERMISSIVE_HTTP;
  if (protocol === 'Unsupported') return PERMISSIVE_AUTO;
  return PERMISSIVE_TCP;
}

interface ChainTarget {
  readonly destinationPort?: number;
  readonly name: (kind: ChainKind) => string;
  readonly filters: (kind: ChainKind) => NetworkFilter[];
}

function chainsFor(target: ChainTarget, options: readonly MatchOption[]): FilterChain[] {
  return options.map((o) => {
    const chain: FilterChain = {
      name: target.name(o.kind),
      filter_chain_match: {
        ...(target.destinationPort !== undefined ? { destination_port: u32(target.destinationPort) } : {}),
        transport_protocol: o.transportProtocol,
        ...(o.alpns ? { application_protocols: [...o.alpns] } : {}),
      },
      filters: target.filters(o.kind),
    };
    if (o.mtls) chain.transport_socket = o.kind === 'http' ? INBOUND_MTLS_HTTP_SOCKET : INBOUND_MTLS_TCP_SOCKET;
    return chain;
  });
}

/** The chains of one service target port, named like istiod's `0.0.0.0_<targetPort>`. */
export function portChains(p: InboundPort): FilterChain[] {
  const cluster = inboundClusterName(p.targetPort);
  const name = wildcardListenerName(p.targetPort);
  const grpc = isGrpcFamily(p.port.protocol);
  const http2 = grpc || p.port.protocol === 'HTTP2';
  let http: NetworkFilter[] | undefined;
  let tcp: NetworkFilter[] | undefined;
  const filters = (kind: ChainKind): NetworkFilter[] => {
    if (kind === 'tcp') return (tcp ??= [tcpProxyTo(cluster)]);
    const routeConfig = inboundRouteConfig(cluster, p.port.port, `${p.service.hostname}:${p.port.port}/*`, !grpc);
    return (http ??= [
      hcmFilter(buildSidecarHcm({ statPrefix: `inbound_${name}`, routeConfig, inbound: true, http2 })),
    ]);
  };
  return chainsFor({ destinationPort: p.targetPort, name: () => name, filters }, optionsFor(p.port.protocol));
}

let passthrough: readonly FilterChain[] | undefined;

/**
 * Traffic to ports no service declares still reaches the application, through
 * `InboundPassthroughCluster`. The same for every workload: built once.
 */
export function passthroughChains(): readonly FilterChain[] {
  return (passthrough ??= buildPassthroughChains());
}

function buildPassthroughChains(): FilterChain[] {
  const cluster = INBOUND_PASSTHROUGH_CLUSTER;
  const http = [
    hcmFilter(
      buildSidecarHcm({
        statPrefix: cluster,
        routeConfig: inboundRouteConfig(cluster, 0, ':0/*', true),
        inbound: true,
      }),
    ),
  ];
  const tcp = [tcpProxyTo(cluster)];
  return chainsFor(
    {
      name: (kind) => (kind === 'http' ? 'virtualInbound-catchall-http' : VIRTUAL_INBOUND),
      filters: (kind) => (kind === 'http' ? http : tcp),
    },
    PERMISSIVE_AUTO,
  );
}

/** Connections addressed to 15006 itself would loop through this listener forever. */
export function blackholeChain(listenerPort: number, blackholeCluster: string): FilterChain {
  return {
    name: 'virtualInbound-blackhole',
    filter_chain_match: { destination_port: u32(listenerPort) },
    filters: [tcpProxyTo(blackholeCluster)],
  };
}

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
  const route: Route = {
    name: 'default',
    match: { prefix: '/' },
    decorator: { operation },
    route: {
      cluster,
      timeout: { seconds: 0 },
      max_stream_duration: { max_stream_duration: { seconds: 0 }, grpc_timeout_header_max: { seconds: 0 } },
      ...(retry ? { retry_policy: { retry_on: 'reset-before-request', num_retries: u32(2) } } : {}),
    },
  };
  return {
    name: cluster,
    virtual_hosts: [{ name: `inbound|http|${servicePort}`, domains: ['*'], routes: [route] }],
    validate_clusters: bool(false),
  };
}
