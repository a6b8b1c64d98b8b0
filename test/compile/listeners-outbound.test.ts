import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildOutboundListeners } from '../../src/compile/listeners.js';
import {
  assertListenerRoundTrip,
  destinationRule,
  filterConfig,
  makeContext,
  port,
  service,
  virtualService,
} from './listeners-helpers.js';

const HCM = 'envoy.filters.network.http_connection_manager';
const TCP = 'envoy.filters.network.tcp_proxy';

const bookinfo = () => [
  service('productpage', 'default', [port(9080, 'HTTP')], { clusterIP: '10.96.0.10' }),
  service('reviews', 'default', [port(9080, 'HTTP')], { clusterIP: '10.96.0.11' }),
  service('ratings', 'default', [port(9080, 'HTTP')], { clusterIP: '10.96.0.12' }),
  service('mysqldb', 'default', [port(3306, 'MySQL')], { clusterIP: '10.96.3.4' }),
  service('grpc-echo', 'default', [port(7070, 'GRPC')], { clusterIP: '10.96.0.20' }),
];

test('outbound listeners: virtualOutbound, one 0.0.0.0_<port> per HTTP port, one <ip>_<port> per TCP service port', () => {
  const listeners = buildOutboundListeners(makeContext(bookinfo()));
  assert.deepEqual([...listeners.keys()], ['0.0.0.0_7070', '0.0.0.0_9080', '10.96.3.4_3306', 'virtualOutbound']);
  for (const l of listeners.values()) assertListenerRoundTrip(l);

  const vo = listeners.get('virtualOutbound');
  assert.deepEqual(vo?.address, { socket_address: { address: '0.0.0.0', port_value: 15001 } });
  assert.deepEqual(vo?.use_original_dst, { value: true });
  const catchAll = vo?.filter_chains?.find((c) => c.name === 'virtualOutbound-catchall-tcp');
  assert.deepEqual(filterConfig(catchAll, TCP), { stat_prefix: 'PassthroughCluster', cluster: 'PassthroughCluster' });
  const loop = vo?.filter_chains?.find((c) => c.name === 'virtualOutbound-blackhole');
  assert.deepEqual(loop?.filter_chain_match?.destination_port, { value: 15001 });
  assert.equal(filterConfig(loop, TCP).cluster, 'BlackHoleCluster');
});

test('0.0.0.0_9080: HCM over RDS "9080", fault, cors then router, passthrough for non-HTTP traffic', () => {
  const l = buildOutboundListeners(makeContext(bookinfo())).get('0.0.0.0_9080');
  assert.ok(l);
  assert.deepEqual(l.address, { socket_address: { address: '0.0.0.0', port_value: 9080 } });
  assert.deepEqual(l.bind_to_port, { value: false });
  assert.equal(l.traffic_direction, 2 /* OUTBOUND */);
  assert.deepEqual(
    l.listener_filters?.map((f) => f.name),
    ['envoy.filters.listener.http_inspector'],
  );
  assert.equal(l.filter_chains?.length, 1);
  const chain = l.filter_chains?.[0];
  assert.deepEqual(chain?.filter_chain_match, {
    transport_protocol: 'raw_buffer',
    application_protocols: ['http/1.1', 'h2c'],
  });
  const hcm = filterConfig(chain, HCM);
  assert.equal(hcm.stat_prefix, 'outbound_0.0.0.0_9080');
  assert.deepEqual(hcm.rds, {
    route_config_name: '9080',
    config_source: { ads: {}, initial_fetch_timeout: {}, resource_api_version: 'V3' },
  });
  const filters = hcm.http_filters as { name: string; typed_config: { type_url: string } }[];
  assert.deepEqual(
    filters.map((f) => f.name),
    ['envoy.filters.http.fault', 'envoy.filters.http.cors', 'envoy.filters.http.router'],
  );
  assert.deepEqual(
    filters.map((f) => f.typed_config.type_url.split('/')[1]),
    [
      'envoy.extensions.filters.http.fault.v3.HTTPFault',
      'envoy.extensions.filters.http.cors.v3.Cors',
      'envoy.extensions.filters.http.router.v3.Router',
    ],
  );
  assert.deepEqual(hcm.use_remote_address, {});
  assert.deepEqual(hcm.normalize_path, { value: true });
  assert.equal(hcm.path_with_escaped_slashes_action, 'KEEP_UNCHANGED');
  assert.deepEqual(hcm.upgrade_configs, [{ upgrade_type: 'websocket' }]);
  assert.deepEqual(hcm.stream_idle_timeout, {});
  // istiod's mesh default enableTracing: sampled at 1 % (test/compile/tracing.test.ts has the rest).
  assert.equal((hcm.tracing as { random_sampling?: { value?: number } }).random_sampling?.value, 1);

  assert.equal(l.default_filter_chain?.name, 'PassthroughFilterChain');
  assert.equal(filterConfig(l.default_filter_chain, TCP).cluster, 'PassthroughCluster');
});

