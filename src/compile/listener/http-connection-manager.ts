/**
 * The sidecar HttpConnectionManager, with istiod's defaults (buildHTTPConnectionManager):
 * codec AUTO, use_remote_address false, the mesh's path normalization (MeshConfig DEFAULT: paths
 * normalized, slashes neither merged nor unescaped), websocket upgrades allowed, no stream idle
 * timeout, no access log, the mesh's tracing (./tracing.ts), 100-continue proxied (ENABLE_100_CONTINUE_HEADERS); the
 * proxy headers of its listener class (./proxy-headers.ts: the Server header, x-request-id,
 * x-forwarded-port, inbound XFCC, the router's debug headers) and the mesh's `connectionSettings`
 * (timeouts, HTTP/2 limits, header and path handling).
 */
import { envoy, type HttpConnectionManager, type RouteConfiguration } from '../../xds/proto.js';
import { deepFreeze } from '../intern.js';
import { TypeName } from '../../xds/type-urls.js';
import {
  bool,
  FilterName,
  networkFilter,
  sidecarHttpFilters,
  SIDECAR_RDS_SOURCE,
  type HttpFilter,
  type NetworkFilter,
} from './filters.js';
import type { ProxyHeaders } from './proxy-headers.js';

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
  /** The proxy headers of the listener's class (proxyHeaders(mesh, class)). */
  readonly headers: ProxyHeaders;
}

// Parts every sidecar HCM holds: shared, frozen (../intern.ts).
const FALSE = deepFreeze(bool(false));
const TRUE = deepFreeze(bool(true));
const WEBSOCKET_UPGRADES = deepFreeze([{ upgrade_type: 'websocket' }]);
const NO_IDLE_TIMEOUT = deepFreeze({ seconds: 0 });
/** Inbound `set_current_client_cert_details`, one frozen object per ProxyHeaders. */
const certDetails = new WeakMap<ProxyHeaders, object>();

function clientCertDetails(
  headers: ProxyHeaders,
): NonNullable<HttpConnectionManager['set_current_client_cert_details']> {
  let details = certDetails.get(headers);
  if (!details) {
    const d = headers.setCurrentCertDetails;
    certDetails.set(
      headers,
      (details = deepFreeze({
        subject: d.subject ? TRUE : FALSE,
        ...(d.cert ? { cert: true } : {}),
        ...(d.chain ? { chain: true } : {}),
        ...(d.dns ? { dns: true } : {}),
        ...(d.uri ? { uri: true } : {}),
      })),
    );
  }
  return details as NonNullable<HttpConnectionManager['set_current_client_cert_details']>;
}

export function buildSidecarHcm(opts: SidecarHcmOptions): HttpConnectionManager {
  const { headers } = opts;
  const filters = sidecarHttpFilters(headers.suppressDebugHeaders);
  const httpFilters = opts.securityFilters?.length ? [...opts.securityFilters, ...filters] : (filters as HttpFilter[]);
  const hcm: HttpConnectionManager = {
    codec_type: Hcm.CodecType.AUTO,
    stat_prefix: opts.statPrefix,
    http_filters: httpFilters,
    use_remote_address: FALSE,
    normalize_path: headers.normalizePath ? TRUE : FALSE,
    path_with_escaped_slashes_action: headers.escapedSlashesAction,
    upgrade_configs: WEBSOCKET_UPGRADES,
    stream_idle_timeout: NO_IDLE_TIMEOUT,
    proxy_100_continue: true,
  };
  if (headers.mergeSlashes) hcm.merge_slashes = true;
  if (headers.serverName) hcm.server_name = headers.serverName;
  if (headers.serverPassThrough) hcm.server_header_transformation = Hcm.ServerHeaderTransformation.PASS_THROUGH;
  if (headers.requestIdDisabled) hcm.generate_request_id = FALSE;
  if (headers.xForwardedPort) hcm.append_x_forwarded_port = true;
  if (headers.tracing) hcm.tracing = headers.tracing;
  if (headers.requestIdExtension) hcm.request_id_extension = headers.requestIdExtension;
  if (opts.rds !== undefined) hcm.rds = { route_config_name: opts.rds, config_source: SIDECAR_RDS_SOURCE };
  else if (opts.routeConfig) hcm.route_config = opts.routeConfig;
  if (opts.inbound) {
    hcm.forward_client_cert_details = headers.forwardedClientCert;
    hcm.set_current_client_cert_details = clientCertDetails(headers);
  }
  if (opts.http2) hcm.http2_protocol_options = {};
  // The mesh's connectionSettings, last (istiod's applyConnectionSettingsToHCM): its HTTP/2 limits
  // go on every HCM, in the options an HTTP/2 port already has.
  if (headers.connection) Object.assign(hcm, headers.connection);
  return hcm;
}

export function hcmFilter(hcm: HttpConnectionManager): NetworkFilter {
  return networkFilter(FilterName.HttpConnectionManager, TypeName.HttpConnectionManager, hcm);
}
