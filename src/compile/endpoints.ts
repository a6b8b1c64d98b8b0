/**
 * EDS: one ClusterLoadAssignment per EDS cluster (`outbound|port||host` and each subset), as
 * istiod's EndpointBuilder makes them:
 *
 * - Endpoints are filtered by the subset's labels.
 * - Only HEALTHY endpoints are sent. istiod leaves out UNHEALTHY ones (PILOT_SEND_UNHEALTHY_ENDPOINTS
 *   defaults to false) and DRAINING ones unless the service has the `istio.io/persistent-session`
 *   label, in which case they are sent as DRAINING.
 * - Endpoints are grouped per locality, localities sorted by `region/zone/subzone`, each with
 *   `load_balancing_weight` = the sum of its endpoints' weights (1 each). grpc-js-xds drops
 *   localities without a weight.
 * - Each endpoint carries `envoy.transport_socket_match: {tlsMode: istio}` when it has a sidecar
 *   (auto mTLS matches on it) and `istio.workload` telemetry metadata when its pod (or its
 *   WorkloadEntry or ServiceEntry) is known; a WorkloadEntry's `weight` is its lb weight.
 * - A cluster without endpoints still gets an empty assignment, so Envoy does not wait for it.
 */
import type { MeshEndpoint, MeshService } from '../model/service-model.js';
import { envoy, toStruct, type ClusterLoadAssignment, type Struct } from '../xds/proto.js';
import type { CompileContext } from './context.js';
import { InternTable } from './intern.js';
import { planServiceClusters, selectsLabels, type PlannedCluster } from './cluster/plan.js';

type LbEndpoint = envoy.config.endpoint.v3.LbEndpoint.$Properties;
type LocalityLbEndpoints = envoy.config.endpoint.v3.LocalityLbEndpoints.$Properties;

const HealthStatus = envoy.config.core.v3.HealthStatus;
export const PERSISTENT_SESSION_LABEL = 'istio.io/persistent-session';
/** istiod's cluster id for the local Kubernetes cluster. */
const CLUSTER_ID = 'Kubernetes';
const TLS_MODE_ISTIO: Struct = toStruct({ tlsMode: 'istio' });
const WEIGHT_ONE = Object.freeze({ value: 1 });

export function buildEndpoints(ctx: CompileContext): Map<string, ClusterLoadAssignment> {
  const out = new Map<string, ClusterLoadAssignment>();
  for (const service of ctx.model.services) {
    for (const [name, cla] of buildServiceEndpoints(ctx, service)) if (!out.has(name)) out.set(name, cla);
  }
  return out;
}

export function buildServiceEndpoints(ctx: CompileContext, service: MeshService): Map<string, ClusterLoadAssignment> {
  const out = new Map<string, ClusterLoadAssignment>();
  const byPort = ctx.model.endpoints.get(service.hostname);
  const sendDraining =
    service.labels[PERSISTENT_SESSION_LABEL] !== undefined && service.labels[PERSISTENT_SESSION_LABEL] !== '';
  for (const plan of planServiceClusters(ctx, service)) {
    if (plan.discovery !== 'EDS') continue;
    out.set(plan.name, { cluster_name: plan.name, endpoints: planEndpoints(byPort, plan, sendDraining) });
  }
  return out;
}

/** The endpoints of one planned cluster, by locality: its EDS assignment, or a DNS cluster's inline one. */
export function localityEndpoints(ctx: CompileContext, plan: PlannedCluster): LocalityLbEndpoints[] {
  const service = plan.service;
  const sendDraining =
    service.labels[PERSISTENT_SESSION_LABEL] !== undefined && service.labels[PERSISTENT_SESSION_LABEL] !== '';
  return planEndpoints(ctx.model.endpoints.get(service.hostname), plan, sendDraining);
}

function planEndpoints(
  byPort: ReadonlyMap<number, readonly MeshEndpoint[]> | undefined,
  plan: PlannedCluster,
  sendDraining: boolean,
): LocalityLbEndpoints[] {
  const eps = (byPort?.get(plan.port.port) ?? []).filter(
    (ep) => sendable(ep, sendDraining) && selectsLabels(plan.subset?.labels, ep.labels),
  );
  return groupByLocality(eps, plan.service, mtlsCapable(plan));
}

function sendable(ep: MeshEndpoint, sendDraining: boolean): boolean {
  if (ep.health === 'HEALTHY') return true;
  return ep.health === 'DRAINING' && sendDraining;
}

/** istiod's mtls checker: a DestinationRule TLS mode other than ISTIO_MUTUAL turns off the tlsMode marker. */
function mtlsCapable(plan: PlannedCluster): boolean {
  const mode = plan.policy?.tls?.mode;
  return mode === undefined || mode === 'ISTIO_MUTUAL';
}