test('a MySQL port gets a listener on the service IP with a tcp_proxy to its outbound cluster', () => {
  const l = buildOutboundListeners(makeContext(bookinfo())).get('10.96.3.4_3306');
  assert.ok(l);
  assert.deepEqual(l.address, { socket_address: { address: '10.96.3.4', port_value: 3306 } });
  assert.equal(l.default_filter_chain, undefined);
  assert.equal(l.listener_filters, undefined);
  assert.equal(l.filter_chains?.length, 1);
  assert.equal(l.filter_chains?.[0]?.filter_chain_match, undefined);
  assert.deepEqual(filterConfig(l.filter_chains?.[0], TCP), {
    stat_prefix: 'outbound|3306||mysqldb.default.svc.cluster.local',
    cluster: 'outbound|3306||mysqldb.default.svc.cluster.local',
  });
});

test('REGISTRY_ONLY sends unknown destinations to BlackHoleCluster', () => {
  const listeners = buildOutboundListeners(
    makeContext(bookinfo(), { mesh: { outboundTrafficPolicy: 'REGISTRY_ONLY' } }),
  );
  const catchAll = listeners
    .get('virtualOutbound')
    ?.filter_chains?.find((c) => c.name === 'virtualOutbound-catchall-tcp');
  assert.deepEqual(filterConfig(catchAll, TCP), { stat_prefix: 'BlackHoleCluster', cluster: 'BlackHoleCluster' });
  assert.equal(filterConfig(listeners.get('0.0.0.0_9080')?.default_filter_chain, TCP).cluster, 'BlackHoleCluster');
});

test('HTTP and TCP services on the same port: HTTP stays on 0.0.0.0_P, TCP gets its IP listener', () => {
  const ctx = makeContext([
    service('web', 'default', [port(8080, 'HTTP')], { clusterIP: '10.96.1.1' }),
    service('raw', 'default', [port(8080, 'TCP')], { clusterIP: '10.96.1.2' }),
  ]);
  const listeners = buildOutboundListeners(ctx);
  assert.deepEqual([...listeners.keys()], ['0.0.0.0_8080', '10.96.1.2_8080', 'virtualOutbound']);
  assert.equal(
    filterConfig(listeners.get('10.96.1.2_8080')?.filter_chains?.[0], TCP).cluster,
    'outbound|8080||raw.default.svc.cluster.local',
  );
});

test('headless TCP ports without endpoints get no listener (istiod: one per pod IP); UDP ports and ExternalName services get nothing', () => {
  const ctx = makeContext([
    service('db', 'data', [port(5432, 'TCP'), port(8080, 'HTTP')], { headless: true }),
    service('dns', 'kube-system', [port(53, 'UDP')], { clusterIP: '10.96.0.53' }),
    service('ext', 'default', [port(443, 'TLS')], { externalName: 'example.com' }),
  ]);
  const listeners = buildOutboundListeners(ctx);
  assert.deepEqual([...listeners.keys()], ['0.0.0.0_8080', 'virtualOutbound']);
  // The per-pod listeners replace the former `headless-tcp-port` info (test/compile/service-entry.test.ts has pods).
  assert.deepEqual(ctx.diags.all, []);
});

