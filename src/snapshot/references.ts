/**
 * What one resource refers to by name: the route configs a listener loads over RDS, the
 * ClusterLoadAssignments an EDS cluster needs, the clusters routes and TCP proxies send to.
 * Read from the typed message objects; filters packed in `Any` are decoded.
 */
import {
  decodeMessage,
  envoy,
  type Any,
  type Cluster,
  type HttpConnectionManager,
  type Listener,
  type RouteConfiguration,
} from '../xds/proto.js';
import { TypeName, typeNameOf, type XdsType } from '../xds/type-urls.js';

export interface ResourceRefs {
  /** RDS route config names. */
  readonly routes: string[];
  /** EDS service names. */
  readonly endpoints: string[];
  readonly clusters: string[];
  /** Packed filter configs that could not be decoded (a compiler bug). */
  readonly undecodable: string[];
}

type TcpProxy = envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy.$Properties;

const EDS = envoy.config.cluster.v3.Cluster.DiscoveryType.EDS;

// Messages are immutable once built, so their references are computed once per object.
const cache = new WeakMap<object, ResourceRefs>();

const NONE: ResourceRefs = { routes: [], endpoints: [], clusters: [], undecodable: [] };

export function resourceRefs(type: XdsType, message: object): ResourceRefs {
  if (type === 'endpoints') return NONE; // a ClusterLoadAssignment names nothing else
  const hit = cache.get(message);
  if (hit) return hit;
  const refs: ResourceRefs = { routes: [], endpoints: [], clusters: [], undecodable: [] };
  if (type === 'listeners') listenerRefs(message as Listener, refs);
  else if (type === 'routes') routeConfigRefs(message as RouteConfiguration, refs);
  else clusterRefs(message as Cluster, refs);
  cache.set(message, refs);
  return refs;
}

function clusterRefs(c: Cluster, refs: ResourceRefs): void {
  if (c.type !== EDS) return;
  const serviceName = c.eds_cluster_config?.service_name;
  refs.endpoints.push(serviceName ? serviceName : (c.name ?? ''));
}

function listenerRefs(l: Listener, refs: ResourceRefs): void {
  const chains = [...(l.filter_chains ?? [])];
  if (l.default_filter_chain) chains.push(l.default_filter_chain);
  for (const chain of chains) {
    for (const filter of chain.filters ?? []) if (filter.typed_config) networkFilterRefs(filter.typed_config, refs);
  }
  const api = l.api_listener?.api_listener;
  if (api) networkFilterRefs(api, refs);
}

// A packed filter is often one object in many listeners (the passthrough chains of every
// virtualInbound, the HTTP filter shared by a port's chains): decoded once per object.
const filterCache = new WeakMap<Any, ResourceRefs>();

function networkFilterRefs(any: Any, refs: ResourceRefs): void {
  let own = filterCache.get(any);
  if (!own) {
    own = { routes: [], endpoints: [], clusters: [], undecodable: [] };
    decodeFilterRefs(any, own);
    filterCache.set(any, own);
  }
  for (const kind of ['routes', 'endpoints', 'clusters', 'undecodable'] as const)
    for (const r of own[kind]) refs[kind].push(r);
}

function decodeFilterRefs(any: Any, refs: ResourceRefs): void {
  const typeName = typeNameOf(any.type_url ?? '');
  if (typeName !== TypeName.HttpConnectionManager && typeName !== TypeName.TcpProxy) return;
  let decoded: object;
  try {
    decoded = decodeMessage(typeName, any.value ?? new Uint8Array());
  } catch {
    refs.undecodable.push(typeName);
    return;
  }
  if (typeName === TypeName.HttpConnectionManager) {
    const hcm = decoded as HttpConnectionManager;
    const rds = hcm.rds?.route_config_name;
    if (hcm.rds) refs.routes.push(rds ?? '');
    if (hcm.route_config) routeConfigRefs(hcm.route_config, refs);
  } else {
    const tcp = decoded as TcpProxy;
    if (tcp.cluster) refs.clusters.push(tcp.cluster);
    for (const wc of tcp.weighted_clusters?.clusters ?? []) refs.clusters.push(wc.name ?? '');
  }
}

function routeConfigRefs(rc: RouteConfiguration, refs: ResourceRefs): void {
  for (const vh of rc.virtual_hosts ?? []) {
    for (const m of vh.request_mirror_policies ?? []) if (m.cluster) refs.clusters.push(m.cluster);
    for (const route of vh.routes ?? []) {
      const action = route.route;
      if (!action) continue;
      if (action.cluster) refs.clusters.push(action.cluster);
      for (const wc of action.weighted_clusters?.clusters ?? []) if (wc.name) refs.clusters.push(wc.name);
      for (const m of action.request_mirror_policies ?? []) if (m.cluster) refs.clusters.push(m.cluster);
    }
  }
}
