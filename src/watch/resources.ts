/**
 * What the watcher reads from the API server: the kinds the compiler reads, with where they live.
 * RBAC in infra/k8s/ grants get/list/watch on exactly these.
 */
export interface ResourceSpec {
  readonly kind: string;
  /** "" for the core group. */
  readonly group: string;
  /** Versions in order of preference; discovery picks the first one served. */
  readonly versions: readonly string[];
  readonly plural: string;
  readonly namespaced: boolean;
  /** Only this namespace (the mesh config). */
  readonly namespace?: string;
  readonly fieldSelector?: string;
  /** A CRD: may be missing; then skipped with a warning and waited for. */
  readonly optional?: boolean;
}

export const SERVICES: ResourceSpec = {
  kind: 'Service',
  group: '',
  versions: ['v1'],
  plural: 'services',
  namespaced: true,
};
export const ENDPOINT_SLICES: ResourceSpec = {
  kind: 'EndpointSlice',
  group: 'discovery.k8s.io',
  versions: ['v1'],
  plural: 'endpointslices',
  namespaced: true,
};
/** Used instead of EndpointSlices where discovery.k8s.io/v1 is not served, as istiod's endpoint modes do. */
export const ENDPOINTS: ResourceSpec = {
  kind: 'Endpoints',
  group: '',
  versions: ['v1'],
  plural: 'endpoints',
  namespaced: true,
};
export const PODS: ResourceSpec = { kind: 'Pod', group: '', versions: ['v1'], plural: 'pods', namespaced: true };
export const NAMESPACES: ResourceSpec = {
  kind: 'Namespace',
  group: '',
  versions: ['v1'],
  plural: 'namespaces',
  namespaced: false,
};
export const NODES: ResourceSpec = { kind: 'Node', group: '', versions: ['v1'], plural: 'nodes', namespaced: false };
export const MESH_CONFIG: ResourceSpec = {
  kind: 'ConfigMap',
  group: '',
  versions: ['v1'],
  plural: 'configmaps',
  namespaced: true,
  namespace: 'istio-system',
  fieldSelector: 'metadata.name=istio',
};
const ISTIO_VERSIONS = ['v1', 'v1beta1', 'v1alpha3'];
export const VIRTUAL_SERVICES: ResourceSpec = {
  kind: 'VirtualService',
  group: 'networking.istio.io',
  versions: ISTIO_VERSIONS,
  plural: 'virtualservices',
  namespaced: true,
  optional: true,
};
export const DESTINATION_RULES: ResourceSpec = {
  kind: 'DestinationRule',
  group: 'networking.istio.io',
  versions: ISTIO_VERSIONS,
  plural: 'destinationrules',
  namespaced: true,
  optional: true,
};
export const GATEWAYS: ResourceSpec = {
  kind: 'Gateway',
  group: 'networking.istio.io',
  versions: ISTIO_VERSIONS,
  plural: 'gateways',
  namespaced: true,
  optional: true,
};
export const SERVICE_ENTRIES: ResourceSpec = {
  kind: 'ServiceEntry',
  group: 'networking.istio.io',
  versions: ISTIO_VERSIONS,
  plural: 'serviceentries',
  namespaced: true,
  optional: true,
};
export const WORKLOAD_ENTRIES: ResourceSpec = {
  kind: 'WorkloadEntry',
  group: 'networking.istio.io',
  versions: ISTIO_VERSIONS,
  plural: 'workloadentries',
  namespaced: true,
  optional: true,
};
export const WORKLOAD_GROUPS: ResourceSpec = {
  kind: 'WorkloadGroup',
  group: 'networking.istio.io',
  versions: ISTIO_VERSIONS,
  plural: 'workloadgroups',
  namespaced: true,
  optional: true,
};
export const SIDECARS: ResourceSpec = {
  kind: 'Sidecar',
  group: 'networking.istio.io',
  versions: ISTIO_VERSIONS,
  plural: 'sidecars',
  namespaced: true,
  optional: true,
};
export const TELEMETRIES: ResourceSpec = {
  kind: 'Telemetry',
  group: 'telemetry.istio.io',
  versions: ['v1', 'v1alpha1'],
  plural: 'telemetries',
  namespaced: true,
  optional: true,
};
export const ENVOY_FILTERS: ResourceSpec = {
  kind: 'EnvoyFilter',
  group: 'networking.istio.io',
  versions: ['v1alpha3'],
  plural: 'envoyfilters',
  namespaced: true,
  optional: true,
};
/** Kubernetes Ingress and IngressClass: istiod serves the Ingresses of its class (src/compile/ingress/). */
export const INGRESSES: ResourceSpec = {
  kind: 'Ingress',
  group: 'networking.k8s.io',
  versions: ['v1'],
  plural: 'ingresses',
  namespaced: true,
  optional: true,
};
export const INGRESS_CLASSES: ResourceSpec = {
  kind: 'IngressClass',
  group: 'networking.k8s.io',
  versions: ['v1'],
  plural: 'ingressclasses',
  namespaced: false,
  optional: true,
};
const SECURITY_VERSIONS = ['v1', 'v1beta1'];
export const AUTHORIZATION_POLICIES: ResourceSpec = {
  kind: 'AuthorizationPolicy',
  group: 'security.istio.io',
  versions: SECURITY_VERSIONS,
  plural: 'authorizationpolicies',
  namespaced: true,
  optional: true,
};
export const PEER_AUTHENTICATIONS: ResourceSpec = {
  kind: 'PeerAuthentication',
  group: 'security.istio.io',
  versions: SECURITY_VERSIONS,
  plural: 'peerauthentications',
  namespaced: true,
  optional: true,
};
export const REQUEST_AUTHENTICATIONS: ResourceSpec = {
  kind: 'RequestAuthentication',
  group: 'security.istio.io',
  versions: SECURITY_VERSIONS,
  plural: 'requestauthentications',
  namespaced: true,
  optional: true,
};