test('VirtualService tcp routes: weighted clusters, config metadata, DestinationRule idle timeout', () => {
  const vs = virtualService('mysql-split', 'default', {
    hosts: ['mysqldb'],
    tcp: [
      {
        match: [{ port: 3306 }],
        route: [
          { destination: { host: 'mysqldb', subset: 'v1' }, weight: 80 },
          { destination: { host: 'mysqldb.default.svc.cluster.local', subset: 'v2' }, weight: 20 },
          { destination: { host: 'mysqldb', subset: 'v3' }, weight: 0 },
        ],
      },
    ],
  });
  const subsets = ['v1', 'v2', 'v3'].map((name) => ({ name, labels: { version: name } }));
  const dr = destinationRule('mysql', 'default', {
    host: 'mysqldb',
    trafficPolicy: { connectionPool: { tcp: { idleTimeoutMs: 1500 } } },
    subsets,
  });
  const ctx = makeContext(bookinfo(), {
    virtualServices: [vs],
    destinationRules: new Map([['mysqldb.default.svc.cluster.local', dr]]),
  });
  const l = buildOutboundListeners(ctx).get('10.96.3.4_3306');
  assert.ok(l);
  assertListenerRoundTrip(l);
  assert.equal(l.filter_chains?.length, 1);
  const chain = l.filter_chains?.[0];
  const tcp = filterConfig(chain, TCP);
  assert.equal(tcp.stat_prefix, 'mysql-split.default');
  assert.deepEqual(tcp.weighted_clusters, {
    clusters: [
      { name: 'outbound|3306|v1|mysqldb.default.svc.cluster.local', weight: 80 },
      { name: 'outbound|3306|v2|mysqldb.default.svc.cluster.local', weight: 20 },
    ],
  });
  assert.deepEqual(tcp.idle_timeout, { seconds: 1, nanos: 500000000 });
  assert.equal(
    chain?.metadata?.filter_metadata?.istio?.fields?.config?.stringValue,
    '/apis/networking.istio.io/v1/namespaces/default/virtual-service/mysql-split',
  );
  assert.equal(ctx.diags.all.length, 0);
});

test('VirtualService tcp match on another port, or for source labels or a namespace the listeners are not built for, does not apply', () => {
  const vs = virtualService('mysql-other', 'default', {
    hosts: ['mysqldb'],
    tcp: [
      { match: [{ port: 3307 }], route: [{ destination: { host: 'ratings' } }] },
      { match: [{ sourceLabels: { app: 'x' } }], route: [{ destination: { host: 'ratings' } }] },
      { match: [{ sourceNamespace: 'prod' }], route: [{ destination: { host: 'ratings' } }] },
    ],
  });
  const ctx = makeContext(bookinfo(), { virtualServices: [vs] });
  const cluster = (c: typeof ctx) =>
    filterConfig(buildOutboundListeners(c).get('10.96.3.4_3306')?.filter_chains?.[0], TCP).cluster;
  assert.equal(cluster(ctx), 'outbound|3306||mysqldb.default.svc.cluster.local');
  assert.deepEqual(ctx.diags.all, []);
  // Built for a client the match names (istiod's matchTCP, per proxy): the route applies.
  const ratings = 'outbound|9080||ratings.default.svc.cluster.local';
  assert.equal(cluster({ ...ctx, routeSource: { labels: { app: 'x', v: '1' }, keys: ['src:app=x'] } }), ratings);
  assert.equal(cluster({ ...ctx, listenerNamespace: 'prod' }), ratings);
  assert.equal(cluster({ ...ctx, listenerNamespace: 'dev' }), 'outbound|3306||mysqldb.default.svc.cluster.local');
});

