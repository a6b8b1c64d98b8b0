/**
 * What the compiler produces: Envoy resources grouped for sharing, and the proxy classes that say
 * which groups each kind of proxy receives.
 *
 * Why groups: every sidecar in a namespace gets the same outbound clusters, endpoints and routes;
 * only its inbound side differs. A class is therefore a list of groups, and a group's resources
 * are encoded and stored once however many classes use it.
 */
import type { Cluster, ClusterLoadAssignment, Listener, RouteConfiguration } from '../xds/proto.js';
import type { XdsType } from '../xds/type-urls.js';

export interface ResourceMessages {
  clusters: Cluster;
  endpoints: ClusterLoadAssignment;
  listeners: Listener;
  routes: RouteConfiguration;
}

/** Resources of one group, per xDS type, by resource name. */
export type ResourceTable = { [T in XdsType]: Map<string, ResourceMessages[T]> };

export const emptyTable = (): ResourceTable => ({
  clusters: new Map(),
  endpoints: new Map(),
  listeners: new Map(),
  routes: new Map(),
});

/**
 * Group ids in use:
 * - `outbound`              shared clusters (outbound|…, BlackHoleCluster, PassthroughCluster, InboundPassthroughCluster)
 * - `endpoints`             every ClusterLoadAssignment
 * - `outbound-listeners`    0.0.0.0_<port> / <ip>_<port> listeners and virtualOutbound
 * - `routes/<ns>`           outbound route configs as seen from namespace <ns> (short-name domains differ)
 * - `inbound/<classKey>`    virtualInbound and inbound|<port>|| clusters of one workload shape
 * - `grpc-clusters`         proxyless gRPC clusters
 * - `grpc`                  proxyless gRPC api_listeners and route configs (FQDN domains), shared by all namespaces
 * - `grpc/<ns>`             proxyless route configs whose routes match on sourceNamespace <ns> (usually absent)
 * - `gateway/<classKey>`    listeners, route configs and SNI-DNAT clusters of one router class
 * - `grpc-inbound/<ns>`     inbound listeners of proxyless gRPC servers in <ns>, named after their listening address
 */
export type GroupId = string;

export type Generator = 'sidecar' | 'grpc' | 'router';

export interface ProxyClass {
  /** e.g. `sidecar/default/reviews`, `grpc/default`, `router/istio-system/istio-ingressgateway/default/bookinfo-gateway`. */
  readonly id: string;
  readonly generator: Generator;
  readonly namespace: string;
  /** Hostnames of the services whose selector picks this workload shape (sidecar and router classes). */
  readonly services: readonly string[];
  readonly groups: readonly GroupId[];
  /** Router classes: the Gateways whose config the class holds, with their selectors (for placing nodes). */
  readonly gateways?: readonly GatewaySelectorRef[];
  /**
   * Router classes: the `kubernetes-gateway://<ns>/<name>` SDS names its Gateways reference and the
   * compile verified (same namespace, or a ReferenceGrant), sorted; absent when there are none.
   * The relay serves such a name only to a proxy of a class that lists it.
   */
  readonly verifiedSecrets?: readonly string[];
}

/** A Gateway as the relay needs it to place a router proxy: its name and selector (absent: every router). */
export interface GatewaySelectorRef {
  readonly namespace: string;
  readonly name: string;
  readonly selector?: Readonly<Record<string, string>>;
}

/**
 * Selectors the relay needs to place a node (by its LABELS) into a class: of a service (its
 * hostname), or of a security policy that picks workloads by label (`policy`, its key; hostname
 * empty). A sidecar class id names both: `sidecar/<ns>/<services>[/<policy keys>]`.
 */
export interface ClassSelector {
  readonly namespace: string;
  readonly hostname: string;
  readonly selector: Readonly<Record<string, string>>;
  readonly policy?: string;
  /** Set (true) when the service is a ServiceEntry host selecting workloads: its class name is the host (classServiceName). */
  readonly serviceEntry?: true;
  /**
   * A Kubernetes Node and its locality (`region/zone/subzone`), listed (namespace, hostname and
   * selector empty) when some assignment depends on the proxy's locality: a relay places a proxy
   * that does not say its locality by its NODE_NAME (../proxy-class/locality.ts).
   */
  readonly node?: string;
  readonly locality?: string;
}

export interface CompileOutput {
  readonly groups: ReadonlyMap<GroupId, ResourceTable>;
  /** Sorted by id. */
  readonly classes: readonly ProxyClass[];
  readonly selectors: readonly ClassSelector[];
}

/** A compile output its receiver owns: a one-shot snapshot build takes the groups out as it builds them. */
export interface OwnedCompileOutput extends CompileOutput {
  readonly groups: Map<GroupId, ResourceTable>;
}

/** What changed in one group's resources of one xDS type: new or replaced messages, and removed names. */
export interface ResourceChanges<M> {
  readonly upserts: Map<string, M>;
  readonly deletes: Set<string>;
}

/**
 * The difference between two CompileOutputs with the same classes and selectors (what an
 * incremental compile produces, src/compile/incremental.ts). Groups and types without changes are
 * absent; a name is never both upserted and deleted. Applying it to the previous output gives
 * the next one (`applyCompileDelta`).
 */
export type CompileDelta = { [groupId: GroupId]: { [T in XdsType]?: ResourceChanges<ResourceMessages[T]> } };
