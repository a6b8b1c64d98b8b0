/**
 * What one resource refers to by name: the route configs a listener loads over RDS, the
 * ClusterLoadAssignments an EDS cluster needs, the clusters routes and TCP proxies send to.
 * Read from the typed message objects; filters packed in `Any` are decoded.
 */
import protobuf from 'protobufjs/minimal.js';
import {
  decodeMessage,
  envoy,
  type Any,
  type Cluster,
  type Listener,
  type RouteConfiguration,
  type VirtualHost,
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
  const bytes = any.value ?? new Uint8Array();
  if (typeName === TypeName.HttpConnectionManager) {
    try {
      hcmRefs(bytes, refs);
    } catch {
      refs.undecodable.push(typeName);
    }
    return;
  }
  let decoded: object;
  try {
    decoded = decodeMessage(typeName, bytes);
  } catch {
    refs.undecodable.push(typeName);
    return;
  }
  {
    const tcp = decoded as TcpProxy;
    if (tcp.cluster) refs.clusters.push(tcp.cluster);
    for (const wc of tcp.weighted_clusters?.clusters ?? []) refs.clusters.push(wc.name ?? '');
  }
}

const Rds = envoy.extensions.filters.network.http_connection_manager.v3.Rds;
const RouteConfigurationCodec = envoy.config.route.v3.RouteConfiguration;
/** HttpConnectionManager's `rds` (3) and `route_config` (4): the only fields that name other resources. */
const HCM_RDS = 3;
const HCM_ROUTE_CONFIG = 4;

/**
 * An HttpConnectionManager's references, read from its bytes: `rds` and `route_config` are decoded,
 * the other fields (the HTTP filters, a large part of every listener) are skipped, not decoded:
 * the consistency check runs on every build, over every listener.
 */
function hcmRefs(bytes: Uint8Array, refs: ResourceRefs): void {
  const reader = protobuf.Reader.create(bytes);
  // As a full decode would: a field given twice keeps its last value.
  let rds: string | undefined;
  let routeConfig: RouteConfiguration | undefined;
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    if (field === HCM_RDS && (tag & 7) === 2) rds = Rds.decode(reader, reader.uint32()).route_config_name ?? '';
    else if (field === HCM_ROUTE_CONFIG && (tag & 7) === 2)
      routeConfig = RouteConfigurationCodec.decode(reader, reader.uint32());
    else reader.skipType(tag & 7);
  }
  if (rds !== undefined) refs.routes.push(rds);
  if (routeConfig) routeConfigRefs(routeConfig, refs);
}

function routeConfigRefs(rc: RouteConfiguration, refs: ResourceRefs): void {
  for (const vh of rc.virtual_hosts ?? []) for (const c of virtualHostClusters(vh)) refs.clusters.push(c);
}

// A virtual host is usually one object in every client namespace's route config: read once.
const vhostCache = new WeakMap<VirtualHost, readonly string[]>();

function virtualHostClusters(vh: VirtualHost): readonly string[] {
  let clusters = vhostCache.get(vh);
  if (clusters) return clusters;
  const out: string[] = [];
  for (const m of vh.request_mirror_policies ?? []) if (m.cluster) out.push(m.cluster);
  for (const route of vh.routes ?? []) {
    const action = route.route;
    if (!action) continue;
    if (action.cluster) out.push(action.cluster);
    for (const wc of action.weighted_clusters?.clusters ?? []) if (wc.name) out.push(wc.name);
    for (const m of action.request_mirror_policies ?? []) if (m.cluster) out.push(m.cluster);
  }
  vhostCache.set(vh, (clusters = out));
  return clusters;
}
