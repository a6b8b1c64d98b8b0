/** Hand-built compiler outputs for snapshot tests (the real compiler is not needed to test storage). */
import type { ClassSelector, CompileOutput, GroupId, ProxyClass, ResourceTable } from '../../src/compile/types.js';
import { emptyTable } from '../../src/compile/types.js';
import {
  durationMs,
  envoy,
  packAny,
  type Cluster,
  type ClusterLoadAssignment,
  type Listener,
  type RouteConfiguration,
} from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';

const EDS = envoy.config.cluster.v3.Cluster.DiscoveryType.EDS;
const STATIC = envoy.config.cluster.v3.Cluster.DiscoveryType.STATIC;

export function edsCluster(name: string, serviceName = name): Cluster {
  return {
    name,
    type: EDS,
    connect_timeout: durationMs(10_000),
    eds_cluster_config: { service_name: serviceName, eds_config: { ads: {}, resource_api_version: 2 } },
  };
}

export function staticCluster(name: string): Cluster {
  return { name, type: STATIC, connect_timeout: durationMs(1_000) };
}

export function cla(name: string, ips: string[], port = 9080): ClusterLoadAssignment {
  return {
    cluster_name: name,
    endpoints: [
      {
        load_balancing_weight: { value: 1 },
        lb_endpoints: ips.map((ip) => ({
          endpoint: { address: { socket_address: { address: ip, port_value: port } } },
        })),
      },
    ],
  };
}

const router = { name: 'envoy.filters.http.router', typed_config: packAny(TypeName.Router, {}) };

function hcmRds(routeName: string) {
  return packAny(TypeName.HttpConnectionManager, {
    stat_prefix: routeName,
    rds: { route_config_name: routeName, config_source: { ads: {}, resource_api_version: 2 } },
    http_filters: [router],
  });
}

export function httpListener(name: string, port: number, routeName: string): Listener {
  return {
    name,
    address: { socket_address: { address: '0.0.0.0', port_value: port } },
    filter_chains: [
      { filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: hcmRds(routeName) }] },
    ],
  };
}

export function tcpListener(
  name: string,
  ip: string,
  port: number,
  target: string | { name: string; weight: number }[],
): Listener {
  const tcp =
    typeof target === 'string'
      ? { stat_prefix: name, cluster: target }
      : { stat_prefix: name, weighted_clusters: { clusters: target } };
  return {
    name,
    address: { socket_address: { address: ip, port_value: port } },
    filter_chains: [
      { filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: packAny(TypeName.TcpProxy, tcp) }] },
    ],
  };
}

/** A proxyless gRPC api_listener using RDS. */
export function apiListener(name: string, routeName: string): Listener {
  return { name, api_listener: { api_listener: hcmRds(routeName) } };
}

/** virtualInbound-like: an HCM with an inline route config in the default filter chain. */
export function inlineRouteListener(name: string, cluster: string): Listener {
  const hcm = { stat_prefix: 'inbound', route_config: routeConfig('inbound', [cluster]), http_filters: [router] };
  return {
    name,
    address: { socket_address: { address: '0.0.0.0', port_value: 15006 } },
    default_filter_chain: {
      filters: [
        {
          name: 'envoy.filters.network.http_connection_manager',
          typed_config: packAny(TypeName.HttpConnectionManager, hcm),
        },
      ],
    },
  };
}

export interface RouteTargets {
  weighted?: { name: string; weight: number }[];
  mirror?: string;
}

export function routeConfig(name: string, clusters: string[], extra: RouteTargets = {}): RouteConfiguration {
  const routes: envoy.config.route.v3.Route.$Properties[] = clusters.map((c, i) => ({
    match: { prefix: `/${i}` },
    route: { cluster: c, ...(extra.mirror ? { request_mirror_policies: [{ cluster: extra.mirror }] } : {}) },
  }));
  if (extra.weighted)
    routes.push({
      match: { prefix: '/' },
      route: {
        weighted_clusters: { clusters: extra.weighted.map((w) => ({ name: w.name, weight: { value: w.weight } })) },
      },
    });
  return { name, virtual_hosts: [{ name: 'vh', domains: ['*'], routes }] };
}

export interface TableSpec {
  clusters?: Cluster[];
  endpoints?: ClusterLoadAssignment[];
  listeners?: Listener[];
  routes?: RouteConfiguration[];
}