const localityKey = (ep: MeshEndpoint): string => `${ep.locality.region}/${ep.locality.zone}/${ep.locality.subzone}`;

function groupByLocality(eps: readonly MeshEndpoint[], service: MeshService, mtls: boolean): LocalityLbEndpoints[] {
  const groups = new Map<string, MeshEndpoint[]>();
  for (const ep of eps) {
    const key = localityKey(ep);
    const g = groups.get(key);
    if (g) g.push(ep);
    else groups.set(key, [ep]);
  }
  const keys = [...groups.keys()].sort();
  return keys.map((key) => {
    const members = [...(groups.get(key) as MeshEndpoint[])].sort(byAddress);
    const first = members[0] as MeshEndpoint;
    return {
      locality: localities.get(key, () => {
        const locality: envoy.config.core.v3.Locality.$Properties = {};
        if (first.locality.region) locality.region = first.locality.region;
        if (first.locality.zone) locality.zone = first.locality.zone;
        if (first.locality.subzone) locality.sub_zone = first.locality.subzone;
        return locality;
      }),
      lb_endpoints: members.map((ep) => lbEndpoint(ep, service, mtls)),
      load_balancing_weight: weight(members.reduce((sum, ep) => sum + (ep.weight ?? 1), 0)),
    };
  });
}

function byAddress(a: MeshEndpoint, b: MeshEndpoint): number {
  if (a.address !== b.address) return a.address < b.address ? -1 : 1;
  return a.port - b.port;
}

// Shared parts (../intern.ts): localities by key, weights by value, metadata by marker and workload.
const localities = new InternTable<envoy.config.core.v3.Locality.$Properties>();
const weights = new InternTable<{ value: number }>();
const weight = (value: number): { value: number } =>
  value === 1 ? WEIGHT_ONE : weights.get(String(value), () => ({ value }));
const endpointMetadata = new InternTable<Metadata>();

type Metadata = envoy.config.core.v3.Metadata.$Properties;
/** An endpoint's metadata per service namespace, with and without the mTLS marker: found once per endpoint, not per cluster. */
const metadataOf = new WeakMap<MeshEndpoint, { namespace: string; tls?: Metadata; plain?: Metadata }>();

function lbEndpointMetadata(ep: MeshEndpoint, namespace: string, istioTls: boolean): Metadata {
  let known = metadataOf.get(ep);
  if (known?.namespace !== namespace) metadataOf.set(ep, (known = { namespace }));
  const hit = istioTls ? known.tls : known.plain;
  if (hit) return hit;
  const workload = workloadTelemetry(ep, namespace);
  const metadata = endpointMetadata.get(`${istioTls}|${workload ?? ''}`, () => {
    const filter_metadata: Record<string, Struct> = {};
    // Keys in sorted order: protobufjs writes map entries in insertion order.
    if (istioTls) filter_metadata['envoy.transport_socket_match'] = TLS_MODE_ISTIO;
    if (workload !== undefined) filter_metadata.istio = { fields: { workload: { stringValue: workload } } };
    return { filter_metadata };
  });
  if (istioTls) known.tls = metadata;
  else known.plain = metadata;
  return metadata;
}

function lbEndpoint(ep: MeshEndpoint, service: MeshService, mtls: boolean): LbEndpoint {
  const metadata = lbEndpointMetadata(ep, service.namespace, mtls && ep.tlsMode === 'istio');
  return {
    endpoint: { address: { socket_address: { address: ep.address, port_value: ep.port } } },
    health_status: ep.health === 'DRAINING' ? HealthStatus.DRAINING : HealthStatus.HEALTHY,
    metadata,
    load_balancing_weight: ep.weight === undefined ? WEIGHT_ONE : weight(ep.weight),
  };
}

/**
 * istiod's compressed telemetry label `workload;namespace;canonical-name;canonical-revision;cluster`,
 * which lets the client's stats name a server that has no sidecar. The workload name is the pod's
 * Deployment when the pod name has the ReplicaSet shape `<deployment>-<hash>-<id>`.
 */
export function workloadTelemetry(ep: MeshEndpoint, namespace: string): string | undefined {
  if (!ep.podName && !ep.workloadName) return undefined;
  const workload = ep.workloadName ?? deploymentName(ep.podName as string);
  const l = ep.labels;
  const name = l['service.istio.io/canonical-name'] ?? l['app.kubernetes.io/name'] ?? l.app ?? workload;
  let revision = l['service.istio.io/canonical-revision'] ?? l['app.kubernetes.io/version'] ?? l.version ?? 'latest';
  if (revision === 'latest') revision = '';
  return `${workload};${namespace};${name};${revision};${CLUSTER_ID}`;
}

const REPLICASET_POD = /^(.+)-[a-z0-9]{5,10}-[a-z0-9]{5}$/;

export function deploymentName(podName: string): string {
  return REPLICASET_POD.exec(podName)?.[1] ?? podName;
}
