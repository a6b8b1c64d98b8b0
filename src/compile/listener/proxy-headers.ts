/**
 * What the proxies' HTTP connection managers and routes do with Istio's proxy headers: istiod's
 * util.GetProxyHeadersFromProxyConfig (pilot/pkg/networking/util/proxy_headers.go) over the mesh's
 * `defaultConfig.proxyHeaders`, per listener class. Without it: the Server header is overwritten
 * with `istio-envoy` on inbound and gateways (outbound keeps Envoy's `envoy`, as istiod keeps it),
 * x-request-id is generated, x-envoy-attempt-count is sent, the x-envoy debug headers are kept,
 * inbound forwards the client certificate (APPEND_FORWARD with subject, URI and DNS SANs), and
 * x-forwarded-port / -host are not added. It also carries the mesh's `pathNormalization` (what
 * every HCM does to request paths), which istiod sets in the same builder. Pure; one frozen object
 * per mesh and class.
 */
import type { ForwardClientCertDetails, MeshConfig, MeshProxyHeaders } from '../../model/mesh-config.js';
import { envoy } from '../../xds/proto.js';

const Hcm = envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;

/** istiod's ListenerClass, for what differs by it. */
export type ListenerClass = 'inbound' | 'outbound' | 'gateway';

export interface ProxyHeaders {
  /** The Server header's value (`server_name`); empty: Envoy's default (`envoy`). */
  readonly serverName: string;
  /** `server.disabled`: the upstream's Server header passes through (PASS_THROUGH). */
  readonly serverPassThrough: boolean;
  /** Envoy's ForwardClientCertDetails for inbound HCMs. */
  readonly forwardedClientCert: number;
  /** Inbound `set_current_client_cert_details`. */
  readonly setCurrentCertDetails: {
    readonly subject: boolean;
    readonly uri: boolean;
    readonly dns: boolean;
    readonly cert: boolean;
    readonly chain: boolean;
  };
  /** Virtual hosts' `include_request_attempt_count`. */
  readonly includeRequestAttemptCount: boolean;
  /** `requestId.disabled`: no x-request-id is generated. */
  readonly requestIdDisabled: boolean;
  /** The router's `suppress_envoy_headers`. */
  readonly suppressDebugHeaders: boolean;
  /** The HCM's `append_x_forwarded_port`. */
  readonly xForwardedPort: boolean;
  /** Rewriting routes' and the catch-all route's `append_x_forwarded_host`. */
  readonly xForwardedHost: boolean;
  /** MeshConfig `pathNormalization` (istiod's buildHTTPConnectionManager): `normalize_path`… */
  readonly normalizePath: boolean;
  /** …`merge_slashes` (MERGE_SLASHES, DECODE_AND_MERGE_SLASHES)… */
  readonly mergeSlashes: boolean;
  /** …and unescaping %2F / %5C (DECODE_AND_MERGE_SLASHES: UNESCAPE_AND_FORWARD; else KEEP_UNCHANGED). */
  readonly unescapeSlashes: boolean;
}

/** Istio's ForwardClientCertDetails as Envoy's (istiod's MeshConfigToEnvoyForwardClientCertDetails: one lower). */
export const envoyForwardClientCert = (mode: ForwardClientCertDetails): number => Hcm.ForwardClientCertDetails[mode];

/** By the mesh's proxy headers, then class and path normalization. */
const memo = new WeakMap<object, Map<string, ProxyHeaders>>();
const NO_HEADERS: MeshProxyHeaders = Object.freeze({});

export function proxyHeaders(mesh: MeshConfig, cls: ListenerClass): ProxyHeaders {
  const ph = mesh.proxyHeaders ?? NO_HEADERS;
  let byKey = memo.get(ph);
  if (!byKey) memo.set(ph, (byKey = new Map()));
  const key = `${cls}|${mesh.pathNormalization ?? ''}`;
  let out = byKey.get(key);
  if (!out) byKey.set(key, (out = Object.freeze(resolve(ph, cls, mesh.pathNormalization))));
  return out;
}

function resolve(
  ph: MeshProxyHeaders,
  cls: ListenerClass,
  normalization: MeshConfig['pathNormalization'],
): ProxyHeaders {
  // "Likely due to a mistake, outbound uses "envoy" while inbound uses "istio-envoy"" (istiod).
  const defaultServer = cls === 'outbound' ? '' : 'istio-envoy';
  const details = ph.setCurrentClientCertDetails;
  return {
    serverName: ph.serverDisabled ? '' : (ph.serverValue ?? defaultServer),
    serverPassThrough: ph.serverDisabled === true,
    forwardedClientCert: envoyForwardClientCert(ph.forwardedClientCert ?? 'APPEND_FORWARD'),
    setCurrentCertDetails: {
      subject: details?.subject ?? true,
      uri: details?.uri ?? true,
      dns: details?.dns ?? true,
      cert: details?.cert ?? false,
      chain: details?.chain ?? false,
    },
    includeRequestAttemptCount: ph.attemptCountDisabled !== true,
    requestIdDisabled: ph.requestIdDisabled === true,
    suppressDebugHeaders: ph.envoyDebugHeadersDisabled === true,
    xForwardedPort: ph.xForwardedPort === true,
    xForwardedHost: ph.xForwardedHost === true,
    normalizePath: normalization !== 'NONE',
    mergeSlashes: normalization === 'MERGE_SLASHES' || normalization === 'DECODE_AND_MERGE_SLASHES',
    unescapeSlashes: normalization === 'DECODE_AND_MERGE_SLASHES',
  };
}
