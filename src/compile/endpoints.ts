/**
 * EDS: one ClusterLoadAssignment per EDS cluster (`outbound|port||host` and each subset), as
 * istiod's EndpointBuilder makes them:
 *
 * - Endpoints are filtered by the subset's labels.
 * - Only HEALTHY endpoints are sent. istiod leaves out UNHEALTHY ones (PILOT_SEND_UNHEALTHY_ENDPOINTS
 *   defaults to false) unless the service has a traffic distribution, and DRAINING ones unless the
 *   service has the `istio.io/persistent-session` label, in which case they are sent as DRAINING.
 * - Endpoints are grouped per locality, localities sorted by `region/zone/subzone`, each with
 *   `load_balancing_weight` = the sum of its endpoints' weights (1 each). grpc-js-xds drops
 *   localities without a weight.
 * - Where the locality settings in effect make priorities or weights depend on the proxy's
 *   locality (./locality-lb.ts), the assignment has a variant per locality of the mesh
 *   (LocalityVariants; scope/locality-groups.ts puts them in groups of their own).
 * - A node-local service's (`internalTrafficPolicy: Local`) assignment has a variant per node of
 *   the mesh, holding only the endpoints whose pod is on that node, and one for a proxy of no known
 *   node, holding the endpoints without a node (istiod's filterIstioEndpoint; NodeVariants,
 *   scope/node-groups.ts); it gets no locality variants (every endpoint a proxy gets is on its node).
 * - A Kubernetes Service's assignment whose settings in effect are its PreferSameNode traffic
 *   distribution's (failoverPriority ending with the node, `kubernetes.io/hostname`) has node
 *   variants instead of locality variants: per node of the mesh, the priorities of a proxy on that
 *   node (in that Node's locality), and for a proxy of no known node those of a proxy on no node
 *   in no locality.
 * - Each endpoint carries `envoy.transport_socket_match: {tlsMode: istio}` when it has a sidecar
 *   (auto mTLS matches on it) and `istio.workload` telemetry metadata when its pod (or its
 *   WorkloadEntry or ServiceEntry) is known; a WorkloadEntry's `weight` is its lb weight.
 * - A cluster without endpoints still gets an empty assignment, so Envoy does not wait for it.
 */
import { endpointNodesMatter, type Locality, type MeshEndpoint, type MeshService } from '../model/service-model.js';
import { flat } from '../model/flat-string.js';
import { envoy, toStruct, type ClusterLoadAssignment, type Struct } from '../xds/proto.js';
import type { CompileContext } from './context.js';
import { exactList } from './exact.js';
import { InternTable } from './intern.js';
import { planServiceClusters, selectsLabels, type PlannedCluster } from './cluster/plan.js';
import {
  effectiveLbSetting,
  isPreferSameNode,
  localityEndpointsFor,
  type EffectiveLbSetting,
  type WrappedLocality,
} from './locality-lb.js';
import { localityKey, recordLocalityVariants, type LocalityPolicy } from './locality-variants.js';
import { NameOrderedTable, sortShortStrings } from './sorted.js';
import { recordNodeVariants, type NodeVariants } from './node-variants.js';

type LbEndpoint = envoy.config.endpoint.v3.LbEndpoint.$Properties;
type LocalityLbEndpoints = envoy.config.endpoint.v3.LocalityLbEndpoints.$Properties;

const HealthStatus = envoy.config.core.v3.HealthStatus;
const HEALTH_STATUS = {
  HEALTHY: HealthStatus.HEALTHY,
  UNHEALTHY: HealthStatus.UNHEALTHY,
  DRAINING: HealthStatus.DRAINING,
} as const;
export const PERSISTENT_SESSION_LABEL = 'istio.io/persistent-session';
/** istiod's cluster id for the local Kubernetes cluster. */
const CLUSTER_ID = 'Kubernetes';
const TLS_MODE_ISTIO: Struct = toStruct({ tlsMode: 'istio' });
const WEIGHT_ONE = Object.freeze({ value: 1 });

