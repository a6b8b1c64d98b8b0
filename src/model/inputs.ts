/** Everything the compiler reads: the validated objects of one compile, in no particular order. */
import type { AuthorizationPolicy } from './authorization-policy.js';
import type { Diagnostic } from './diagnostics.js';
import type { Gateway } from './gateway.js';
import type {
  GatewayClass,
  GRPCRoute,
  HTTPRoute,
  KubernetesGateway,
  ReferenceGrant,
  TCPRoute,
  TLSRoute,
} from './gateway-api.js';
import type { Ingress, IngressClass } from './ingress.js';
import type { EnvoyFilter } from './envoy-filter.js';
import type { DestinationRule, VirtualService } from './istio.js';
import type { EndpointSlice, Endpoints, Namespace, Node, Pod, Service } from './k8s.js';
import type { MeshConfig } from './mesh-config.js';
import type { PeerAuthentication } from './peer-authentication.js';
import type { RequestAuthentication } from './request-authentication.js';
import type { ServiceEntry, WorkloadEntry, WorkloadGroup } from './service-entry.js';
import type { Sidecar } from './sidecar.js';
import type { Telemetry } from './telemetry.js';

export interface InputSet {
  readonly meshConfig: MeshConfig;
  readonly services: readonly Service[];
  readonly endpointSlices: readonly EndpointSlice[];
  readonly endpoints: readonly Endpoints[];
  readonly pods: readonly Pod[];
  readonly namespaces: readonly Namespace[];
  readonly nodes: readonly Node[];
  readonly virtualServices: readonly VirtualService[];
  readonly destinationRules: readonly DestinationRule[];
  readonly gateways: readonly Gateway[];
  readonly authorizationPolicies: readonly AuthorizationPolicy[];
  readonly peerAuthentications: readonly PeerAuthentication[];
  readonly requestAuthentications: readonly RequestAuthentication[];
  readonly serviceEntries: readonly ServiceEntry[];
  readonly workloadEntries: readonly WorkloadEntry[];
  readonly workloadGroups: readonly WorkloadGroup[];
  /** Gateway API (gateway.networking.k8s.io); the compiler converts them into Gateways and VirtualServices. */
  readonly gatewayClasses: readonly GatewayClass[];
  readonly kubernetesGateways: readonly KubernetesGateway[];
  readonly httpRoutes: readonly HTTPRoute[];
  readonly grpcRoutes: readonly GRPCRoute[];
  readonly tcpRoutes: readonly TCPRoute[];
  readonly tlsRoutes: readonly TLSRoute[];
  readonly referenceGrants: readonly ReferenceGrant[];
  readonly sidecars: readonly Sidecar[];
  /** Telemetry (telemetry.istio.io): namespace-wide access logging. */
  readonly telemetries: readonly Telemetry[];
  /** EnvoyFilter (networking.istio.io v1alpha3): patches to the generated Envoy resources. */
  readonly envoyFilters: readonly EnvoyFilter[];
  /** Kubernetes Ingress (networking.k8s.io/v1); the compiler converts the ones istiod serves into Gateways and VirtualServices. */
  readonly ingresses: readonly Ingress[];
  readonly ingressClasses: readonly IngressClass[];
  /** What parsing and validation said; the compiler adds its own. */
  readonly diagnostics: readonly Diagnostic[];
}
