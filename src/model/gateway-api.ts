/**
 * Kubernetes Gateway API objects (gateway.networking.k8s.io: GatewayClass, Gateway, HTTPRoute,
 * GRPCRoute in v1/v1beta1; TCPRoute, TLSRoute in v1alpha2; ReferenceGrant in v1beta1/v1), shaped as
 * the API types (apis/v1/*_types.go) with the spec's defaults filled in. The inputs layer validates
 * raw documents into these (src/inputs/validate/gateway-api/); the compiler converts them into
 * Istio Gateways and VirtualServices (src/compile/gateway-api/), as istiod does.
 *
 * The Gateway API's `Gateway` is `kind: 'KubernetesGateway'` here (istiod's name for it), so that
 * it never meets the Istio `Gateway` in a kind-keyed table (src/compile/incremental/inputs-patch.ts);
 * diagnostics and status name it `Gateway`, as the user wrote it.
 */
import type { Origin } from './diagnostics.js';
import type { ObjectMeta } from './k8s.js';

export const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';

/** Istio's controller name; GatewayClasses naming it (Istio's own `istio` class) are compiled. */
export const ISTIO_GATEWAY_CONTROLLER = 'istio.io/gateway-controller';
/** meshsnap's alias: a GatewayClass naming it is compiled exactly as an Istio one. */
export const MESHSNAP_GATEWAY_CONTROLLER = 'meshsnap.dev/gateway-controller';
export const OWN_CONTROLLERS: readonly string[] = [ISTIO_GATEWAY_CONTROLLER, MESHSNAP_GATEWAY_CONTROLLER];

/** The label Istio's automated deployment puts on a Gateway's pods: it selects the gateway proxies. */
export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

/** metadata, plus what status and route precedence need. */
export interface GatewayApiMeta extends ObjectMeta {
  /** metadata.generation: reported back as observedGeneration. */
  readonly generation?: number;
  /** RFC 3339, as the API server writes it: older routes win ties (the spec's precedence). */
  readonly creationTimestamp?: string;
}

interface Base<K extends string> {
  readonly kind: K;
  readonly apiVersion: string;
  readonly meta: GatewayApiMeta;
  readonly origin: Origin;
}

export interface GatewayClass extends Base<'GatewayClass'> {
  readonly spec: { readonly controllerName: string; readonly description?: string };
}

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values: readonly string[];
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

export interface RouteGroupKind {
  /** Defaults to gateway.networking.k8s.io. */
  readonly group: string;
  readonly kind: string;
}

export interface AllowedRoutes {
  readonly namespaces: { readonly from: 'All' | 'Same' | 'Selector'; readonly selector?: LabelSelector };
  /** Absent: the kinds the listener's protocol supports. */
  readonly kinds?: readonly RouteGroupKind[];
}

