/**
 * Kubernetes objects as meshsnap reads them: validated, defaulted and reduced to the fields the
 * compiler uses. The inputs layer builds these from raw documents (see src/inputs/).
 */
import type { Origin } from './diagnostics.js';
import type { ProxyConfigParts } from './proxy-config.js';

export interface ObjectMeta {
  readonly name: string;
  /** Empty for cluster-scoped kinds (Namespace). */
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly resourceVersion?: string;
}

interface Base<K extends string> {
  readonly kind: K;
  readonly meta: ObjectMeta;
  readonly origin: Origin;
}

export type PortProtocol = 'TCP' | 'UDP' | 'SCTP';

export interface ServicePort {
  readonly name?: string;
  readonly port: number;
  /** A number, or the name of a container port. Defaults to `port`. */
  readonly targetPort: number | string;
  readonly protocol: PortProtocol;
  readonly appProtocol?: string;
}

export interface Service extends Base<'Service'> {
  readonly type: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
  /** `None` for headless services; absent when not allocated. */
  readonly clusterIP?: string;
  readonly clusterIPs: readonly string[];
  readonly externalName?: string;
  /** Absent selector: endpoints are managed by hand. */
  readonly selector?: Readonly<Record<string, string>>;
  readonly ports: readonly ServicePort[];
  /** `spec.trafficDistribution` as written (istiod reads PreferClose, PreferSameZone, PreferSameNode). */
  readonly trafficDistribution?: string;
  /** `spec.internalTrafficPolicy` (istiod: `Local` keeps each proxy to the endpoints on its own node). */
  readonly internalTrafficPolicy?: 'Cluster' | 'Local';
}

export interface EndpointPort {
  readonly name?: string;
  readonly port: number;
  readonly protocol: PortProtocol;
  readonly appProtocol?: string;
}

export interface ObjectRef {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

export interface SliceEndpoint {
  readonly addresses: readonly string[];
  /** EndpointSlice conditions; `ready` defaults to true as in the API. */
  readonly ready: boolean;
  readonly serving: boolean;
  readonly terminating: boolean;
  readonly targetRef?: ObjectRef;
  readonly nodeName?: string;
  readonly zone?: string;
  readonly hostname?: string;
}

export interface EndpointSlice extends Base<'EndpointSlice'> {
  /** From label `kubernetes.io/service-name`. */
  readonly serviceName: string;
  readonly addressType: 'IPv4' | 'IPv6' | 'FQDN';
  readonly ports: readonly EndpointPort[];
  readonly endpoints: readonly SliceEndpoint[];
}

export interface EndpointAddress {
  readonly ip: string;
  readonly hostname?: string;
  readonly nodeName?: string;
  readonly targetRef?: ObjectRef;
}

export interface EndpointSubset {
  readonly addresses: readonly EndpointAddress[];
  readonly notReadyAddresses: readonly EndpointAddress[];
  readonly ports: readonly EndpointPort[];
}

/** core/v1 Endpoints: the legacy form, used when no EndpointSlice exists for a service. */
export interface Endpoints extends Base<'Endpoints'> {
  readonly subsets: readonly EndpointSubset[];
}

export interface ContainerPort {
  readonly name?: string;
  readonly containerPort: number;
  readonly protocol: PortProtocol;
}

/** A Service's exportTo, comma-separated (istiod's kube controller reads it as the Service's exportTo). */
export const SERVICE_EXPORT_TO_ANNOTATION = 'networking.istio.io/exportTo';

export interface Pod extends Base<'Pod'> {
  /** Its `proxy.istio.io/config` annotation's proxy headers and gateway topology, when it sets some. */
  readonly proxyConfig?: ProxyConfigParts;
  readonly ips: readonly string[];
  readonly nodeName?: string;
  readonly serviceAccount: string;
  readonly phase: string;
  readonly ready: boolean;
  readonly containerPorts: readonly ContainerPort[];
}

export interface Node extends Base<'Node'> {
  readonly region?: string;
  readonly zone?: string;
  readonly subzone?: string;
}

export type Namespace = Base<'Namespace'>;

export type KubeObject = Service | EndpointSlice | Endpoints | Pod | Namespace | Node;
