/**
 * The compile context: the service model plus the Istio config indexes every translator reads.
 * Built once per compile by `createContext` (compile/index.ts), then read-only.
 */
import type { RouteSource } from './route/source-labels.js';
import type { AccessLogIndex } from './listener/telemetry-logs.js';
import type { TracingIndex } from './listener/telemetry-tracing.js';
import type { EnvoyFilterIndex } from './envoy-filter/selection.js';
import type { Diagnostics } from '../model/diagnostics.js';
import type {
  DestinationRule,
  DestinationRuleSpec,
  HTTPRoute,
  TCPRoute,
  TLSRoute,
  VirtualService,
} from '../model/istio.js';
import type { MeshConfig } from '../model/mesh-config.js';
import type { ServiceModel } from '../model/service-model.js';
import type { SidecarIndex } from './scope/select-sidecar.js';
import type { EgressListenerView } from './scope/egress-listeners.js';
import type { SecurityIndex } from './security/workload-security.js';

/** A DestinationRule as it applies to one host (several rules may have been merged). */
export interface ResolvedDestinationRule {
  readonly hostname: string;
  /** The effective spec: subsets of merged rules appended, first trafficPolicy wins. */
  readonly spec: DestinationRuleSpec;
  /** The rules that contributed, first = the one whose metadata goes on clusters. */
  readonly sources: readonly DestinationRule[];
}

export interface DestinationRuleIndex {
  /** The rule for a service hostname, or undefined. */
  lookup(hostname: string): ResolvedDestinationRule | undefined;
}

/** One HTTP route of a VirtualService, with the object it came from (for provenance metadata). */
export interface SourcedHttpRoute {
  readonly route: HTTPRoute;
  readonly source: VirtualService;
}

export interface SourcedTcpRoute {
  readonly route: TCPRoute;
  readonly source: VirtualService;
}

export interface SourcedTlsRoute {
  readonly route: TLSRoute;
  readonly source: VirtualService;
}

/** VirtualServices that apply to sidecars ("mesh" gateway), merged per host as istiod merges them. */
export interface VirtualServiceIndex {
  /** The namespace whose sidecars it was built for (Gateway API mesh routes depend on it); absent: the shared index. */
  readonly clientNamespace?: string;
  /** HTTP routes for a service hostname, in evaluation order; undefined when no VirtualService applies. */
  httpRoutes(hostname: string): readonly SourcedHttpRoute[] | undefined;
  tcpRoutes(hostname: string): readonly SourcedTcpRoute[] | undefined;
  tlsRoutes(hostname: string): readonly SourcedTlsRoute[] | undefined;
}

export interface CompileContext {
  readonly model: ServiceModel;
  readonly mesh: MeshConfig;
  readonly diags: Diagnostics;
  readonly destinationRules: DestinationRuleIndex;
  readonly virtualServices: VirtualServiceIndex;
  /** PeerAuthentication and AuthorizationPolicy per workload. */
  readonly security: SecurityIndex;
  /** The Sidecar resource that applies to a workload. */
  readonly sidecars: SidecarIndex;
  /**
   * A view's Sidecar `outboundTrafficPolicy.egressProxy` as its cluster (`outbound|<port>|<subset>|<host>`):
   * where ALLOW_ANY sends unknown destinations instead of PassthroughCluster.
   */
  readonly egressProxyCluster?: string;
  /**
   * A view's Sidecar egress listeners, when one has a port, a bind or captureMode NONE: outbound
   * listeners and route configs are then built per egress listener (listener/egress-listeners.ts).
   */
  readonly egressListeners?: readonly EgressListenerView[];
  /**
   * The labels a context's route configs are built for, where they select some VirtualService
   * match's `sourceLabels` (route/source-labels.ts); without it such matches apply to no one.
   */
  readonly routeSource?: RouteSource;
  /**
   * The namespace a context's outbound listeners are built for, where a `tcp`/`tls` match names it
   * as `sourceNamespace` (route/source-labels.ts); without it such matches apply to no one.
   */
  readonly listenerNamespace?: string;
  /**
   * The workload-selected Telemetries with access logging or tracing (their keys, listener/telemetry-logs.ts) that select the
   * proxies a context's outbound listeners are built for; absent: none does.
   */
  readonly listenerTelemetry?: readonly string[];
  /**
   * Telemetry access logging per listener mode and proxy namespace (listener/telemetry-logs.ts);
   * absent: the mesh's `accessLogFile` alone.
   */
  readonly accessLogs?: AccessLogIndex;
  /** Telemetry tracing (listener/telemetry-tracing.ts); absent or not active: the mesh's legacy tracing alone. */
  readonly tracing?: TracingIndex;
  /** The EnvoyFilters and the proxies they select (envoy-filter/selection.ts); absent: none. */
  readonly envoyFilters?: EnvoyFilterIndex;
}
