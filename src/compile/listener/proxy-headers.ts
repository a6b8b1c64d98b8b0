/**
 * What the proxies' HTTP connection managers and routes do with Istio's proxy headers: istiod's
 * util.GetProxyHeadersFromProxyConfig (pilot/pkg/networking/util/proxy_headers.go) over the mesh's
 * `defaultConfig.proxyHeaders`, per listener class. Without it: the Server header is overwritten
 * with `istio-envoy` on inbound and gateways (outbound keeps Envoy's `envoy`, as istiod keeps it),
 * x-request-id is generated, x-envoy-attempt-count is sent, the x-envoy debug headers are kept,
 * inbound forwards the client certificate (APPEND_FORWARD with subject, URI and DNS SANs), and
 * x-forwarded-port / -host are not added. It also carries what istiod's buildHTTPConnectionManager
 * sets from the mesh for every HCM: `pathNormalization` (what is done to request paths) and then
 * `defaultConfig.connectionSettings` (connection_settings.go resolveConnectionSettings and
 * applyConnectionSettingsToHCM: timeouts, HTTP/2 limits, header and path handling, over the EDGE
 * profile's defaults on gateways), and the gateway listeners' buffer limit. Pure; one frozen object
 * per mesh and class.
 */
import { hcmTracing, type HcmTracing } from './tracing.js';
import type {
  ForwardClientCertDetails,
  MeshConfig,
  MeshConnectionSettings,
  MeshProxyHeaders,
} from '../../model/mesh-config.js';
import { durationMs, envoy, type HttpConnectionManager } from '../../xds/proto.js';
import { deepFreeze } from '../intern.js';

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
  /**
   * …and Envoy's `path_with_escaped_slashes_action` (DECODE_AND_MERGE_SLASHES: UNESCAPE_AND_FORWARD;
   * else KEEP_UNCHANGED), either of the last two as `connectionSettings` says when it sets them.
   */
  readonly escapedSlashesAction: number;
  /** The other HCM fields `connectionSettings` sets (frozen, shared); absent when it sets none. */
  readonly connection?: HcmConnection;
  /** Gateways: the listeners' `per_connection_buffer_limit_bytes` (istiod's buildGatewayListeners). */
  readonly listenerBufferLimit?: number;
  /**
   * The HCMs' `tracing` (./tracing.ts; frozen, shared); absent with `enableTracing: false`, or
   * istiod's Telemetry path's (./telemetry-tracing.ts) where it applies (proxyHeaders' `tracing`).
   */
  readonly tracing?: HcmTracing;
  /** The HCMs' `request_id_extension`, which only the Telemetry path sets; absent: Envoy's default. */
  readonly requestIdExtension?: RequestIdExtension;
}

export type RequestIdExtension =
  envoy.extensions.filters.network.http_connection_manager.v3.RequestIDExtension.$Properties;

/** What istiod's applyConnectionSettingsToHCM sets on an HCM, besides the path handling. */
export type HcmConnection = Pick<
  HttpConnectionManager,
  | 'common_http_protocol_options'
  | 'stream_idle_timeout'
  | 'request_timeout'
  | 'request_headers_timeout'
  | 'drain_timeout'
  | 'http2_protocol_options'
>;

/** Istio's ForwardClientCertDetails as Envoy's (istiod's MeshConfigToEnvoyForwardClientCertDetails: one lower). */
export const envoyForwardClientCert = (mode: ForwardClientCertDetails): number => Hcm.ForwardClientCertDetails[mode];

/** By the mesh's proxy headers, then its connection settings, then class and path normalization. */
const memo = new WeakMap<object, WeakMap<object, Map<string, ProxyHeaders>>>();
const NO_HEADERS: MeshProxyHeaders = Object.freeze({});
const NO_SETTINGS: MeshConnectionSettings = Object.freeze({});

/**
 * What an HCM's tracing is made of: istiod's legacy path's `tracing` (./tracing.ts), or the
 * Telemetry path's choice (./telemetry-tracing.ts), which may also set the request id extension.
 */
export interface HcmTracingFields {
  readonly tracing?: HcmTracing;
  readonly requestId?: RequestIdExtension;
}