export interface SecretObjectReference {
  /** "" (core) by default. */
  readonly group: string;
  /** Secret by default. */
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface ListenerTls {
  readonly mode: 'Terminate' | 'Passthrough';
  readonly certificateRefs: readonly SecretObjectReference[];
  readonly options: Readonly<Record<string, string>>;
  /** The `gateway.istio.io/tls-cipher-suites` option, the valid suites once each (istiod's FilterCipherSuites). */
  readonly cipherSuites?: readonly string[];
}

export interface Listener {
  readonly name: string;
  readonly hostname?: string;
  readonly port: number;
  /** As written: HTTP, HTTPS, TLS, TCP, UDP or a domain-prefixed protocol. */
  readonly protocol: string;
  readonly tls?: ListenerTls;
  readonly allowedRoutes: AllowedRoutes;
}

export interface GatewayAddress {
  /** IPAddress by default. */
  readonly type: string;
  readonly value: string;
}

/** A CA reference of frontend validation (group and kind required by the CRD; "" is core). */
export interface CaCertificateReference {
  readonly group: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

export type FrontendValidationMode = 'AllowValidOnly' | 'AllowInsecureFallback';

/** Gateway `spec.tls.frontend` default / perPort[].tls: client certificate validation. */
export interface FrontendTlsConfig {
  readonly validation?: {
    readonly caCertificateRefs: readonly CaCertificateReference[];
    readonly mode: FrontendValidationMode;
  };
}

/** Gateway `spec.tls.frontend` (Gateway API v1.4+): per port, else the default. */
export interface GatewayFrontendTls {
  readonly default: FrontendTlsConfig;
  readonly perPort: readonly { readonly port: number; readonly tls: FrontendTlsConfig }[];
}

export interface KubernetesGateway extends Base<'KubernetesGateway'> {
  readonly spec: {
    readonly gatewayClassName: string;
    readonly listeners: readonly Listener[];
    readonly addresses: readonly GatewayAddress[];
    /** `spec.tls.frontend`, only when set. */
    readonly frontendTls?: GatewayFrontendTls;
  };
}

export interface ParentReference {
  /** gateway.networking.k8s.io by default; "" (core) with kind Service for GAMMA. */
  readonly group: string;
  /** Gateway by default. */
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly sectionName?: string;
  readonly port?: number;
}

export interface HTTPHeader {
  readonly name: string;
  readonly value: string;
}

export interface HeaderModifier {
  readonly set: readonly HTTPHeader[];
  readonly add: readonly HTTPHeader[];
  readonly remove: readonly string[];
}

export interface BackendObjectReference {
  /** "" (core) by default. */
  readonly group: string;
  /** Service by default. */
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
  readonly port?: number;
}

export type PathModifier =
  | { readonly type: 'ReplaceFullPath'; readonly replaceFullPath: string }
  | { readonly type: 'ReplacePrefixMatch'; readonly replacePrefixMatch: string };

export interface RequestRedirectFilter {
  readonly scheme?: 'http' | 'https';
  readonly hostname?: string;
  readonly path?: PathModifier;
  readonly port?: number;
  /** 302 by default. */
  readonly statusCode: number;
}

export interface UrlRewriteFilter {
  readonly hostname?: string;
  readonly path?: PathModifier;
}

export interface RequestMirrorFilter {
  readonly backendRef: BackendObjectReference;
  /** 0–100 percent of requests mirrored; absent: all. */
  readonly percent?: number;
}

export interface CorsFilter {
  readonly allowOrigins: readonly string[];
  readonly allowCredentials?: boolean;
  readonly allowMethods: readonly string[];
  readonly allowHeaders: readonly string[];
  readonly exposeHeaders: readonly string[];
  /** Seconds; 5 by default. */
  readonly maxAge: number;
}

export type HTTPRouteFilter =
  | { readonly type: 'RequestHeaderModifier'; readonly requestHeaderModifier: HeaderModifier }
  | { readonly type: 'ResponseHeaderModifier'; readonly responseHeaderModifier: HeaderModifier }
  | { readonly type: 'RequestRedirect'; readonly requestRedirect: RequestRedirectFilter }
  | { readonly type: 'URLRewrite'; readonly urlRewrite: UrlRewriteFilter }
  | { readonly type: 'RequestMirror'; readonly requestMirror: RequestMirrorFilter }
  | { readonly type: 'CORS'; readonly cors: CorsFilter }
  | { readonly type: 'ExtensionRef' };

export interface HTTPBackendRef extends BackendObjectReference {
  /** 1 by default; 0 sends nothing there. */
  readonly weight: number;
  readonly filters: readonly HTTPRouteFilter[];
}

export interface StringValueMatch {
  readonly type: 'Exact' | 'RegularExpression';
  readonly name: string;
  readonly value: string;
}

export interface HTTPRouteMatch {
  /** PathPrefix `/` by default. */
  readonly path: { readonly type: 'Exact' | 'PathPrefix' | 'RegularExpression'; readonly value: string };
  readonly headers: readonly StringValueMatch[];
  readonly queryParams: readonly StringValueMatch[];
  readonly method?: string;
}

export interface HTTPRouteRule {
  readonly name?: string;
  /** At least one: a rule without matches gets the default match (prefix `/`). */
  readonly matches: readonly HTTPRouteMatch[];
  readonly filters: readonly HTTPRouteFilter[];
  readonly backendRefs: readonly HTTPBackendRef[];
  /** Milliseconds; 0 disables the timeout. */
  readonly timeouts?: { readonly requestMs?: number; readonly backendRequestMs?: number };
  readonly retry?: { readonly codes: readonly number[]; readonly attempts?: number; readonly backoffMs?: number };
}

export interface HTTPRoute extends Base<'HTTPRoute'> {
  readonly spec: {
    readonly parentRefs: readonly ParentReference[];
    readonly hostnames: readonly string[];
    readonly rules: readonly HTTPRouteRule[];
  };
}

export interface GRPCMethodMatch {
  readonly type: 'Exact' | 'RegularExpression';
  readonly service?: string;
  readonly method?: string;
}

export interface GRPCRouteMatch {
  readonly method?: GRPCMethodMatch;
  readonly headers: readonly StringValueMatch[];
}

export type GRPCRouteFilter = Extract<
  HTTPRouteFilter,
  { readonly type: 'RequestHeaderModifier' | 'ResponseHeaderModifier' | 'RequestMirror' | 'ExtensionRef' }
>;

export interface GRPCBackendRef extends BackendObjectReference {
  readonly weight: number;
  readonly filters: readonly GRPCRouteFilter[];
}

export interface GRPCRouteRule {
  readonly name?: string;
  readonly matches: readonly GRPCRouteMatch[];
  readonly filters: readonly GRPCRouteFilter[];
  readonly backendRefs: readonly GRPCBackendRef[];
}

export interface GRPCRoute extends Base<'GRPCRoute'> {
  readonly spec: {
    readonly parentRefs: readonly ParentReference[];
    readonly hostnames: readonly string[];
    readonly rules: readonly GRPCRouteRule[];
  };
}

export interface L4BackendRef extends BackendObjectReference {
  readonly weight: number;
}

export interface L4RouteRule {
  readonly name?: string;
  readonly backendRefs: readonly L4BackendRef[];
}

export interface TCPRoute extends Base<'TCPRoute'> {
  readonly spec: { readonly parentRefs: readonly ParentReference[]; readonly rules: readonly L4RouteRule[] };
}

export interface TLSRoute extends Base<'TLSRoute'> {
  readonly spec: {
    readonly parentRefs: readonly ParentReference[];
    readonly hostnames: readonly string[];
    readonly rules: readonly L4RouteRule[];
  };
}

export interface ReferenceGrant extends Base<'ReferenceGrant'> {
  readonly spec: {
    readonly from: readonly { readonly group: string; readonly kind: string; readonly namespace: string }[];
    readonly to: readonly { readonly group: string; readonly kind: string; readonly name?: string }[];
  };
}

export type GatewayApiRoute = HTTPRoute | GRPCRoute | TCPRoute | TLSRoute;
export type GatewayApiObject = GatewayClass | KubernetesGateway | GatewayApiRoute | ReferenceGrant;

/** The kind a user wrote (`Gateway` for the model's `KubernetesGateway`). */
export const writtenKind = (o: GatewayApiObject): string => (o.kind === 'KubernetesGateway' ? 'Gateway' : o.kind);
