/**
 * The service model: Kubernetes Services, EndpointSlices/Endpoints and Pods joined into what a
 * proxy needs to know (istiod's `model.Service` and `IstioEndpoint`). Built by `buildServiceModel`
 * (model/build.ts); every list is sorted so the compiler's output does not depend on input order.
 */
import type { ProxyConfigParts } from './proxy-config.js';
import type { Gateway } from './gateway.js';
import type { DestinationRule, VirtualService } from './istio.js';
import type { TrafficDistribution } from './traffic-distribution.js';
import type { Origin } from './diagnostics.js';

/** Istio's protocol names (https://istio.io/latest/docs/ops/configuration/traffic-management/protocol-selection/). */
export type Protocol =
  | 'HTTP'
  | 'HTTP2'
  | 'GRPC'
  | 'GRPC-Web'
  | 'HTTPS'
  | 'TLS'
  | 'TCP'
  | 'Mongo'
  | 'Redis'
  | 'MySQL'
  | 'UDP'
  | 'Unsupported';

export const isHttpProtocol = (p: Protocol): boolean =>
  p === 'HTTP' || p === 'HTTP2' || p === 'GRPC' || p === 'GRPC-Web';
/**
 * The labels a service picks its workloads by: a Kubernetes Service's selector, or a ServiceEntry's
 * workloadSelector (istiod gives the pods and WorkloadEntries it selects the entry's inbound ports).
 */
export const workloadSelectorOf = (s: MeshService): Readonly<Record<string, string>> | undefined =>
  s.selector ?? s.serviceEntry?.workloadSelector;

/** Whether the service picks workloads at all (an empty selector picks none): only then has it an inbound side. */
export const hasWorkloadSelector = (s: MeshService): boolean => Object.keys(workloadSelectorOf(s) ?? {}).length > 0;

/**
 * Whether a service's EDS depends on the Kubernetes node of the proxy (so its endpoints keep their
 * pod's node): node-local Services (`internalTrafficPolicy: Local`), and Kubernetes Services
 * with traffic distribution PreferSameNode (compile/endpoints.ts).
 */
export const endpointNodesMatter = (s: MeshService): boolean =>
  s.nodeLocal === true || (s.trafficDistribution === 'PreferSameNode' && s.serviceEntry === undefined);

export const isHttp2Protocol = (p: Protocol): boolean => p === 'HTTP2' || p === 'GRPC';

export interface MeshServicePort {
  readonly name?: string;
  readonly port: number;
  /** The Service's targetPort as written (number or container port name). */
  readonly targetPort: number | string;
  readonly protocol: Protocol;
  /**
   * Set when the port names no protocol (istiod's `Unsupported`): `protocol` is TCP, and sidecars
   * sniff it outbound (src/compile/sniffing.ts).
   */
  readonly protocolDefaulted?: true;
}

export interface MeshService {
  /** `<name>.<namespace>.svc.<domainSuffix>`. */
  readonly hostname: string;
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Absent for headless services and services without an allocated IP. */
  readonly clusterIP?: string;
  readonly headless: boolean;
  readonly externalName?: string;
  readonly selector?: Readonly<Record<string, string>>;
  readonly ports: readonly MeshServicePort[];
  /**
   * Namespaces the service is visible to, as written (`*`, `.`, `~`, names): the
   * `networking.istio.io/exportTo` annotation, a ServiceEntry's `exportTo`; absent: the mesh default.
   */
  readonly exportTo?: readonly string[];
  /** Set when the service prefers endpoints close to the client (model/traffic-distribution.ts). */
  readonly trafficDistribution?: TrafficDistribution;
  /**
   * Set for a Service with `internalTrafficPolicy: Local` (istiod's NodeLocal): a proxy is sent
   * only the endpoints on its own node (compile/node-variants.ts).
   */
  readonly nodeLocal?: true;
  readonly origin: Origin;
  /** Set for a host of a ServiceEntry (istiod: registry `External`). */
  readonly serviceEntry?: ServiceEntryAttributes;
}

/** A ServiceEntry's `resolution` (model/service-entry.ts reads it). */
export type ServiceEntryResolution = 'NONE' | 'STATIC' | 'DNS' | 'DNS_ROUND_ROBIN' | 'DYNAMIC_DNS';
export type ServiceEntryLocation = 'MESH_EXTERNAL' | 'MESH_INTERNAL';

