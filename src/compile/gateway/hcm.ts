/**
 * The gateway's HttpConnectionManager (istiod's buildGatewayConnectionManager over the listener
 * builder's defaults): the sidecar's codec, filters and path handling, plus what differs at the
 * edge — the client address is the remote address (`use_remote_address`), and client certificate
 * details are sanitized then set from the verified connection (`SANITIZE_SET`).
 */
import { envoy, type HttpConnectionManager } from '../../xds/proto.js';
import { bool, type HttpFilter } from '../listener/filters.js';
import { buildSidecarHcm } from '../listener/http-connection-manager.js';

const Hcm = envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;

export function buildGatewayHcm(
  statPrefix: string,
  routeName: string,
  securityFilters: readonly HttpFilter[] = [],
): HttpConnectionManager {
  return {
    ...buildSidecarHcm({ statPrefix, rds: routeName, securityFilters }),
    use_remote_address: bool(true),
    forward_client_cert_details: Hcm.ForwardClientCertDetails.SANITIZE_SET,
    set_current_client_cert_details: { subject: bool(true), cert: true, dns: true, uri: true },
    http_protocol_options: {},
  };
}