/**
 * The headers of `cls` HCMs under `mesh`, tracing as `tracing` says (the Telemetry path's choice
 * for their proxies: ./hcm-headers.ts), else as the mesh does (the legacy path).
 */
export function proxyHeaders(mesh: MeshConfig, cls: ListenerClass, tracing?: HcmTracingFields): ProxyHeaders {
  if (tracing) return withTracingFields(untracedHeaders(mesh, cls), tracing);
  // Read per route and listener: one lookup for a mesh already seen (a compile's mesh object).
  let byClass = byMesh.get(mesh);
  if (!byClass) byMesh.set(mesh, (byClass = new Map()));
  let found = byClass.get(cls);
  if (!found) byClass.set(cls, (found = withMeshTracing(mesh, untracedHeaders(mesh, cls))));
  return found;
}

/** Equal parts give the same object across meshes (the inbound HCM templates are kept per ProxyHeaders). */
function untracedHeaders(mesh: MeshConfig, cls: ListenerClass): ProxyHeaders {
  const ph = mesh.proxyHeaders ?? NO_HEADERS;
  const cs = mesh.connectionSettings ?? NO_SETTINGS;
  let bySettings = memo.get(ph);
  if (!bySettings) memo.set(ph, (bySettings = new WeakMap()));
  let byKey = bySettings.get(cs);
  if (!byKey) bySettings.set(cs, (byKey = new Map()));
  const key = `${cls}|${mesh.pathNormalization ?? ''}`;
  let out = byKey.get(key);
  if (!out) byKey.set(key, (out = Object.freeze(resolve(ph, cls, mesh.pathNormalization, cs))));
  return out;
}

/** The headers with the mesh's legacy tracing (none with `enableTracing: false`). */
function withMeshTracing(mesh: MeshConfig, headers: ProxyHeaders): ProxyHeaders {
  const tracing = hcmTracing(mesh);
  if (!tracing) return headers;
  let fields = legacyFields.get(tracing);
  if (!fields) legacyFields.set(tracing, (fields = Object.freeze({ tracing })));
  return withTracingFields(headers, fields);
}

/** Untraced headers with these tracing fields: one object per headers and fields. */
function withTracingFields(headers: ProxyHeaders, fields: HcmTracingFields): ProxyHeaders {
  if (!fields.tracing && !fields.requestId) return headers;
  let byFields = traced.get(headers);
  if (!byFields) traced.set(headers, (byFields = new WeakMap()));
  let out = byFields.get(fields);
  if (!out) {
    out = Object.freeze({
      ...headers,
      ...(fields.tracing ? { tracing: fields.tracing } : {}),
      ...(fields.requestId ? { requestIdExtension: fields.requestId } : {}),
    });
    byFields.set(fields, out);
  }
  return out;
}

/** Each mesh config's ProxyHeaders per class (mesh configs are not changed once built). */
const byMesh = new WeakMap<MeshConfig, Map<ListenerClass, ProxyHeaders>>();
/** The legacy path's tracing as fields, one object per tracing. */
const legacyFields = new WeakMap<HcmTracing, HcmTracingFields>();
/** Untraced ProxyHeaders with tracing fields, one object per headers and fields. */
const traced = new WeakMap<ProxyHeaders, WeakMap<HcmTracingFields, ProxyHeaders>>();

/**
 * istiod's applyEdgeProfileDefaults: with `profile: EDGE`, a gateway (Router) takes Envoy's edge
 * defaults for what the settings leave unset; sidecars take the settings as they are.
 */
function edgeDefaults(cs: MeshConnectionSettings, cls: ListenerClass): MeshConnectionSettings {
  if (!cs.edge || cls !== 'gateway') return cs;
  return {
    listenerPerConnectionBufferLimitBytes: 32_768,
    httpIdleTimeoutMs: 3_600_000,
    httpStreamIdleTimeoutMs: 300_000,
    httpRequestTimeoutMs: 300_000,
    httpRequestHeadersTimeoutMs: 60_000,
    httpMaxConcurrentStreams: 100,
    http2InitialStreamWindowSize: 65_536,
    http2InitialConnectionWindowSize: 1_048_576,
    httpHeadersWithUnderscoresAction: 'REJECT_REQUEST',
    httpMergeSlashes: true,
    httpPathWithEscapedSlashesAction: 'UNESCAPE_AND_REDIRECT',
    ...cs,
  };
}

