/** What `explain` takes (a proxy's decoded resources and a request) and what it answers. Pure data. */
import type { JsonObject } from './json.js';

/** A proxy's served resources, decoded, by resource name. */
export interface ProxyResources {
  readonly listeners: ReadonlyMap<string, JsonObject>;
  readonly routes: ReadonlyMap<string, JsonObject>;
  readonly clusters: ReadonlyMap<string, JsonObject>;
  readonly endpoints: ReadonlyMap<string, JsonObject>;
}

/** The application protocol the client speaks: what Envoy's http_inspector (or ALPN) would see. */
export type RequestProtocol = 'http/1.1' | 'h2c' | 'h2' | 'tcp';

export interface ExplainRequest {
  /** Outbound: a call the proxy's workload makes; inbound: a call into the workload. */
  readonly direction: 'outbound' | 'inbound';
  /** The host the client names (DNS name or IP), as in `--to host:port`. */
  readonly host: string;
  readonly port: number;
  /** The IP the connection goes to (the service's cluster IP, the pod IP); undefined when unknown. */
  readonly destinationIp?: string;
  readonly sourceIp?: string;
  readonly sourcePort?: number;
  readonly protocol: RequestProtocol;
  readonly tls: boolean;
  readonly sni?: string;
  /** ALPN the client offers over TLS. */
  readonly alpn?: readonly string[];
  readonly method: string;
  /** Path with the query string, e.g. `/reviews/1?x=y`. */
  readonly path: string;
  /** Lower-case header name → value (a repeated header joined with `,`, as Envoy matches it). */
  readonly headers: Readonly<Record<string, string>>;
}

/** An Istio object named by its provenance path, e.g. `VirtualService default/reviews`. */
export interface Provenance {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** The `istio.config` value as written in the resource's metadata. */
  readonly config: string;
}

export interface ListenerAnswer {
  readonly name: string;
  /** Each step of how Envoy got to this listener. */
  readonly why: readonly string[];
}

export interface FilterChainAnswer {
  /** The filter chain's name; undefined for an unnamed one. */
  readonly name?: string;
  /** Index in `filter_chains`; undefined for the `default_filter_chain`. */
  readonly index?: number;
  readonly isDefault: boolean;
  readonly match: JsonObject;
  readonly why: readonly string[];
  readonly provenance: readonly Provenance[];
}

export interface HttpFilterAnswer {
  readonly name: string;
  readonly type?: string;
  /** For RBAC: action and policy names; for JWT: providers; else absent. */
  readonly detail?: string;
  /** What the matched route (or its virtual host) configures for this filter, e.g. a fault's abort. */
  readonly perRoute?: string;
}

export interface RouteConfigAnswer {
  readonly name: string;
  readonly source: 'rds' | 'inline';
}

export interface VirtualHostAnswer {
  readonly name: string;
  readonly domains: readonly string[];
  readonly matchedDomain: string;
  /** The authority matched, after `ignore_port_in_host_matching`. */
  readonly authority: string;
  readonly why: string;
  readonly provenance: readonly Provenance[];
}

export interface SkippedRoute {
  readonly index: number;
  readonly name?: string;
  readonly reason: string;
}

export interface RouteAnswer {
  readonly index: number;
  readonly name?: string;
  readonly match: JsonObject;
  readonly why: readonly string[];
  readonly action: 'route' | 'redirect' | 'direct_response' | 'other';
  readonly provenance: readonly Provenance[];
}

export interface EndpointAnswer {
  readonly address: string;
  readonly port?: number;
  readonly locality?: string;
  readonly health?: string;
  readonly weight?: number;
  readonly priority?: number;
}

export interface ClusterAnswer {
  readonly name: string;
  /** Its share of the traffic in percent (100 for a single cluster). */
  readonly weight: number;
  /** False when the proxy is not served a cluster of that name (Envoy answers 503 NC). */
  readonly found: boolean;
  readonly type?: string;
  readonly provenance: readonly Provenance[];
  /** Istio services behind the cluster (`istio.services` metadata). */
  readonly services: readonly string[];
  /** EDS: the ClusterLoadAssignment's endpoints; ORIGINAL_DST: the destination itself. */
  readonly endpoints: readonly EndpointAnswer[];
  readonly endpointsFrom: 'eds' | 'load_assignment' | 'original_destination' | 'none';
}

/** How the request ends. */
export type Outcome =
  | 'routed'
  | 'tcp_proxy'
  | 'passthrough'
  | 'blackhole'
  | 'not_found'
  | 'redirect'
  | 'direct_response'
  | 'no_listener'
  | 'no_filter_chain'
  | 'protocol_error'
  /** `across` only: the proxy cannot be placed in that version (its pod or namespace is absent). */
  | 'no_proxy'
  | 'unsupported';

export interface Explanation {
  readonly request: ExplainRequest;
  readonly outcome: Outcome;
  /** One sentence: where the request goes. */
  readonly summary: string;
  /** The HTTP status Envoy answers itself with (404 no route, redirect/direct response codes). */
  readonly status?: number;
  readonly listener?: ListenerAnswer;
  readonly filterChain?: FilterChainAnswer;
  readonly network?: 'http' | 'tcp';
  readonly httpFilters?: readonly HttpFilterAnswer[];
  readonly routeConfig?: RouteConfigAnswer;
  readonly virtualHost?: VirtualHostAnswer;
  readonly route?: RouteAnswer;
  readonly skippedRoutes?: readonly SkippedRoute[];
  readonly clusters: readonly ClusterAnswer[];
  /** Every Istio object behind the answer, deduplicated, in order of appearance. */
  readonly provenance: readonly Provenance[];
  /** Things explain assumes or cannot decide (runtime fractions, RBAC not evaluated, …). */
  readonly notes: readonly string[];
}