/** Every EDS cluster's assignment, in name order. */
export function buildEndpoints(ctx: CompileContext): Map<string, ClusterLoadAssignment> {
  const out = new NameOrderedTable<ClusterLoadAssignment>();
  for (const service of ctx.model.services) {
    for (const [name, cla] of buildServiceEndpoints(ctx, service)) out.add(name, cla);
  }
  return out.toMap();
}

export function buildServiceEndpoints(ctx: CompileContext, service: MeshService): Map<string, ClusterLoadAssignment> {
  const out = new Map<string, ClusterLoadAssignment>();
  const byPort = ctx.model.endpoints.get(service.hostname);
  const send = sendPolicy(service);
  for (const plan of planServiceClusters(ctx, service)) {
    if (plan.discovery !== 'EDS') continue;
    const wrapped = planLocalities(byPort, plan, send);
    const cla: ClusterLoadAssignment = { cluster_name: plan.name, endpoints: exactList(wrapped.map((w) => w.lle)) };
    if (service.nodeLocal) {
      recordNodeVariants(cla, nodeVariants(plan, cla, wrapped));
      Object.freeze(cla);
      out.set(plan.name, cla);
      continue;
    }
    if (endpointNodesMatter(service) && ctx.model.proxyNodes) {
      const setting = effectiveLbSetting(ctx.mesh, plan.policy?.loadBalancer, service.trafficDistribution);
      if (setting && isPreferSameNode(setting)) {
        recordNodeVariants(cla, sameNodeVariants(ctx, plan, cla, wrapped, setting));
        Object.freeze(cla);
        out.set(plan.name, cla);
        continue;
      }
    }
    // istiod's EndpointBuilder: the rule's (port- and subset-merged) settings, failover where the rule has outlier detection.
    if (
      recordLocalityVariants(ctx, edsLocalityPolicy(plan), cla, wrapped, (endpoints) =>
        Object.freeze({ cluster_name: plan.name, endpoints: exactList(endpoints) }),
      )
    )
      // In several locality groups (a variant equal to it is the very object): frozen, the mark of a shared message.
      Object.freeze(cla);
    out.set(plan.name, cla);
  }
  return out;
}

/**
 * What a proxy on each node gets of a node-local service's cluster: its localities' endpoints on
 * that node, the very LbEndpoints (`cla` itself where that is all of it); a node none of them is on
 * gets `empty`, a proxy of no known node the endpoints without a node.
 */
function nodeVariants(
  plan: PlannedCluster,
  cla: ClusterLoadAssignment,
  wrapped: readonly WrappedLocality[],
): NodeVariants<ClusterLoadAssignment> {
  const empty: ClusterLoadAssignment = Object.freeze({ cluster_name: plan.name, endpoints: exactList([]) });
  let all = 0;
  const nodes = new Set<string>();
  for (const w of wrapped)
    for (const ep of w.members) {
      nodes.add(ep.nodeName ?? '');
      all++;
    }
  const on = (node: string): ClusterLoadAssignment => {
    const list: LocalityLbEndpoints[] = [];
    let count = 0;
    for (const w of wrapped) {
      const lb_endpoints: LbEndpoint[] = [];
      let total = 0;
      w.members.forEach((ep, i) => {
        if ((ep.nodeName ?? '') !== node) return;
        lb_endpoints.push(w.lle.lb_endpoints?.[i] as LbEndpoint);
        total += ep.weight ?? 1;
      });
      if (lb_endpoints.length === 0) continue;
      count += lb_endpoints.length;
      list.push({
        locality: w.lle.locality,
        lb_endpoints: exactList(lb_endpoints),
        load_balancing_weight: weight(total),
      });
    }
    if (list.length === 0) return empty;
    // Every endpoint of the cluster is here: the assignment itself.
    if (count === all) return cla;
    return Object.freeze({ cluster_name: plan.name, endpoints: exactList(list) });
  };
  const byNode = new Map<string, ClusterLoadAssignment>();
  for (const node of nodes) if (node !== '') byNode.set(node, on(node));
  return { base: on(''), byNode, empty };
}

