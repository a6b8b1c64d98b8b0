/**
 * The building blocks every listener shares: Envoy's well-known filter names, the ALPN sets istiod
 * matches on, the HTTP filters (fault, cors, router) and the listener filters (original_dst and
 * the inspectors). Filters with a fixed config are packed once at module load and shared.
 */
import { envoy, packAny, type Any } from '../../xds/proto.js';
import { TypeName } from '../../xds/type-urls.js';
import { UNIX_BIND_PREFIX } from '../../model/sidecar.js';
import { deepFreeze } from '../intern.js';

type NetworkFilter = envoy.config.listener.v3.Filter.$Properties;
type HttpFilter = envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter.$Properties;
type ListenerFilter = envoy.config.listener.v3.ListenerFilter.$Properties;
type ConfigSource = envoy.config.core.v3.ConfigSource.$Properties;

export type { ConfigSource, HttpFilter, ListenerFilter, NetworkFilter };

/** Envoy's extension names, as istiod writes them (`wellknown`). */
export const FilterName = {
  HttpConnectionManager: 'envoy.filters.network.http_connection_manager',
  TcpProxy: 'envoy.filters.network.tcp_proxy',
  Fault: 'envoy.filters.http.fault',
  Cors: 'envoy.filters.http.cors',
  Router: 'envoy.filters.http.router',
  OriginalDst: 'envoy.filters.listener.original_dst',
  TlsInspector: 'envoy.filters.listener.tls_inspector',
  ProxyProtocol: 'envoy.filters.listener.proxy_protocol',
  HttpInspector: 'envoy.filters.listener.http_inspector',
  TlsTransportSocket: 'envoy.transport_sockets.tls',
} as const;

/** Transport protocols the TLS inspector reports (`raw_buffer` when it sees no TLS). */
export const TLS_TRANSPORT = 'tls';
export const RAW_BUFFER_TRANSPORT = 'raw_buffer';

/** Plaintext HTTP as the HTTP inspector names it (istiod leaves out http/1.0 unless HTTP10 is on). */
export const PLAINTEXT_HTTP_ALPNS: readonly string[] = ['http/1.1', 'h2c'];
/**
 * What a sniffed port's HTTP chain takes (src/compile/sniffing.ts): HTTP/1.1 only. istiod takes h2c
 * too and sends it on as HTTP/2 (use_downstream_protocol on the port's clusters); meshsnap's
 * outbound clusters are shared with gateways, which istiod keeps on HTTP/1.1 there, so h2c stays on
 * the TCP chain, passed through untouched as before.
 */
export const SNIFFED_HTTP_ALPNS: readonly string[] = ['http/1.1'];
/** What a client sidecar's ALPN filter advertises for HTTP over Istio mTLS. */
export const MTLS_HTTP_ALPNS: readonly string[] = ['istio-http/1.0', 'istio-http/1.1', 'istio-h2'];
/** Every ALPN an Istio client sends over mTLS (HTTP and TCP). */
export const ALL_ISTIO_MTLS_ALPNS: readonly string[] = [
  'istio',
  'istio-peer-exchange',
  'istio-http/1.0',
  'istio-http/1.1',
  'istio-h2',
];
/** TCP over Istio mTLS with metadata exchange. */
export const MTLS_TCP_ALPNS: readonly string[] = ['istio-peer-exchange', 'istio'];

const typed = (name: string, typedConfig: Any) => ({ name, typed_config: typedConfig });
/** A filter with a fixed config: frozen, the mark of a shared part whose bytes and check are kept (../intern.ts). */
const fixed = (name: string, typedConfig: Any) => deepFreeze(typed(name, typedConfig));

/** The HTTP filters of every sidecar HCM, router last. The routes put per-route fault/cors config under these names. */
export const FAULT_FILTER: HttpFilter = fixed(FilterName.Fault, packAny(TypeName.Fault, {}));
export const CORS_FILTER: HttpFilter = fixed(FilterName.Cors, packAny(TypeName.Cors, {}));
export const ROUTER_FILTER: HttpFilter = fixed(FilterName.Router, packAny(TypeName.Router, {}));
export const SIDECAR_HTTP_FILTERS: readonly HttpFilter[] = Object.freeze([FAULT_FILTER, CORS_FILTER, ROUTER_FILTER]);
/** The router without the x-envoy debug headers (ProxyConfig `proxyHeaders.envoyDebugHeaders.disabled`). */
const QUIET_ROUTER_FILTER: HttpFilter = fixed(
  FilterName.Router,
  packAny(TypeName.Router, { suppress_envoy_headers: true }),
);
const QUIET_SIDECAR_HTTP_FILTERS: readonly HttpFilter[] = Object.freeze([
  FAULT_FILTER,
  CORS_FILTER,
  QUIET_ROUTER_FILTER,
]);
/** SIDECAR_HTTP_FILTERS, its router suppressing the x-envoy debug headers when asked. */
export const sidecarHttpFilters = (suppressDebugHeaders: boolean): readonly HttpFilter[] =>
  suppressDebugHeaders ? QUIET_SIDECAR_HTTP_FILTERS : SIDECAR_HTTP_FILTERS;
/** gRPC clients ignore CORS; istiod gives them fault and router only. */
export const PROXYLESS_HTTP_FILTERS: readonly HttpFilter[] = Object.freeze([FAULT_FILTER, ROUTER_FILTER]);

export const ORIGINAL_DST_FILTER: ListenerFilter = fixed(FilterName.OriginalDst, packAny(TypeName.OriginalDst, {}));
/** istiod lowers the inspector's read buffer from 64 KiB to 512 bytes (a ClientHello fits). */
export const TLS_INSPECTOR_FILTER: ListenerFilter = fixed(
  FilterName.TlsInspector,
  packAny(TypeName.TlsInspector, { initial_read_buffer_size: { value: 512 } }),
);
/** Strips a PROXY protocol header (gateways behind a load balancer that sends one: `gatewayTopology.proxyProtocol`). */
export const PROXY_PROTOCOL_FILTER: ListenerFilter = fixed(
  FilterName.ProxyProtocol,
  packAny(TypeName.ProxyProtocol, {}),
);
export const HTTP_INSPECTOR_FILTER: ListenerFilter = fixed(
  FilterName.HttpInspector,
  packAny(TypeName.HttpInspector, {}),
);

/** RDS over the ADS stream, as istiod configures sidecars (no initial fetch timeout: wait for routes). */
export const SIDECAR_RDS_SOURCE: ConfigSource = {
  ads: {},
  initial_fetch_timeout: { seconds: 0 },
  resource_api_version: envoy.config.core.v3.ApiVersion.V3,
};

/** A network filter whose typed config is packed now. */
export function networkFilter(name: string, typeName: string, config: object): NetworkFilter {
  return typed(name, packAny(typeName, config));
}

/** A `google.protobuf.UInt32Value`. */
export const u32 = (value: number) => ({ value });
/** A `google.protobuf.BoolValue`. */
export const bool = (value: boolean) => ({ value });

export const socketAddress = (address: string, port: number): envoy.config.core.v3.Address.$Properties => ({
  socket_address: { address, port_value: port },
});

/** istiod's BuildAddress: a `unix://` bind is a pipe (its path without the prefix; `@name` is abstract), else a socket address. */
export const listenerAddress = (address: string, port: number): envoy.config.core.v3.Address.$Properties =>
  address.startsWith(UNIX_BIND_PREFIX)
    ? { pipe: { path: address.slice(UNIX_BIND_PREFIX.length) } }
    : socketAddress(address, port);