test('tcp/tls route destinations naming an unknown host, subset or port are dropped with an error; a route left empty is dropped', () => {
  const vs = virtualService('mysql-bad', 'default', {
    hosts: ['mysqldb', 'secure'],
    tcp: [
      { match: [{ destinationSubnets: ['10.0.0.0/8'] }], route: [{ destination: { host: 'nowhere' } }] },
      {
        route: [
          { destination: { host: 'mysqldb', subset: 'v9' }, weight: 50 },
          { destination: { host: 'mysqldb', port: { number: 15021 } }, weight: 30 },
          { destination: { host: 'mysqldb.default.svc.cluster.local' }, weight: 20 },
        ],
      },
    ],
    tls: [
      { match: [{ sniHosts: ['a.example.com'] }], route: [{ destination: { host: 'secure' } }] },
      {
        match: [{ sniHosts: ['b.example.com'] }],
        route: [{ destination: { host: 'secure', port: { number: 8443 } } }],
      },
    ],
  });
  const ctx = makeContext(
    [...bookinfo(), service('secure', 'default', [port(443, 'HTTPS'), port(8443, 'TLS')], { clusterIP: '10.96.5.5' })],
    { virtualServices: [vs] },
  );
  const listeners = buildOutboundListeners(ctx);
  for (const l of listeners.values()) assertListenerRoundTrip(l);
  const mysql = listeners.get('10.96.3.4_3306');
  assert.equal(mysql?.filter_chains?.length, 1, 'the route to an unknown host is dropped');
  assert.equal(
    filterConfig(mysql?.filter_chains?.[0], TCP).cluster,
    'outbound|3306||mysqldb.default.svc.cluster.local',
    'the one good destination is left',
  );
  // No port named on a two-port service: the listener's port, as istiod (GetDestinationCluster).
  const secure = listeners.get('10.96.5.5_443');
  assert.deepEqual(
    secure?.filter_chains?.map((c) => [c.filter_chain_match?.server_names, filterConfig(c, TCP).cluster]),
    [
      [['a.example.com'], 'outbound|443||secure.default.svc.cluster.local'],
      [['b.example.com'], 'outbound|8443||secure.default.svc.cluster.local'],
    ],
  );
  assert.deepEqual(
    ctx.diags.sorted().map((d) => [d.severity, d.code, d.field]),
    [
      ['error', 'unknown-host', 'spec.tcp[0].route[0].destination.host'],
      ['error', 'unknown-subset', 'spec.tcp[1].route[0].destination.subset'],
      ['error', 'unknown-port', 'spec.tcp[1].route[1].destination.port.number'],
    ],
  );
  buildOutboundListeners(ctx);
  assert.equal(ctx.diags.all.length, 3, 'reported once per compile');
});

test('VirtualService tls routes: SNI chains, TLS inspector, passthrough default', () => {
  const vs = virtualService('tls', 'default', {
    hosts: ['secure'],
    tls: [
      {
        match: [{ sniHosts: ['b.example.com', 'a.example.com'] }],
        route: [{ destination: { host: 'secure', port: { number: 8443 } } }],
      },
    ],
  });
  const ctx = makeContext(
    [service('secure', 'default', [port(443, 'HTTPS'), port(8443, 'TLS')], { clusterIP: '10.96.5.5' })],
    { virtualServices: [vs] },
  );
  const listeners = buildOutboundListeners(ctx);
  const l = listeners.get('10.96.5.5_443');
  assert.ok(l);
  assertListenerRoundTrip(l);
  assert.deepEqual(
    l.listener_filters?.map((f) => f.name),
    ['envoy.filters.listener.tls_inspector'],
  );
  assert.deepEqual(l.filter_chains?.[0]?.filter_chain_match?.server_names, ['a.example.com', 'b.example.com']);
  assert.equal(filterConfig(l.filter_chains?.[0], TCP).cluster, 'outbound|8443||secure.default.svc.cluster.local');
  assert.equal(l.default_filter_chain?.name, 'PassthroughFilterChain');
});

test('output does not depend on the order of the inputs', () => {
  const a = buildOutboundListeners(makeContext(bookinfo()));
  const b = buildOutboundListeners(makeContext([...bookinfo()].reverse()));
  assert.deepEqual([...a.keys()], [...b.keys()]);
  assert.deepEqual([...a.values()], [...b.values()]);
});

test('10k services: one listener per port and per TCP service IP, plus virtualOutbound', () => {
  const services = [];
  const count = 10_000;
  for (let i = 0; i < count; i++) {
    const ip = `10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
    services.push(
      service(`svc-${i}`, `ns-${i % 50}`, [port(8000 + (i % 20), 'HTTP'), port(9000 + (i % 7), 'TCP')], {
        clusterIP: ip,
      }),
    );
  }
  const listeners = buildOutboundListeners(makeContext(services));
  assert.equal(listeners.size, 1 + 20 + count); // speed: bench/, not a timed test
});
