/**
 * The gateway's HttpConnectionManager (istiod's buildGatewayConnectionManager over the listener
 * builder's defaults): the sidecar's codec, filters and path handling and the gateway class's
 * proxy headers, plus what differs at the edge — the client address is the remote address
 * (`use_remote_address`), the mesh's `defaultConfig.gatewayTopology` says how many proxies before
 * it to trust (`xff_num_trusted_hops`) and what to do with client certificate details (default
 * SANITIZE_SET: sanitized, then set from the verified connection).
 */
import type { MeshConfig } from '../../model/mesh-config.js';
import { envoy, type HttpConnectionManager } from '../../xds/proto.js';
import { bool, type HttpFilter } from '../listener/filters.js';
import { buildSidecarHcm } from '../listener/http-connection-manager.js';
import { envoyForwardClientCert, type ProxyHeaders } from '../listener/proxy-headers.js';

const Hcm = envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;

/** `headers`: the gateway class's proxy headers (../listener/hcm-headers.ts). */
export function buildGatewayHcm(
  mesh: MeshConfig,
  headers: ProxyHeaders,
  statPrefix: string,
  routeName: string,
  securityFilters: readonly HttpFilter[] = [],
): HttpConnectionManager {
  const topology = mesh.gatewayTopology;
  // Gateways take XFCC from the topology, not from proxyHeaders (istiod).
  const fcc = envoyForwardClientCert(topology?.forwardClientCertDetails ?? 'SANITIZE_SET');
  const hcm: HttpConnectionManager = {
    ...buildSidecarHcm({ statPrefix, rds: routeName, securityFilters, headers }),
    use_remote_address: bool(true),
    forward_client_cert_details: fcc,
    http_protocol_options: {},
  };
  if (topology?.numTrustedProxies) hcm.xff_num_trusted_hops = topology.numTrustedProxies;
  // Only where the mode forwards details (Envoy's rule).
  if (fcc === Hcm.ForwardClientCertDetails.APPEND_FORWARD || fcc === Hcm.ForwardClientCertDetails.SANITIZE_SET)
    hcm.set_current_client_cert_details = { subject: bool(true), cert: true, dns: true, uri: true };
  return hcm;
}
