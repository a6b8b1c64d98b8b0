/**
 * Istio networking resources (networking.istio.io v1/v1beta1/v1alpha3), shaped as in the Istio
 * API reference. The inputs layer validates raw documents into these types; anything invalid is
 * reported and left out, so the compiler can trust every field here.
 */
import type { ObjectMeta } from './k8s.js';
import type { Origin } from './diagnostics.js';
import { flat } from './flat-string.js';

export interface StringMatch {
  readonly exact?: string;
  readonly prefix?: string;
  readonly regex?: string;
}

export interface HTTPMatchRequest {
  readonly name?: string;
  readonly uri?: StringMatch;
  readonly scheme?: StringMatch;
  readonly method?: StringMatch;
  readonly authority?: StringMatch;
  readonly headers?: Readonly<Record<string, StringMatch>>;
  readonly port?: number;
  readonly sourceLabels?: Readonly<Record<string, string>>;
  readonly gateways?: readonly string[];
  readonly queryParams?: Readonly<Record<string, StringMatch>>;
  readonly ignoreUriCase?: boolean;
  readonly withoutHeaders?: Readonly<Record<string, StringMatch>>;
  readonly sourceNamespace?: string;
  /** The route's stat_prefix in Envoy (its per-route statistics). */
  readonly statPrefix?: string;
}

export interface PortSelector {
  readonly number?: number;
}

export interface Destination {
  readonly host: string;
  readonly subset?: string;
  readonly port?: PortSelector;
}

export interface HeaderOperations {
  readonly set?: Readonly<Record<string, string>>;
  readonly add?: Readonly<Record<string, string>>;
  readonly remove?: readonly string[];
}

export interface Headers {
  readonly request?: HeaderOperations;
  readonly response?: HeaderOperations;
}

export interface HTTPRouteDestination {
  readonly destination: Destination;
  /** Percentage, 0–100. Absent when there is a single destination. */
  readonly weight?: number;
  readonly headers?: Headers;
}

export interface HTTPRedirect {
  readonly uri?: string;
  readonly authority?: string;
  readonly port?: number;
  readonly derivePort?: 'FROM_PROTOCOL_DEFAULT' | 'FROM_REQUEST_PORT';
  readonly scheme?: string;
  readonly redirectCode?: number;
  /** Replaces the matched path prefix (Envoy's `prefix_rewrite`): VirtualService `prefixRewrite`, Gateway API ReplacePrefixMatch. */
  readonly prefixRewrite?: string;
}

export interface HTTPDirectResponse {
  readonly status: number;
  readonly body?: { readonly string?: string; readonly bytes?: string };
}

export interface RegexRewrite {
  readonly match: string;
  readonly rewrite: string;
}

export interface HTTPRewrite {
  readonly uri?: string;
  readonly authority?: string;
  readonly uriRegexRewrite?: RegexRewrite;
}

export interface HTTPRetry {
  readonly attempts: number;
  /** Milliseconds. */
  readonly perTryTimeoutMs?: number;
  readonly retryOn?: string;
  readonly retryRemoteLocalities?: boolean;
  /** Set: retry on other hosts than the failed ones (true) or not (false); unset: istiod's default (true, but under a consistent hash). */
  readonly retryIgnorePreviousHosts?: boolean;
  /** Milliseconds: the retry back-off's base interval. */
  readonly backoffMs?: number;
}

export interface Percent {
  readonly value: number;
}

export interface HTTPFaultInjection {
  readonly delay?: { readonly fixedDelayMs: number; readonly percentage?: Percent };
  readonly abort?: { readonly httpStatus?: number; readonly grpcStatus?: string; readonly percentage?: Percent };
}

export interface HTTPMirrorPolicy {
  readonly destination: Destination;
  readonly percentage?: Percent;
}

export interface CorsPolicy {
  readonly allowOrigins?: readonly StringMatch[];
  readonly allowMethods?: readonly string[];
  readonly allowHeaders?: readonly string[];
  readonly exposeHeaders?: readonly string[];
  /** Milliseconds. */
  readonly maxAgeMs?: number;
  readonly allowCredentials?: boolean;
  /** What to do with a preflight request whose origin matches none (istiod's default: FORWARD). */
  readonly unmatchedPreflights?: 'FORWARD' | 'IGNORE';
}