const NO_LOCALITY: Locality = Object.freeze({ region: '', zone: '', subzone: '' });

/**
 * What a proxy on each node gets of a PreferSameNode service's cluster (istiod's failoverPriority
 * on network, region, zone, subzone and node, forced): the priorities for a proxy on that node in
 * its Node's locality; a proxy of no known node gets those of a proxy on no node in no locality.
 * Nodes that host none of the endpoints get one variant per locality.
 */
function sameNodeVariants(
  ctx: CompileContext,
  plan: PlannedCluster,
  cla: ClusterLoadAssignment,
  wrapped: readonly WrappedLocality[],
  setting: EffectiveLbSetting,
): NodeVariants<ClusterLoadAssignment> {
  const outlier = plan.policy?.outlierDetection !== undefined;
  const own = cla.endpoints ?? [];
  const make = (list: readonly LocalityLbEndpoints[]): ClusterLoadAssignment =>
    list.length === own.length && list.every((l, i) => l === own[i])
      ? cla
      : Object.freeze({ cluster_name: plan.name, endpoints: exactList([...list]) });
  const hosting = new Set<string>();
  for (const w of wrapped) for (const ep of w.members) if (ep.nodeName) hosting.add(ep.nodeName);
  const base = make(localityEndpointsFor(wrapped, setting, outlier, NO_LOCALITY, ''));
  const byLocality = new Map<string, ClusterLoadAssignment>();
  const byNode = new Map<string, ClusterLoadAssignment>();
  for (const node of ctx.model.proxyNodes ?? []) {
    const locality = ctx.model.nodeLocalities.get(node) ?? NO_LOCALITY;
    if (hosting.has(node)) {
      byNode.set(node, make(localityEndpointsFor(wrapped, setting, outlier, locality, node)));
      continue;
    }
    // A node none of the endpoints is on matches none by its name: its locality decides.
    const key = localityKey(locality);
    let v = byLocality.get(key);
    if (!v) byLocality.set(key, (v = make(localityEndpointsFor(wrapped, setting, outlier, locality, node))));
    byNode.set(node, v);
  }
  return { base, byNode, empty: base };
}

const edsLocalityPolicy = (plan: PlannedCluster): LocalityPolicy => ({
  loadBalancer: plan.policy?.loadBalancer,
  outlierDetection: plan.policy?.outlierDetection !== undefined,
  trafficDistribution: plan.service.trafficDistribution,
});

/** The endpoints of one planned cluster by locality, with the endpoints behind them: a DNS cluster's inline assignment. */
export function wrappedLocalityEndpoints(ctx: CompileContext, plan: PlannedCluster): WrappedLocality[] {
  const service = plan.service;
  return planLocalities(ctx.model.endpoints.get(service.hostname), plan, sendPolicy(service));
}

/** A planned cluster's localities, each with the endpoints behind its LbEndpoints (failoverPriority reads their labels). */
function planLocalities(
  byPort: ReadonlyMap<number, readonly MeshEndpoint[]> | undefined,
  plan: PlannedCluster,
  send: SendPolicy,
): WrappedLocality[] {
  const all = byPort?.get(plan.port.port);
  if (!all?.length) return [];
  const mtls = mtlsCapable(plan);
  const namespace = plan.service.namespace;
  const selector = plan.subset?.labels;
  const out: WrappedLocality[] = [];
  for (const group of localityGroups(all, send)) {
    const built = lbEndpoints(group, namespace, mtls);
    if (!selector) {
      out.push({
        lle: { locality: group.locality, lb_endpoints: built as LbEndpoint[], load_balancing_weight: group.weight },
        members: group.members,
      });
      continue;
    }
    const lb_endpoints: LbEndpoint[] = [];
    const members: MeshEndpoint[] = [];
    let total = 0;
    group.members.forEach((ep, i) => {
      if (!selectsLabels(selector, ep.labels)) return;
      lb_endpoints.push(built[i] as LbEndpoint);
      members.push(ep);
      total += ep.weight ?? 1;
    });
    if (lb_endpoints.length)
      out.push({
        lle: { locality: group.locality, lb_endpoints: exactList(lb_endpoints), load_balancing_weight: weight(total) },
        members,
      });
  }
  return out;
}

