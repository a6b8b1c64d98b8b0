/**
 * DestinationRule `proxyProtocol` → the cluster's transport sockets wrapped in Envoy's upstream
 * PROXY protocol socket (istiod's applyUpstreamProxyProtocol): the one transport socket, or each of
 * the auto-mTLS matches, or a raw buffer where there is none. Applied after TLS, as istiod does.
 */
import type { TrafficPolicy } from '../../model/istio.js';
import { packAny, type Cluster, type envoy } from '../../xds/proto.js';
import { TypeName } from '../../xds/type-urls.js';
import { RAW_BUFFER_TRANSPORT_SOCKET } from '../tls.js';

type TransportSocket = envoy.config.core.v3.TransportSocket.$Properties;

const UPSTREAM_PROXY_PROTOCOL = 'envoy.transport_sockets.upstream_proxy_protocol';
const RAW_BUFFER: TransportSocket = {
  name: RAW_BUFFER_TRANSPORT_SOCKET,
  typed_config: packAny(TypeName.RawBuffer, {}),
};

export function applyUpstreamProxyProtocol(c: Cluster, proxyProtocol: TrafficPolicy['proxyProtocol']): void {
  if (!proxyProtocol) return;
  // ProxyProtocolConfig.Version: V1 = 0, V2 = 1.
  const version = proxyProtocol.version === 'V2' ? 1 : 0;
  const wrap = (inner: TransportSocket): TransportSocket => ({
    name: UPSTREAM_PROXY_PROTOCOL,
    typed_config: packAny(TypeName.ProxyProtocolUpstreamTransport, {
      config: { version },
      transport_socket: inner,
    }),
  });
  const matches = c.transport_socket_matches;
  if (!c.transport_socket && !matches?.length) {
    c.transport_socket = wrap(RAW_BUFFER);
    return;
  }
  if (c.transport_socket) c.transport_socket = wrap(c.transport_socket);
  if (matches?.length)
    c.transport_socket_matches = matches.map((m) => ({
      ...m,
      transport_socket: wrap(m.transport_socket ?? RAW_BUFFER),
    }));
}