export interface HTTPRoute {
  readonly name?: string;
  readonly match?: readonly HTTPMatchRequest[];
  readonly route?: readonly HTTPRouteDestination[];
  readonly redirect?: HTTPRedirect;
  readonly directResponse?: HTTPDirectResponse;
  readonly delegate?: { readonly name: string; readonly namespace?: string };
  readonly rewrite?: HTTPRewrite;
  /** Milliseconds. */
  readonly timeoutMs?: number;
  readonly retries?: HTTPRetry;
  readonly fault?: HTTPFaultInjection;
  /** `mirror` + `mirrorPercentage` are folded into `mirrors`. */
  readonly mirrors?: readonly HTTPMirrorPolicy[];
  readonly corsPolicy?: CorsPolicy;
  readonly headers?: Headers;
}

export interface L4MatchAttributes {
  readonly destinationSubnets?: readonly string[];
  readonly port?: number;
  readonly sourceLabels?: Readonly<Record<string, string>>;
  readonly gateways?: readonly string[];
  readonly sourceNamespace?: string;
}

export interface RouteDestination {
  readonly destination: Destination;
  readonly weight?: number;
}

export interface TCPRoute {
  readonly match?: readonly L4MatchAttributes[];
  readonly route: readonly RouteDestination[];
}

export interface TLSRoute {
  readonly match: readonly (L4MatchAttributes & { readonly sniHosts: readonly string[] })[];
  readonly route: readonly RouteDestination[];
}

export interface VirtualServiceSpec {
  readonly hosts: readonly string[];
  readonly gateways?: readonly string[];
  readonly http?: readonly HTTPRoute[];
  readonly tcp?: readonly TCPRoute[];
  readonly tls?: readonly TLSRoute[];
  readonly exportTo?: readonly string[];
}

export interface VirtualService {
  readonly kind: 'VirtualService';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  readonly origin: Origin;
  readonly spec: VirtualServiceSpec;
  /**
   * RFC 3339 as the API server writes it (a Gateway API route's, for one made from routes: the
   * oldest's): of several VirtualServices for one host a sidecar uses the oldest of its tier
   * (compile/virtual-services.ts sidecarOrder), as istiod's sortConfigByCreationTime.
   */
  readonly creationTimestamp?: string;
  /**
   * Made from a Gateway API route (src/compile/gateway-api/): routed with the Gateway API's
   * semantics, as istiod's `internal.istio.io/route-semantics: gateway` (path-separated prefixes,
   * a prefix rewrite to `/` that removes the prefix). Never set from an input document.
   */
  readonly gatewaySemantics?: true;
  /**
   * Made from a Kubernetes Ingress (src/compile/ingress/): istiod's `internal.istio.io/route-semantics:
   * ingress` (a prefix other than `/` matches whole path segments). Never set from an input document.
   */
  readonly ingressSemantics?: true;
}

export type SimpleLB = 'UNSPECIFIED' | 'LEAST_CONN' | 'RANDOM' | 'PASSTHROUGH' | 'ROUND_ROBIN' | 'LEAST_REQUEST';

export interface ConsistentHashLB {
  readonly httpHeaderName?: string;
  readonly httpCookie?: {
    readonly name: string;
    readonly path?: string;
    readonly ttlMs?: number;
    /** Extra attributes of the cookie Envoy sets (istiod: RouteAction_HashPolicy_CookieAttribute). */
    readonly attributes?: readonly { readonly name: string; readonly value?: string }[];
  };
  readonly useSourceIp?: boolean;
  readonly httpQueryParameterName?: string;
  readonly ringHash?: { readonly minimumRingSize?: number };
  readonly maglev?: { readonly tableSize?: number };
  /** Deprecated field, same meaning as ringHash.minimumRingSize. */
  readonly minimumRingSize?: number;
}

export interface LocalityLbSetting {
  readonly enabled?: boolean;
  readonly distribute?: readonly { readonly from: string; readonly to: Readonly<Record<string, number>> }[];
  readonly failover?: readonly { readonly from: string; readonly to: string }[];
  readonly failoverPriority?: readonly string[];
}

/** Envoy's zone-aware routing (exclusive with localityLbSetting). */
export interface ZoneAwareLbSetting {
  readonly enabled?: boolean;
  readonly failover?: readonly { readonly from: string; readonly to: string }[];
  readonly failoverPriority?: readonly string[];
  readonly minClusterSize?: number;
}

export interface LoadBalancerSettings {
  readonly simple?: SimpleLB;
  readonly consistentHash?: ConsistentHashLB;
  readonly localityLbSetting?: LocalityLbSetting;
  readonly zoneAwareLbSetting?: ZoneAwareLbSetting;
  /** Milliseconds. */
  readonly warmupDurationSecsMs?: number;
  /** Slow start (istiod's setWarmup; it wins over warmupDurationSecs). */
  readonly warmup?: {
    /** Milliseconds. */
    readonly durationMs: number;
    readonly minimumPercent?: number;
    readonly aggression?: number;
  };
}