/**
 * Which endpoints besides the healthy ones a service's assignments carry (bits): DRAINING ones for
 * a `persistent-session` service; UNHEALTHY ones for a service with a traffic distribution
 * (istiod's ForcesSupportUnhealthyEndpoints: the proxy spills over to another zone by endpoint
 * health, not outlier detection).
 */
type SendPolicy = number;
const SEND_DRAINING = 1;
const SEND_UNHEALTHY = 2;

function sendPolicy(service: MeshService): SendPolicy {
  const session = service.labels[PERSISTENT_SESSION_LABEL];
  return (
    (session !== undefined && session !== '' ? SEND_DRAINING : 0) |
    (service.trafficDistribution !== undefined ? SEND_UNHEALTHY : 0)
  );
}

function sendable(ep: MeshEndpoint, send: SendPolicy): boolean {
  if (ep.health === 'HEALTHY') return true;
  return ep.health === 'DRAINING' ? (send & SEND_DRAINING) !== 0 : (send & SEND_UNHEALTHY) !== 0;
}

/** istiod's mtls checker: a DestinationRule TLS mode other than ISTIO_MUTUAL turns off the tlsMode marker. */
function mtlsCapable(plan: PlannedCluster): boolean {
  const mode = plan.policy?.tls?.mode;
  return mode === undefined || mode === 'ISTIO_MUTUAL';
}

interface LocalityGroup {
  readonly locality: envoy.config.core.v3.Locality.$Properties;
  /** Sendable endpoints of the locality, by address then port. */
  readonly members: readonly MeshEndpoint[];
  /** The members' summed weight. */
  readonly weight: { value: number };
  /** The members' LbEndpoints (aligned with them, frozen) as the service's namespace sees them, with and without auto mTLS. */
  built?: { readonly namespace: string; mtls?: readonly LbEndpoint[]; plain?: readonly LbEndpoint[] };
}

/**
 * A service port's sendable endpoints by locality (sorted by `region/zone/subzone`), found once
 * per endpoint list: the main cluster and every subset cluster of the port filter the same groups.
 */
const groupsOf = new WeakMap<readonly MeshEndpoint[], { send: SendPolicy; groups: readonly LocalityGroup[] }>();

function localityGroups(eps: readonly MeshEndpoint[], send: SendPolicy): readonly LocalityGroup[] {
  const known = groupsOf.get(eps);
  if (known?.send === send) return known.groups;
  const byKey = new Map<string, MeshEndpoint[]>();
  for (const ep of eps) {
    if (!sendable(ep, send)) continue;
    const key = localityKey(ep.locality);
    const g = byKey.get(key);
    if (g) g.push(ep);
    else byKey.set(key, [ep]);
  }
  const keys = [...byKey.keys()];
  if (keys.length > 1) sortShortStrings(keys);
  const groups = keys.map((key): LocalityGroup => {
    const members = byKey.get(key) as MeshEndpoint[];
    // Model lists come sorted by address then port (service-model.ts): sort only what is not.
    if (!members.every((ep, i) => i === 0 || byAddress(members[i - 1] as MeshEndpoint, ep) < 0))
      members.sort(byAddress);
    let total = 0;
    for (const ep of members) total += ep.weight ?? 1;
    return {
      locality: localities.get(key, () => localityOf(members[0] as MeshEndpoint)),
      members,
      weight: weight(total),
    };
  });
  groupsOf.set(eps, { send, groups });
  return groups;
}