const CoreHttp = envoy.config.core.v3.HttpProtocolOptions;

/** applyConnectionSettingsToHCM's fields other than the path handling; undefined when none is set. */
function hcmConnection(cs: MeshConnectionSettings): HcmConnection | undefined {
  const out: { -readonly [K in keyof HcmConnection]: HcmConnection[K] } = {};
  const d = (ms: number | undefined) => (ms === undefined ? undefined : durationMs(ms));
  if (
    cs.httpIdleTimeoutMs !== undefined ||
    cs.httpMaxConnectionDurationMs !== undefined ||
    cs.httpMaxStreamDurationMs !== undefined ||
    cs.httpHeadersWithUnderscoresAction !== undefined
  ) {
    const common: NonNullable<HcmConnection['common_http_protocol_options']> = {};
    if (cs.httpIdleTimeoutMs !== undefined) common.idle_timeout = d(cs.httpIdleTimeoutMs);
    if (cs.httpMaxConnectionDurationMs !== undefined)
      common.max_connection_duration = d(cs.httpMaxConnectionDurationMs);
    if (cs.httpMaxStreamDurationMs !== undefined) common.max_stream_duration = d(cs.httpMaxStreamDurationMs);
    // ALLOW is Envoy's zero value: the options are there, the field is not (as istiod's proto).
    const underscores = cs.httpHeadersWithUnderscoresAction;
    if (underscores !== undefined && underscores !== 'ALLOW')
      common.headers_with_underscores_action = CoreHttp.HeadersWithUnderscoresAction[underscores];
    out.common_http_protocol_options = common;
  }
  if (cs.httpStreamIdleTimeoutMs !== undefined) out.stream_idle_timeout = d(cs.httpStreamIdleTimeoutMs);
  if (cs.httpRequestTimeoutMs !== undefined) out.request_timeout = d(cs.httpRequestTimeoutMs);
  if (cs.httpRequestHeadersTimeoutMs !== undefined) out.request_headers_timeout = d(cs.httpRequestHeadersTimeoutMs);
  if (cs.httpDrainTimeoutMs !== undefined) out.drain_timeout = d(cs.httpDrainTimeoutMs);
  if (
    cs.httpMaxConcurrentStreams !== undefined ||
    cs.http2InitialStreamWindowSize !== undefined ||
    cs.http2InitialConnectionWindowSize !== undefined
  ) {
    const h2: NonNullable<HcmConnection['http2_protocol_options']> = {};
    if (cs.httpMaxConcurrentStreams !== undefined) h2.max_concurrent_streams = { value: cs.httpMaxConcurrentStreams };
    if (cs.http2InitialStreamWindowSize !== undefined)
      h2.initial_stream_window_size = { value: cs.http2InitialStreamWindowSize };
    if (cs.http2InitialConnectionWindowSize !== undefined)
      h2.initial_connection_window_size = { value: cs.http2InitialConnectionWindowSize };
    out.http2_protocol_options = h2;
  }
  return Object.keys(out).length ? deepFreeze(out) : undefined;
}

function resolve(
  ph: MeshProxyHeaders,
  cls: ListenerClass,
  normalization: MeshConfig['pathNormalization'],
  meshSettings: MeshConnectionSettings,
): ProxyHeaders {
  const cs = edgeDefaults(meshSettings, cls);
  const connection = hcmConnection(cs);
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
    // connectionSettings over pathNormalization where it sets them (istiod).
    mergeSlashes:
      cs.httpMergeSlashes ?? (normalization === 'MERGE_SLASHES' || normalization === 'DECODE_AND_MERGE_SLASHES'),
    escapedSlashesAction:
      Hcm.PathWithEscapedSlashesAction[
        cs.httpPathWithEscapedSlashesAction ??
          (normalization === 'DECODE_AND_MERGE_SLASHES' ? 'UNESCAPE_AND_FORWARD' : 'KEEP_UNCHANGED')
      ],
    ...(connection ? { connection } : {}),
    ...(cls === 'gateway' && cs.listenerPerConnectionBufferLimitBytes !== undefined
      ? { listenerBufferLimit: cs.listenerPerConnectionBufferLimitBytes }
      : {}),
  };
}