export interface TcpKeepalive {
  readonly probes?: number;
  readonly timeMs?: number;
  readonly intervalMs?: number;
}

export interface ConnectionPoolSettings {
  readonly tcp?: {
    readonly maxConnections?: number;
    readonly connectTimeoutMs?: number;
    readonly tcpKeepalive?: TcpKeepalive;
    readonly maxConnectionDurationMs?: number;
    readonly idleTimeoutMs?: number;
  };
  readonly http?: {
    readonly http1MaxPendingRequests?: number;
    readonly http2MaxRequests?: number;
    readonly maxRequestsPerConnection?: number;
    readonly maxRetries?: number;
    readonly idleTimeoutMs?: number;
    readonly h2UpgradePolicy?: 'DEFAULT' | 'DO_NOT_UPGRADE' | 'UPGRADE';
    readonly useClientProtocol?: boolean;
    readonly maxConcurrentStreams?: number;
    /** HTTP/2 PING keepalive on upstream HTTP/2 connections (both required when set). */
    readonly http2KeepAlive?: { readonly intervalMs: number; readonly timeoutMs: number };
  };
}

export interface OutlierDetection {
  readonly consecutiveErrors?: number;
  readonly consecutive5xxErrors?: number;
  readonly consecutiveGatewayErrors?: number;
  readonly consecutiveLocalOriginFailures?: number;
  readonly splitExternalLocalOriginErrors?: boolean;
  readonly intervalMs?: number;
  readonly baseEjectionTimeMs?: number;
  readonly maxEjectionPercent?: number;
  readonly minHealthPercent?: number;
}

export type TLSMode = 'DISABLE' | 'SIMPLE' | 'MUTUAL' | 'ISTIO_MUTUAL';

export interface ClientTLSSettings {
  readonly mode: TLSMode;
  /** File paths on the proxy, or a credentialName: only references end up in a snapshot, never key material. */
  readonly clientCertificate?: string;
  readonly privateKey?: string;
  readonly caCertificates?: string;
  /** A CRL file on the proxy (file-based validation only). */
  readonly caCrl?: string;
  readonly credentialName?: string;
  readonly subjectAltNames?: readonly string[];
  readonly sni?: string;
  readonly insecureSkipVerify?: boolean;
}

export interface PortTrafficPolicy {
  readonly port?: PortSelector;
  readonly loadBalancer?: LoadBalancerSettings;
  readonly connectionPool?: ConnectionPoolSettings;
  readonly outlierDetection?: OutlierDetection;
  readonly tls?: ClientTLSSettings;
}

export interface TrafficPolicy {
  readonly loadBalancer?: LoadBalancerSettings;
  readonly connectionPool?: ConnectionPoolSettings;
  readonly outlierDetection?: OutlierDetection;
  readonly tls?: ClientTLSSettings;
  readonly portLevelSettings?: readonly PortTrafficPolicy[];
  /** Retries allowed as a share of active requests (circuit breakers' retry_budget; not port-level). */
  readonly retryBudget?: RetryBudget;
  /** The PROXY protocol header sent upstream (not port-level). */
  readonly proxyProtocol?: { readonly version: 'V1' | 'V2' };
  /** TCP tunnelled over HTTP CONNECT or POST to this target (not port-level; outbound tcp_proxy only). */
  readonly tunnel?: TunnelSettings;
}

export interface TunnelSettings {
  readonly protocol: 'CONNECT' | 'POST';
  readonly targetHost: string;
  readonly targetPort: number;
}

export interface RetryBudget {
  readonly percent?: number;
  readonly minRetryConcurrency?: number;
}

export interface Subset {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly trafficPolicy?: TrafficPolicy;
}

export interface DestinationRuleSpec {
  readonly host: string;
  readonly trafficPolicy?: TrafficPolicy;
  readonly subsets?: readonly Subset[];
  readonly exportTo?: readonly string[];
  readonly workloadSelector?: { readonly matchLabels?: Readonly<Record<string, string>> };
}

export interface DestinationRule {
  readonly kind: 'DestinationRule';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  readonly origin: Origin;
  readonly spec: DestinationRuleSpec;
}

export type IstioObject = VirtualService | DestinationRule;

/** The path istiod puts in `filter_metadata.istio.config` to say which object made a resource. */
export function configPath(kind: 'VirtualService' | 'DestinationRule', meta: ObjectMeta): string {
  const plural = kind === 'VirtualService' ? 'virtual-service' : 'destination-rule';
  return flat(`/apis/networking.istio.io/v1/namespaces/${meta.namespace}/${plural}/${meta.name}`);
}
