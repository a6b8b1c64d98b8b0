/**
 * The parts of a ProxyConfig (the mesh's `defaultConfig`, a Pod's `proxy.istio.io/config`) that
 * meshsnap turns into xDS: proxy headers and gateway topology. A leaf of the model (no imports),
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
}

/** ProxyConfig.gatewayTopology (Topology); only what is set. */
export interface MeshGatewayTopology {
  readonly numTrustedProxies?: number;
  readonly forwardClientCertDetails?: ForwardClientCertDetails;
  /** `proxyProtocol` is set: gateway listeners strip a PROXY protocol header first. */
  readonly proxyProtocol?: true;
}