/**
 * The Kubernetes Gateway API (gateway.networking.k8s.io), in the versions the loader reads
 * (src/inputs/load.ts): v1, else v1beta1; TCPRoute and TLSRoute v1 (bundles from v1.5 on), else
 * v1alpha2 (the experimental channel before).
 */
export const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';
const gatewayApi = (kind: string, plural: string, versions: readonly string[], namespaced = true): ResourceSpec => ({
  kind,
  group: GATEWAY_API_GROUP,
  versions,
  plural,
  namespaced,
  optional: true,
});
export const GATEWAY_CLASSES = gatewayApi('GatewayClass', 'gatewayclasses', ['v1', 'v1beta1'], false);
export const K8S_GATEWAYS = gatewayApi('Gateway', 'gateways', ['v1', 'v1beta1']);
export const HTTP_ROUTES = gatewayApi('HTTPRoute', 'httproutes', ['v1', 'v1beta1']);
export const GRPC_ROUTES = gatewayApi('GRPCRoute', 'grpcroutes', ['v1', 'v1beta1']);
export const TCP_ROUTES = gatewayApi('TCPRoute', 'tcproutes', ['v1', 'v1alpha2']);
export const TLS_ROUTES = gatewayApi('TLSRoute', 'tlsroutes', ['v1', 'v1alpha2']);
export const REFERENCE_GRANTS = gatewayApi('ReferenceGrant', 'referencegrants', ['v1', 'v1beta1']);

/** The Gateway API kinds with a status subresource meshsnap writes (`watch --write-status`). */
export const GATEWAY_API_STATUS_RESOURCES: readonly ResourceSpec[] = [
  GATEWAY_CLASSES,
  K8S_GATEWAYS,
  HTTP_ROUTES,
  GRPC_ROUTES,
  TCP_ROUTES,
  TLS_ROUTES,
];

export const ALL_RESOURCES: readonly ResourceSpec[] = [
  SERVICES,
  ENDPOINT_SLICES,
  PODS,
  NAMESPACES,
  NODES,
  MESH_CONFIG,
  VIRTUAL_SERVICES,
  DESTINATION_RULES,
  GATEWAYS,
  SIDECARS,
  TELEMETRIES,
  ENVOY_FILTERS,
  AUTHORIZATION_POLICIES,
  PEER_AUTHENTICATIONS,
  REQUEST_AUTHENTICATIONS,
  SERVICE_ENTRIES,
  WORKLOAD_ENTRIES,
  WORKLOAD_GROUPS,
  ...GATEWAY_API_STATUS_RESOURCES,
  REFERENCE_GRANTS,
  INGRESSES,
  INGRESS_CLASSES,
];

/** The path of one object (`/status` appended for its status subresource). */
export function objectPath(spec: ResourceSpec, version: string, namespace: string | undefined, name: string): string {
  return `${collectionPath(spec, version, spec.namespaced ? namespace : undefined)}/${encodeURIComponent(name)}`;
}

/** The collection path of a resource, in one namespace or across all. */
export function collectionPath(spec: ResourceSpec, version: string, namespace?: string): string {
  const base = spec.group === '' ? `/api/${version}` : `/apis/${spec.group}/${version}`;
  const ns = spec.namespace ?? namespace;
  return spec.namespaced && ns !== undefined
    ? `${base}/namespaces/${encodeURIComponent(ns)}/${spec.plural}`
    : `${base}/${spec.plural}`;
}