/** What a ServiceEntry says about one of its hosts, beyond what every MeshService has. */
export interface ServiceEntryAttributes {
  /** The ServiceEntry's own name (its hosts are the services' names). */
  readonly entryName: string;
  readonly resolution: ServiceEntryResolution;
  readonly location: ServiceEntryLocation;
  /** IPs and CIDRs (a /32 or /128 written as the bare address), in written order; empty: none. */
  readonly addresses: readonly string[];
  readonly subjectAltNames: readonly string[];
  readonly workloadSelector?: Readonly<Record<string, string>>;
}

export interface Locality {
  readonly region: string;
  readonly zone: string;
  readonly subzone: string;
}

/** A locality as `region/zone/subzone`: how endpoints are grouped, and how locality groups and classes are named. */
export const localityKey = (l: Locality): string => `${l.region}/${l.zone}/${l.subzone}`;

export type HealthStatus = 'HEALTHY' | 'UNHEALTHY' | 'DRAINING';

export interface MeshEndpoint {
  readonly address: string;
  /** The port the workload listens on (targetPort resolved). */
  readonly port: number;
  /** Labels of the backing pod (empty when unknown); subsets select on these. */
  readonly labels: Readonly<Record<string, string>>;
  readonly locality: Locality;
  readonly health: HealthStatus;
  /** `istio` when the workload has a sidecar (label `security.istio.io/tlsMode`). */
  readonly tlsMode: 'istio' | 'disabled';
  readonly podName?: string;
  readonly serviceAccount?: string;
  /** Load balancing weight (WorkloadEntry `weight`); absent: 1. */
  readonly weight?: number;
  readonly network?: string;
  /** The telemetry workload name when not derived from a pod (a WorkloadEntry's or ServiceEntry's name). */
  readonly workloadName?: string;
  /** The Kubernetes node of the endpoint's pod (its `spec.nodeName`, as istiod): set only where it matters (endpointNodesMatter). */
  readonly nodeName?: string;
}

export interface ServiceModel {
  /** Sorted by hostname. */
  readonly services: readonly MeshService[];
  readonly byHostname: ReadonlyMap<string, MeshService>;
  /** hostname → service port → endpoints, sorted by address then port. */
  readonly endpoints: ReadonlyMap<string, ReadonlyMap<number, readonly MeshEndpoint[]>>;
  /**
   * Hosts that ServiceEntries of several namespaces define: a candidate per namespace, in istiod's
   * order (oldest first, then namespace), the one `services` holds among them; absent when none.
   * A namespace sees the one istiod's sidecar scope picks (compile/scope/host-choice.ts).
   */
  readonly hostCandidates?: ReadonlyMap<string, readonly HostCandidate[]>;
  /**
   * The localities proxies can be in (of Nodes, of pods' `istio-locality` labels, of
   * WorkloadEntries), sorted by `region/zone/subzone`, the empty one left out: EDS assignments whose
   * priorities depend on the proxy's locality get a variant for each (compile/endpoints.ts).
   */
  readonly proxyLocalities: readonly Locality[];
  /** Located Kubernetes Nodes by name: a relay places a proxy by its NODE_NAME when it does not say its locality. */
  readonly nodeLocalities: ReadonlyMap<string, Locality>;
  /**
   * The Kubernetes node names proxies can be on (Node objects and pods' `spec.nodeName`), sorted;
   * absent when no service's EDS depends on the proxy's node (endpointNodesMatter): their EDS
   * assignments get a variant for each.
   */
  readonly proxyNodes?: readonly string[];
  /** Namespaces known to the mesh (Namespace objects and namespaces of services/pods), sorted. */
  readonly namespaces: readonly string[];
  /** Workloads (pods) by namespace, for inbound config and proxy classes. */
  readonly workloads: readonly Workload[];
  /**
   * WorkloadEntries (VMs) as workloads, by namespace then name: proxy classes are made for their
   * labels as for pods' (a VM's sidecar connects with them). Unhealthy entries too: their proxy runs.
   */
  readonly entryWorkloads: readonly Workload[];
  readonly virtualServices: readonly VirtualService[];
  readonly destinationRules: readonly DestinationRule[];
  readonly gateways: readonly Gateway[];
}

/** One namespace's service for a host several namespaces' ServiceEntries define (model/service-entries.ts). */
export interface HostCandidate {
  readonly service: MeshService;
  readonly endpoints: ReadonlyMap<number, readonly MeshEndpoint[]>;
  /** The oldest creationTimestamp of its entries ('' when one has none: istiod's zero time). */
  readonly created: string;
}

export interface Workload {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly ips: readonly string[];
  readonly serviceAccount: string;
  /** A pod's own ProxyConfig (`proxy.istio.io/config`): proxy headers and gateway topology. */
  readonly proxyConfig?: ProxyConfigParts;
}