function localityOf(ep: MeshEndpoint): envoy.config.core.v3.Locality.$Properties {
  const locality: envoy.config.core.v3.Locality.$Properties = {};
  if (ep.locality.region) locality.region = ep.locality.region;
  if (ep.locality.zone) locality.zone = ep.locality.zone;
  if (ep.locality.subzone) locality.sub_zone = ep.locality.subzone;
  return locality;
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

/** A locality group's LbEndpoints, built once per group and shared by the main cluster and every subset cluster of the port. */
function lbEndpoints(group: LocalityGroup, namespace: string, mtls: boolean): readonly LbEndpoint[] {
  if (group.built?.namespace !== namespace) group.built = { namespace };
  const built = group.built;
  const hit = mtls ? built.mtls : built.plain;
  if (hit) return hit;
  const made = Object.freeze(group.members.map((ep) => lbEndpoint(ep, namespace, mtls && ep.tlsMode === 'istio')));
  if (mtls) built.mtls = made;
  else built.plain = made;
  return made;
}

/** Frozen: one object serves every cluster of the port that holds the endpoint. */
function lbEndpoint(ep: MeshEndpoint, namespace: string, istioTls: boolean): LbEndpoint {
  return Object.freeze({
    endpoint: Object.freeze({
      address: Object.freeze({ socket_address: Object.freeze({ address: ep.address, port_value: ep.port }) }),
    }),
    health_status: HEALTH_STATUS[ep.health],
    metadata: lbEndpointMetadata(ep, namespace, istioTls),
    load_balancing_weight: ep.weight === undefined ? WEIGHT_ONE : weight(ep.weight),
  });
}

/**
 * A workload's endpoint metadata, by its labels object (one per pod or WorkloadEntry, shared by
 * its endpoints on every port and service): the telemetry label is found once per workload, not
 * per endpoint. The entry is the workload's whose name and namespace it records.
 */
interface WorkloadMetadata {
  readonly podName: string | undefined;
  readonly workloadName: string | undefined;
  readonly namespace: string;
  istio?: Metadata;
  plain?: Metadata;
}
const byWorkload = new WeakMap<Readonly<Record<string, string>>, WorkloadMetadata>();

function lbEndpointMetadata(ep: MeshEndpoint, namespace: string, istioTls: boolean): Metadata {
  let known = byWorkload.get(ep.labels);
  if (
    !known ||
    known.podName !== ep.podName ||
    known.workloadName !== ep.workloadName ||
    known.namespace !== namespace
  ) {
    known = { podName: ep.podName, workloadName: ep.workloadName, namespace };
    byWorkload.set(ep.labels, known);
  }
  const hit = istioTls ? known.istio : known.plain;
  if (hit) return hit;
  const made = sharedEndpointMetadata(workloadTelemetry(ep, namespace), istioTls);
  if (istioTls) known.istio = made;
  else known.plain = made;
  return made;
}

function sharedEndpointMetadata(workload: string | undefined, istioTls: boolean): Metadata {
  return endpointMetadata.get(`${istioTls}|${workload ?? ''}`, () => {
    const filter_metadata: Record<string, Struct> = {};
    // Keys in sorted order: protobufjs writes map entries in insertion order.
    if (istioTls) filter_metadata['envoy.transport_socket_match'] = TLS_MODE_ISTIO;
    if (workload !== undefined) filter_metadata.istio = { fields: { workload: { stringValue: workload } } };
    return { filter_metadata };
  });
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
  return flat(`${workload};${namespace};${name};${revision};${CLUSTER_ID}`);
}

const REPLICASET_POD = /^(.+)-[a-z0-9]{5,10}-[a-z0-9]{5}$/;

export function deploymentName(podName: string): string {
  return REPLICASET_POD.exec(podName)?.[1] ?? podName;
}
