/**
 * The parts of a ProxyConfig (the mesh's `defaultConfig`, a Pod's `proxy.istio.io/config`) that
 * meshsnap turns into xDS: proxy headers, gateway topology and connection settings. A leaf of the model (no imports),
 * so the Kubernetes objects can carry a pod's own without depending on the mesh config.
 */

/**
 * ProxyConfig.ForwardClientCertDetails, as written (istiod maps it to Envoy's enum, one lower:
 * MeshConfigToEnvoyForwardClientCertDetails); UNDEFINED is left out.
 */
export type ForwardClientCertDetails =
  'SANITIZE' | 'FORWARD_ONLY' | 'APPEND_FORWARD' | 'SANITIZE_SET' | 'ALWAYS_FORWARD_ONLY';

/** ProxyConfig.ProxyHeaders (istiod's util.GetProxyHeadersFromProxyConfig reads it); only what is set. */
export interface MeshProxyHeaders {
  readonly forwardedClientCert?: ForwardClientCertDetails;
  /** `setCurrentClientCertDetails`: each set flag as written. */
  readonly setCurrentClientCertDetails?: {
    readonly subject?: boolean;
    readonly cert?: boolean;
    readonly chain?: boolean;
    readonly dns?: boolean;
    readonly uri?: boolean;
  };
  /** `requestId.disabled`. */
  readonly requestIdDisabled?: true;
  /** `server.disabled`, else `server.value` (the Server header's value). */
  readonly serverDisabled?: true;
  readonly serverValue?: string;
  /** `attemptCount.disabled`. */
  readonly attemptCountDisabled?: true;
  /** `envoyDebugHeaders.disabled`. */
  readonly envoyDebugHeadersDisabled?: true;
  /** `xForwardedPort.enabled`, `xForwardedHost.enabled`. */
  readonly xForwardedPort?: true;
  readonly xForwardedHost?: true;
}

/** The xDS parts of a ProxyConfig meshsnap applies: the mesh's `defaultConfig`, a Pod's `proxy.istio.io/config`. */
export interface ProxyConfigParts {
  readonly proxyHeaders?: MeshProxyHeaders;
  readonly gatewayTopology?: MeshGatewayTopology;
  readonly connectionSettings?: MeshConnectionSettings;
  readonly tracing?: ProxyTracing;
}

/** A `tracing.customTags` entry: the three kinds istiod builds into xDS (buildCustomTagsFromProxyConfig). */
export type TracingCustomTag =
  | { readonly tag: string; readonly literal: string }
  | { readonly tag: string; readonly environment: { readonly name: string; readonly defaultValue?: string } }
  | { readonly tag: string; readonly header: { readonly name: string; readonly defaultValue?: string } };

/**
 * ProxyConfig.tracing, what istiod reads of it into the HCMs' `tracing` (the legacy path of
 * configureTracingFromTelemetry); only what is set. The tracer itself (zipkin, datadog, …) is the
 * proxy bootstrap's, made by istio-agent: not xDS.
 */
export interface ProxyTracing {
  /** Percent of requests sampled; 0 is unset (istiod: PILOT_TRACE_SAMPLING, 1). */
  readonly sampling?: number;
  /** Sorted by tag. */
  readonly customTags?: readonly TracingCustomTag[];
  readonly maxPathTagLength?: number;
  readonly enableIstioTags?: boolean;
}

/** ProxyConfig.gatewayTopology (Topology); only what is set. */
export interface MeshGatewayTopology {
  readonly numTrustedProxies?: number;
  readonly forwardClientCertDetails?: ForwardClientCertDetails;
  /** `proxyProtocol` is set: gateway listeners strip a PROXY protocol header first. */
  readonly proxyProtocol?: true;
}

/**
 * ProxyConfig.ConnectionSettings, as istiod reads it into xDS (pilot/pkg/networking/core/
 * connection_settings.go); only what is set. Durations in milliseconds; the enums by their names
 * without the UNSPECIFIED value.
 */
export interface MeshConnectionSettings {
  /** `profile: EDGE` (SIDECAR, the default, is left out): Envoy's edge defaults on gateways. */
  readonly edge?: true;
  readonly listenerPerConnectionBufferLimitBytes?: number;
  readonly httpIdleTimeoutMs?: number;
  readonly httpMaxConnectionDurationMs?: number;
  readonly httpDrainTimeoutMs?: number;
  readonly httpRequestTimeoutMs?: number;
  readonly httpRequestHeadersTimeoutMs?: number;
  readonly httpStreamIdleTimeoutMs?: number;
  readonly httpMaxStreamDurationMs?: number;
  readonly httpMaxConcurrentStreams?: number;
  readonly http2InitialStreamWindowSize?: number;
  readonly http2InitialConnectionWindowSize?: number;
  readonly httpHeadersWithUnderscoresAction?: 'ALLOW' | 'REJECT_REQUEST' | 'DROP_HEADER';
  readonly httpMergeSlashes?: boolean;
  readonly httpPathWithEscapedSlashesAction?:
    'KEEP_UNCHANGED' | 'REJECT_REQUEST' | 'UNESCAPE_AND_REDIRECT' | 'UNESCAPE_AND_FORWARD';
}
