/**
 * The sidecar HttpConnectionManager, with istiod's defaults (buildHTTPConnectionManager):
 * codec AUTO, use_remote_address false, path normalization on (MeshConfig DEFAULT), escaped
 * slashes kept, websocket upgrades allowed, no stream idle timeout, no access log, no tracing.
 */
import { envoy, type HttpConnectionManager, type RouteConfiguration } from '../../xds/proto.js';
import { deepFreeze } from '../intern.js';
import { TypeName } from '../../xds/type-urls.js';
import {
  bool,
  FilterName,
  networkFilter,
  SIDECAR_HTTP_FILTERS,
  SIDECAR_RDS_SOURCE,
  type HttpFilter,
  type NetworkFilter,
} from './filters.js';

const Hcm = envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;

export interface SidecarHcmOptions {
  readonly statPrefix: string;
  /** Route configuration fetched over RDS (outbound)… */
  readonly rds?: string;
  /** …or given inline (inbound). */
  readonly routeConfig?: RouteConfiguration;
  /** Inbound: forward the client certificate details to the application, as istiod does. */
  readonly inbound?: boolean;
  /** Inbound HTTP/2 and gRPC ports get explicit HTTP/2 options. */
  readonly http2?: boolean;
  /** Security filters (authn, authz) that run before fault, cors and the router. */
  readonly securityFilters?: readonly HttpFilter[];
}

// Parts every sidecar HCM holds: shared, frozen (../intern.ts).
const FALSE = deepFreeze(bool(false));
const TRUE = deepFreeze(bool(true));
const WEBSOCKET_UPGRADES = deepFreeze([{ upgrade_type: 'websocket' }]);
const NO_IDLE_TIMEOUT = deepFreeze({ seconds: 0 });
const CLIENT_CERT_DETAILS = deepFreeze({ subject: TRUE, uri: true, dns: true });

export function buildSidecarHcm(opts: SidecarHcmOptions): HttpConnectionManager {
  const hcm: HttpConnectionManager = {
    codec_type: Hcm.CodecType.AUTO,
    stat_prefix: opts.statPrefix,
    http_filters: opts.securityFilters?.length
      ? [...opts.securityFilters, ...SIDECAR_HTTP_FILTERS]
      : (SIDECAR_HTTP_FILTERS as HttpFilter[]),
    use_remote_address: FALSE,
    normalize_path: TRUE,
    path_with_escaped_slashes_action: Hcm.PathWithEscapedSlashesAction.KEEP_UNCHANGED,
    upgrade_configs: WEBSOCKET_UPGRADES,
    stream_idle_timeout: NO_IDLE_TIMEOUT,
  };
  if (opts.rds !== undefined) hcm.rds = { route_config_name: opts.rds, config_source: SIDECAR_RDS_SOURCE };
  else if (opts.routeConfig) hcm.route_config = opts.routeConfig;
  if (opts.inbound) {
    hcm.forward_client_cert_details = Hcm.ForwardClientCertDetails.APPEND_FORWARD;
    hcm.set_current_client_cert_details = CLIENT_CERT_DETAILS;
  }
  if (opts.http2) hcm.http2_protocol_options = {};
  return hcm;
}

export function hcmFilter(hcm: HttpConnectionManager): NetworkFilter {
  return networkFilter(FilterName.HttpConnectionManager, TypeName.HttpConnectionManager, hcm);
}
