/** Type URLs of the xDS resources and of the extensions meshsnap emits. */
const PREFIX = 'type.googleapis.com/';

export const TypeName = {
  Listener: 'envoy.config.listener.v3.Listener',
  RouteConfiguration: 'envoy.config.route.v3.RouteConfiguration',
  Cluster: 'envoy.config.cluster.v3.Cluster',
  ClusterLoadAssignment: 'envoy.config.endpoint.v3.ClusterLoadAssignment',
  HttpConnectionManager: 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
  TcpProxy: 'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
  Router: 'envoy.extensions.filters.http.router.v3.Router',
  Fault: 'envoy.extensions.filters.http.fault.v3.HTTPFault',
  Cors: 'envoy.extensions.filters.http.cors.v3.Cors',
  CorsPolicy: 'envoy.extensions.filters.http.cors.v3.CorsPolicy',
  OriginalDst: 'envoy.extensions.filters.listener.original_dst.v3.OriginalDst',
  TlsInspector: 'envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector',
  ProxyProtocol: 'envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol',
  HttpInspector: 'envoy.extensions.filters.listener.http_inspector.v3.HttpInspector',
  UpstreamTlsContext: 'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
  DownstreamTlsContext: 'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
  RawBuffer: 'envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer',
  ProxyProtocolUpstreamTransport: 'envoy.extensions.transport_sockets.proxy_protocol.v3.ProxyProtocolUpstreamTransport',
  HttpProtocolOptions: 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
  DfpClusterConfig: 'envoy.extensions.clusters.dynamic_forward_proxy.v3.ClusterConfig',
  DfpHttpFilterConfig: 'envoy.extensions.filters.http.dynamic_forward_proxy.v3.FilterConfig',
  SniDfpFilterConfig: 'envoy.extensions.filters.network.sni_dynamic_forward_proxy.v3.FilterConfig',
} as const;
export type TypeName = (typeof TypeName)[keyof typeof TypeName];

/** Type URLs made so far, by type name (a few dozen). */
const urls = new Map<string, string>();

/**
 * `type.googleapis.com/<name>`, one string per type name: every packed Any of a snapshot holds
 * one, and a concatenation made per call is a string object per Any (~50k at 10k services).
 */
export function typeUrl(name: string): string {
  let url = urls.get(name);
  if (url === undefined) urls.set(name, (url = PREFIX + name));
  return url;
}
export const typeNameOf = (url: string): string =>
  url.startsWith(PREFIX) ? url.slice(PREFIX.length) : url.slice(url.lastIndexOf('/') + 1);

/** The four xDS resource types of a snapshot, in make-before-break push order. */
export const XDS_TYPES = ['clusters', 'endpoints', 'listeners', 'routes'] as const;
export type XdsType = (typeof XDS_TYPES)[number];

export const XDS_TYPE_NAME: Readonly<Record<XdsType, string>> = {
  clusters: TypeName.Cluster,
  endpoints: TypeName.ClusterLoadAssignment,
  listeners: TypeName.Listener,
  routes: TypeName.RouteConfiguration,
};

export const XDS_TYPE_URL: Readonly<Record<XdsType, string>> = {
  clusters: typeUrl(TypeName.Cluster),
  endpoints: typeUrl(TypeName.ClusterLoadAssignment),
  listeners: typeUrl(TypeName.Listener),
  routes: typeUrl(TypeName.RouteConfiguration),
};

export function xdsTypeOfUrl(url: string): XdsType | undefined {
  for (const t of XDS_TYPES) if (XDS_TYPE_URL[t] === url) return t;
  return undefined;
}