export function table(spec: TableSpec): ResourceTable {
  const t = emptyTable();
  for (const c of spec.clusters ?? []) t.clusters.set(c.name ?? '', c);
  for (const e of spec.endpoints ?? []) t.endpoints.set(e.cluster_name ?? '', e);
  for (const l of spec.listeners ?? []) t.listeners.set(l.name ?? '', l);
  for (const r of spec.routes ?? []) t.routes.set(r.name ?? '', r);
  return t;
}

export function output(
  groups: Record<GroupId, TableSpec>,
  classes: ProxyClass[],
  selectors: ClassSelector[] = [],
): CompileOutput {
  return { groups: new Map(Object.entries(groups).map(([id, spec]) => [id, table(spec)])), classes, selectors };
}

export const A = 'outbound|9080||a.default.svc.cluster.local';
export const B = 'outbound|9080||b.default.svc.cluster.local';
export const DB = 'outbound|3306||db.default.svc.cluster.local';

export function sidecarClass(id: string, services: string[], inbound: string): ProxyClass {
  return {
    id,
    generator: 'sidecar',
    namespace: 'default',
    services,
    groups: ['outbound', 'endpoints', 'outbound-listeners', 'routes/default', inbound],
  };
}

/** A small but complete mesh: two HTTP services, a TCP service, sidecar and gRPC classes. Fresh objects on every call. */
export function sampleOutput(): CompileOutput {
  return output(
    {
      outbound: { clusters: [edsCluster(A), edsCluster(B), edsCluster(DB), staticCluster('BlackHoleCluster')] },
      endpoints: { endpoints: [cla(A, ['10.1.0.1', '10.1.0.2']), cla(B, ['10.1.0.3']), cla(DB, ['10.1.0.9'], 3306)] },
      'outbound-listeners': {
        listeners: [httpListener('0.0.0.0_9080', 9080, '9080'), tcpListener('10.96.0.9_3306', '10.96.0.9', 3306, DB)],
      },
      'routes/default': {
        routes: [
          routeConfig('9080', [A], {
            weighted: [
              { name: A, weight: 80 },
              { name: B, weight: 20 },
            ],
            mirror: B,
          }),
        ],
      },
      'inbound/default/_': {
        listeners: [inlineRouteListener('virtualInbound', 'InboundPassthroughCluster')],
        clusters: [staticCluster('InboundPassthroughCluster')],
      },
      'inbound/default/a': {
        listeners: [inlineRouteListener('virtualInbound', 'inbound|9080||')],
        clusters: [staticCluster('inbound|9080||')],
      },
      'grpc-clusters': { clusters: [edsCluster(A), edsCluster(B)] },
      'grpc/default': {
        listeners: [apiListener('a.default.svc.cluster.local:9080', 'a.default.svc.cluster.local:9080')],
        routes: [routeConfig('a.default.svc.cluster.local:9080', [A])],
      },
    },
    [
      {
        id: 'grpc/default',
        generator: 'grpc',
        namespace: 'default',
        services: [],
        groups: ['grpc-clusters', 'endpoints', 'grpc/default'],
      },
      sidecarClass('sidecar/default/_', [], 'inbound/default/_'),
      sidecarClass('sidecar/default/a', ['a.default.svc.cluster.local'], 'inbound/default/a'),
    ],
    [
      { namespace: 'default', hostname: 'b.default.svc.cluster.local', selector: { app: 'b' } },
      { namespace: 'default', hostname: 'a.default.svc.cluster.local', selector: { app: 'a' } },
    ],
  );
}

/** The same output rebuilt with every map, group list and array of classes/selectors in reverse order. */
export function reversed(out: CompileOutput): CompileOutput {
  const groups = new Map<GroupId, ResourceTable>();
  for (const id of [...out.groups.keys()].reverse()) {
    const t = out.groups.get(id) as ResourceTable;
    const r = emptyTable();
    for (const type of ['routes', 'listeners', 'endpoints', 'clusters'] as const) {
      for (const name of [...t[type].keys()].reverse()) (r[type] as Map<string, unknown>).set(name, t[type].get(name));
    }
    groups.set(id, r);
  }
  return { groups, classes: [...out.classes].reverse(), selectors: [...out.selectors].reverse() };
}

export const INFO = { inputsDigest: 'sha256:' + '0'.repeat(64), compiler: { name: 'meshsnap', version: '0.1.0-test' } };
