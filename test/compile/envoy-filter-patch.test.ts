/**
 * The EnvoyFilter patch engine (src/compile/envoy-filter/patch.ts) against istiod's own test cases
 * (pilot/pkg/networking/core/envoyfilter/{listener,cluster,rc}_patch_test.go), written here as
 * facts: inputs and expected outputs as Envoy messages. istiod's Redis and ALTS typed configs
 * (not in meshsnap's descriptor set) are a TcpProxy and an upstream proxy-protocol socket here.
 * Inputs are deep-frozen (the compiler's are shared): a patch that edited one would throw. Every
 * result is encoded, and compared as Envoy's config dump renders it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import { deepFreeze } from '../../src/compile/intern.js';
import { buildInputSet } from '../../src/inputs/index.js';
import { clusterMatch } from '../../src/compile/envoy-filter/cluster-patch.js';
import {
  ListenerPatchMemo,
  patchClusters,
  patchListeners,
  patchRouteConfigurations,
  type ResolvedPatch,
} from '../../src/compile/envoy-filter/patch.js';
import {
  routeConfigurationMatch,
  routeMatch,
  routePatches,
  virtualHostMatch,
} from '../../src/compile/envoy-filter/route-patch.js';
import type { EnvoyFilterPatch } from '../../src/model/envoy-filter.js';
import { resourceToJson } from '../../src/xds/json.js';
import { oneCheckValidator, validateResource } from '../../src/xds/validate/index.js';
import {
  encodeMessage,
  packAny,
  type Any,
  type Cluster,
  type envoy,
  type Listener,
  type RouteConfiguration,
} from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';

type FilterChain = envoy.config.listener.v3.FilterChain.$Properties;
type NetworkFilter = envoy.config.listener.v3.Filter.$Properties;
type HttpFilter = envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter.$Properties;
type TransportSocket = envoy.config.core.v3.TransportSocket.$Properties;

const HCM = 'envoy.filters.network.http_connection_manager';
const FAULT = 'envoy.filters.http.fault';
const TCP_PROXY = 'envoy.filters.network.tcp_proxy';
/** istiod's test merges a Redis proxy's typed config; here the filter of that name carries a TcpProxy. */
const REDIS = 'envoy.filters.network.redis_proxy';
const PP_SOCKET = 'envoy.transport_sockets.upstream_proxy_protocol';

let next = 0;
/** A resolved patch (istiod's EnvoyFilterConfigPatchWrapper): context ANY unless given. */
function P(
  applyTo: ResolvedPatch['applyTo'],
  operation: ResolvedPatch['operation'],
  match: Partial<Pick<EnvoyFilterPatch, 'context' | 'listener' | 'routeConfiguration' | 'cluster'>> = {},
  value?: object,
): ResolvedPatch {
  return deepFreeze({
    index: next++,
    applyTo,
    operation,
    context: match.context ?? 'ANY',
    ...(match.listener ? { listener: match.listener } : {}),
    ...(match.routeConfiguration ? { routeConfiguration: match.routeConfiguration } : {}),
    ...(match.cluster ? { cluster: match.cluster } : {}),
    ...(value ? { value } : {}),
    source: 'not-default/test-envoyfilter',
  });
}

/** Encoded and rendered as a config dump shows it: proves the result encodes, compares Any payloads decoded. */
const view = (typeName: string, m: object) => resourceToJson(typeName, encodeMessage(typeName, m));
const views = (typeName: string, list: readonly object[]) => list.map((m) => view(typeName, m));

const sock = (port: number) => ({ socket_address: { port_value: port } });
const hcmAny = (filters: HttpFilter[], extra: object = {}): Any =>
  packAny(TypeName.HttpConnectionManager, { ...extra, http_filters: filters });
const hcm = (filters: HttpFilter[], extra: object = {}): NetworkFilter => ({
  name: HCM,
  typed_config: hcmAny(filters, extra),
});
const named = (...names: string[]) => names.map((name) => ({ name }));
const tlsSocket = (type: string, ctx: object): TransportSocket => ({
  name: 'envoy.transport_sockets.tls',
  typed_config: packAny(type, ctx),
});
const ppSocket = (): TransportSocket => ({
  name: PP_SOCKET,
  typed_config: packAny(TypeName.ProxyProtocolUpstreamTransport, { config: { version: 1 } }),
});

// ---------------------------------------------------------------- clusters (cluster_patch_test.go)

test('clusterMatch: istiod Test_clusterMatch', () => {
  const M = (cluster: NonNullable<ResolvedPatch['cluster']>) => P('CLUSTER', 'MERGE', { cluster });
  const full = { portNumber: 80, service: 'foo.bar', subset: 'v1' };
  assert.equal(clusterMatch({ name: 'scrappy' }, M({ name: 'scooby' }), undefined), false, 'name mismatch');
  assert.equal(clusterMatch({ name: 'outbound|80|v2|foo.bar' }, M(full), undefined), false, 'subset mismatch');
  assert.equal(clusterMatch({ name: 'outbound|80|v1|google.com' }, M(full), undefined), false, 'service mismatch');
  assert.equal(clusterMatch({ name: 'inbound|80||' }, M({ service: 'foo.bar' }), ['foo.bar']), true, 'inbound');
  assert.equal(clusterMatch({ name: 'inbound|80||' }, M({ service: 'foo.bar' }), undefined), false, 'no hosts');
  assert.equal(clusterMatch({ name: 'outbound|90|v1|foo.bar' }, M(full), undefined), false, 'port mismatch');
  assert.equal(clusterMatch({ name: 'outbound|80|v1|foo.bar' }, M(full), undefined), true, 'full match');
  assert.equal(clusterMatch({ name: 'outbound_.80_.v1_.foo.bar' }, M(full), undefined), true, 'DNS SRV form');
});

test('CLUSTER patches: istiod TestClusterPatching (ADD, REMOVE, MERGE, transport socket merges)', () => {
  next = 0;
  const upstreamTls = (params: object, withCert = true) =>
    packAny(TypeName.UpstreamTlsContext, {
      common_tls_context: {
        tls_params: params,
        ...(withCert
          ? {
              tls_certificate_certificate_provider_instance: {
                instance_name: 'instance',
                certificate_name: 'certificate',
              },
            }
          : {}),
      },
    });
  const tls = (any: Any): TransportSocket => ({ name: 'envoy.transport_sockets.tls', typed_config: any });
  // TlsParameters: TLSv1_1 = 2, TLSv1_3 = 4; DnsLookupFamily V4_ONLY = 1, V6_ONLY = 2; LbPolicy RING_HASH = 1, MAGLEV = 5.
  const patches = [
    P('CLUSTER', 'ADD', { context: 'SIDECAR_OUTBOUND' }, { name: 'new-cluster1' }),
    P('CLUSTER', 'ADD', { context: 'SIDECAR_OUTBOUND' }, { name: 'new-cluster2' }),
    P('CLUSTER', 'REMOVE', { context: 'GATEWAY', cluster: { service: 'gateway.com' } }),
    P('CLUSTER', 'REMOVE', { context: 'SIDECAR_INBOUND', cluster: { portNumber: 9999 } }),
    P('CLUSTER', 'MERGE', { context: 'SIDECAR_INBOUND', cluster: { service: 'service.servicens' } }, { type: 3 }),
    P('CLUSTER', 'MERGE', {}, { dns_lookup_family: 2 }),
    P('CLUSTER', 'MERGE', {}, { lb_policy: 1 }),
    P(
      'CLUSTER',
      'MERGE',
      { context: 'SIDECAR_OUTBOUND', cluster: { portNumber: 443 } },
      {
        transport_socket: tls(
          packAny(TypeName.UpstreamTlsContext, {
            common_tls_context: { tls_params: { tls_minimum_protocol_version: 4 } },
          }),
        ),
      },
    ),
    P(
      'CLUSTER',
      'MERGE',
      { context: 'SIDECAR_OUTBOUND', cluster: { portNumber: 7777 } },
      { transport_socket: ppSocket() },
    ),
  ];
  const tsm = (params: object) => [{ name: 'tlsMode-istio', transport_socket: tls(upstreamTls(params)) }];
  const outboundIn: Cluster[] = deepFreeze([
    {
      name: 'outbound|443||cluster1',
      dns_lookup_family: 1,
      lb_policy: 0,
      transport_socket_matches: tsm({ ecdh_curves: ['X25519'], tls_minimum_protocol_version: 2 }),
    },
    {
      name: 'outbound|443||cluster2',
      http2_protocol_options: { allow_connect: true, allow_metadata: true },
      lb_policy: 5,
    },
    {
      name: 'outbound|443||cluster3',
      dns_lookup_family: 1,
      transport_socket: tls(upstreamTls({ ecdh_curves: ['X25519'], tls_maximum_protocol_version: 4 })),
    },
    { name: 'outbound|7777||custom-tls-addition' },
    {
      name: 'outbound|7777||custom-tls-replacement',
      dns_lookup_family: 1,
      transport_socket: tls(upstreamTls({ ecdh_curves: ['X25519'], tls_minimum_protocol_version: 2 })),
    },
    {
      name: 'outbound|7777||custom-tls-replacement-tsm',
      dns_lookup_family: 1,
      transport_socket_matches: tsm({ ecdh_curves: ['X25519'], tls_minimum_protocol_version: 2 }),
    },
  ]);
  const v6Ring = { dns_lookup_family: 2, lb_policy: 1 };
  const outboundOut: Cluster[] = [
    {
      name: 'outbound|443||cluster1',
      ...v6Ring,
      transport_socket_matches: tsm({ ecdh_curves: ['X25519'], tls_minimum_protocol_version: 4 }),
    },
    {
      name: 'outbound|443||cluster2',
      http2_protocol_options: { allow_connect: true, allow_metadata: true },
      ...v6Ring,
      transport_socket: tls(upstreamTls({ tls_minimum_protocol_version: 4 }, false)),
    },
    {
      name: 'outbound|443||cluster3',
      ...v6Ring,
      transport_socket: tls(
        upstreamTls({ ecdh_curves: ['X25519'], tls_minimum_protocol_version: 4, tls_maximum_protocol_version: 4 }),
      ),
    },
    { name: 'outbound|7777||custom-tls-addition', ...v6Ring, transport_socket: ppSocket() },
    { name: 'outbound|7777||custom-tls-replacement', ...v6Ring, transport_socket: ppSocket() },
    {
      // Transport socket matches, none of the patch's socket name: the socket is not merged.
      name: 'outbound|7777||custom-tls-replacement-tsm',
      ...v6Ring,
      transport_socket_matches: tsm({ ecdh_curves: ['X25519'], tls_minimum_protocol_version: 2 }),
    },
    { name: 'new-cluster1' },
    { name: 'new-cluster2' },
  ];
  assert.deepEqual(
    views(TypeName.Cluster, patchClusters('SIDECAR_OUTBOUND', outboundIn, patches)),
    views(TypeName.Cluster, outboundOut),
  );

  const inboundIn: Cluster[] = deepFreeze([
    { name: 'cluster1', dns_lookup_family: 1, lb_policy: 0 },
    { name: 'inbound|9999||mgmtCluster' },
  ]);
  assert.deepEqual(views(TypeName.Cluster, patchClusters('SIDECAR_INBOUND', inboundIn, patches)), [
    view(TypeName.Cluster, { name: 'cluster1', ...v6Ring }),
  ]);

  const serviceIn: Cluster[] = deepFreeze([{ name: 'inbound|7443||', dns_lookup_family: 1, lb_policy: 0 }]);
  const hosts = (name: string) => (name === 'inbound|7443||' ? ['service.servicens'] : undefined);
  assert.deepEqual(
    views(TypeName.Cluster, patchClusters('SIDECAR_INBOUND', serviceIn, patches, { inboundHosts: hosts })),
    [view(TypeName.Cluster, { name: 'inbound|7443||', type: 3, ...v6Ring })],
  );

  const gatewayIn: Cluster[] = deepFreeze([
    { name: 'cluster1', dns_lookup_family: 1, lb_policy: 0 },
    { name: 'cluster2', http2_protocol_options: { allow_connect: true, allow_metadata: true }, lb_policy: 5 },
    { name: 'outbound|443||gateway.com' },
  ]);
  assert.deepEqual(views(TypeName.Cluster, patchClusters('GATEWAY', gatewayIn, patches)), [
    view(TypeName.Cluster, { name: 'cluster1', ...v6Ring }),
    view(TypeName.Cluster, {
      name: 'cluster2',
      http2_protocol_options: { allow_connect: true, allow_metadata: true },
      ...v6Ring,
    }),
  ]);
});

test('CLUSTER: untouched clusters are the same objects; ANY-context ADDs are for outbound and gateways only', () => {
  const a: Cluster = deepFreeze({ name: 'outbound|80||a.default.svc.cluster.local' });
  const b: Cluster = deepFreeze({ name: 'outbound|90||b.default.svc.cluster.local' });
  const patches = [
    P('CLUSTER', 'MERGE', { cluster: { portNumber: 90 } }, { lb_policy: 1 }),
    P('CLUSTER', 'ADD', {}, { name: 'added' }),
  ];
  const out = patchClusters('SIDECAR_OUTBOUND', [a, b], patches);
  assert.equal(out[0], a);
  assert.notEqual(out[1], b);
  assert.deepEqual(
    out.map((c) => c.name),
    [a.name, b.name, 'added'],
  );
  assert.deepEqual(
    patchClusters('SIDECAR_INBOUND', [], patches).map((c) => c.name),
    [],
  );
  assert.deepEqual(
    patchClusters('GATEWAY', [], patches).map((c) => c.name),
    ['added'],
  );
  // No patch for the context: the list as given.
  const none = patchClusters('GATEWAY', [a], [P('CLUSTER', 'MERGE', { context: 'SIDECAR_INBOUND' }, { lb_policy: 1 })]);
  assert.equal(none[0], a);
});

test('CLUSTER: a transport socket MERGE of another type panics in istiod: the cluster stays as the earlier patches left it', () => {
  const c: Cluster = deepFreeze({
    name: 'outbound|443||x',
    transport_socket: tlsSocket(TypeName.UpstreamTlsContext, { sni: 'x' }),
  });
  const panics: string[] = [];
  const out = patchClusters(
    'SIDECAR_OUTBOUND',
    [c],
    [
      P('CLUSTER', 'MERGE', {}, { lb_policy: 1 }),
      P(
        'CLUSTER',
        'MERGE',
        {},
        { transport_socket: tlsSocket(TypeName.DownstreamTlsContext, { require_client_certificate: {} }) },
      ),
      P('CLUSTER', 'REMOVE', {}),
    ],
    { onPanic: (p, message) => panics.push(`${p.index}: ${message}`) },
  );
  assert.deepEqual(views(TypeName.Cluster, out), [view(TypeName.Cluster, { ...c, lb_policy: 1 })]);
  assert.equal(panics.length, 1);
  assert.match(panics[0] ?? '', /descriptor mismatch/);
});

// ---------------------------------------------------------------- routes (rc_patch_test.go)

const vhMatch = (vhost: NonNullable<NonNullable<ResolvedPatch['routeConfiguration']>['vhost']>) =>
  P('VIRTUAL_HOST', 'MERGE', { routeConfiguration: { vhost } });

test('virtualHostMatch: istiod Test_virtualHostMatch', () => {
  const vh = { name: 'scoobydoo', domains: ['*.scooby', '*.com'] };
  assert.equal(virtualHostMatch(undefined, vhMatch({})), false, 'vh is nil');
  assert.equal(virtualHostMatch({ name: 'scooby' }, vhMatch({ name: 'scooby' })), true, 'full match');
  assert.equal(virtualHostMatch({ name: 'scoobydoo' }, vhMatch({ name: 'scooby' })), false, 'mismatch');
  assert.equal(virtualHostMatch(vh, vhMatch({ domainName: '*.scooby' })), true, 'domain name match');
  assert.equal(virtualHostMatch(vh, vhMatch({ domainName: '*.scooby', name: 'scoobydoo' })), true, 'both match');
  assert.equal(virtualHostMatch(vh, vhMatch({ domainName: '*.in' })), false, 'domain name mismatch');
  assert.equal(virtualHostMatch(vh, vhMatch({ domainName: '*.scooby', name: 'scooby' })), false, 'name mismatch');
  assert.equal(virtualHostMatch(vh, vhMatch({ domainName: '*.in', name: 'scoobydoo' })), false, 'domain mismatch');
});

test('routeConfigurationMatch: istiod Test_routeConfigurationMatch (sidecar names, gateway RDS names, port map)', () => {
  const m = (
    ctx: 'SIDECAR_OUTBOUND' | 'GATEWAY',
    routeConfiguration: ResolvedPatch['routeConfiguration'],
    name: string,
    portMap?: ReadonlyMap<number, readonly number[]>,
  ) => {
    const rp = P('ROUTE_CONFIGURATION', 'MERGE', routeConfiguration ? { routeConfiguration } : {}, {});
    const Ps = routePatches(ctx, [rp], portMap);
    assert.ok(Ps);
    return routeConfigurationMatch(Ps, { name }, rp);
  };
  assert.equal(m('SIDECAR_OUTBOUND', undefined, 'x'), true, 'nil route match');
  assert.equal(m('SIDECAR_OUTBOUND', { name: 'scooby.80' }, 'scooby.90'), false, 'rc name mismatch');
  assert.equal(m('SIDECAR_OUTBOUND', { portNumber: 80 }, '80'), true, 'sidecar port match');
  assert.equal(m('SIDECAR_OUTBOUND', { portNumber: 80 }, '90'), false, 'sidecar port mismatch');
  assert.equal(m('SIDECAR_OUTBOUND', { portNumber: 9080 }, 'inbound|9080||'), true, 'inbound route config name');
  assert.equal(m('SIDECAR_OUTBOUND', { portNumber: 9080 }, 'reviews:9080'), false, 'host:port names hold no port');
  const gw = { portNumber: 443, portName: 'app1', gateway: 'ns1/gw1' };
  assert.equal(m('GATEWAY', gw, 'https.443.app1.gw1.ns1'), true, 'gateway fields match');
  assert.equal(m('GATEWAY', gw, 'http.80'), false, 'gateway fields mismatch');
  const pm = new Map([[8080, [80, 81]]]);
  assert.equal(m('GATEWAY', { portNumber: 80 }, 'http.8080', pm), true, 'http target port match');
  assert.equal(
    m('GATEWAY', { portNumber: 8080 }, 'http.8080', pm),
    false,
    'a mapped port matches its server ports only',
  );
  assert.equal(m('GATEWAY', { portNumber: 9090 }, 'http.9090', pm), true, 'http target port no match');
  assert.equal(m('GATEWAY', { portNumber: 443 }, 'http.8443', new Map([[8443, [443]]])), true, 'https target port');
});

test('routeMatch: istiod Test_routeMatch', () => {
  const rm = (route: NonNullable<NonNullable<NonNullable<ResolvedPatch['routeConfiguration']>['vhost']>['route']>) =>
    P('HTTP_ROUTE', 'MERGE', { routeConfiguration: { vhost: { route } } });
  assert.equal(routeMatch(undefined, rm({})), false, 'route is nil');
  assert.equal(routeMatch({ name: 'scooby' }, rm({ name: 'scooby' })), true, 'full match by name');
  assert.equal(routeMatch({ redirect: {} }, rm({ action: 'REDIRECT' })), true, 'full match by action');
  assert.equal(routeMatch({ redirect: {} }, rm({ action: 'ROUTE' })), false, 'mismatch by action');
  assert.equal(routeMatch({ direct_response: { status: 200 } }, rm({ action: 'DIRECT_RESPONSE' })), true);
  assert.equal(routeMatch({ name: 'x' }, rm({ action: 'ROUTE' })), true, 'a route without those actions matches');
});

test('ROUTE_CONFIGURATION, VIRTUAL_HOST, HTTP_ROUTE: istiod TestApplyRouteConfigurationPatches', () => {
  const vhost9090 = (extra: object) => ({ portNumber: 9090, vhost: { name: 'test.com', ...extra } });
  const patches = [
    P(
      'ROUTE_CONFIGURATION',
      'MERGE',
      { context: 'SIDECAR_OUTBOUND', routeConfiguration: { portNumber: 80 } },
      { request_headers_to_remove: ['h3', 'h4'] },
    ),
    P(
      'HTTP_ROUTE',
      'MERGE',
      { context: 'SIDECAR_OUTBOUND', routeConfiguration: { portNumber: 80, vhost: { route: { action: 'ROUTE' } } } },
      { route: { prefix_rewrite: '/foo' } },
    ),
    P('HTTP_ROUTE', 'REMOVE', {
      context: 'SIDECAR_OUTBOUND',
      routeConfiguration: { portNumber: 80, vhost: { route: { name: 'bar' } } },
    }),
    P('VIRTUAL_HOST', 'REMOVE', { context: 'SIDECAR_OUTBOUND', routeConfiguration: { vhost: { name: 'allow_any' } } }),
    P('VIRTUAL_HOST', 'ADD', {}, { name: 'new-vhost' }),
    P('VIRTUAL_HOST', 'REMOVE', { context: 'GATEWAY', routeConfiguration: { vhost: { name: 'vhost1' } } }),
    P('VIRTUAL_HOST', 'REMOVE', { context: 'SIDECAR_INBOUND', routeConfiguration: { vhost: { name: 'vhost2' } } }),
    P('VIRTUAL_HOST', 'MERGE', {}, { domains: ['domain:80'] }),
    P('HTTP_ROUTE', 'ADD', { routeConfiguration: vhost9090({}) }, { name: 'route4.0' }),
    P('HTTP_ROUTE', 'INSERT_FIRST', { routeConfiguration: vhost9090({}) }, { name: 'route0.0' }),
    P(
      'HTTP_ROUTE',
      'INSERT_AFTER',
      { routeConfiguration: vhost9090({ route: { name: 'route2.0' } }) },
      { name: 'route2.5' },
    ),
    P(
      'HTTP_ROUTE',
      'INSERT_BEFORE',
      { routeConfiguration: vhost9090({ route: { name: 'route2.0' } }) },
      { name: 'route1.5' },
    ),
  ];
  const run = (ctx: 'SIDECAR_OUTBOUND' | 'SIDECAR_INBOUND' | 'GATEWAY', rc: RouteConfiguration) =>
    patchRouteConfigurations(ctx, [deepFreeze(rc)], patches);
  const RC = TypeName.RouteConfiguration;

  const outbound = run('SIDECAR_OUTBOUND', {
    name: '80',
    virtual_hosts: [
      {
        name: 'foo.com',
        domains: ['domain'],
        routes: [
          { name: 'foo', route: { prefix_rewrite: '/' } },
          { name: 'bar', redirect: { response_code: 1 } },
        ],
      },
    ],
    request_headers_to_remove: ['h1', 'h2'],
  });
  assert.deepEqual(views(RC, outbound), [
    view(RC, {
      name: '80',
      virtual_hosts: [
        {
          name: 'foo.com',
          domains: ['domain', 'domain:80'],
          routes: [{ name: 'foo', route: { prefix_rewrite: '/foo' } }],
        },
        { name: 'new-vhost' },
      ],
      request_headers_to_remove: ['h1', 'h2', 'h3', 'h4'],
    }),
  ]);

  const inbound = run('SIDECAR_INBOUND', { name: 'inbound|http|80', virtual_hosts: [{ name: 'vhost2' }] });
  assert.deepEqual(views(RC, inbound), [view(RC, { name: 'inbound|http|80', virtual_hosts: [{ name: 'new-vhost' }] })]);

  const gateway = run('GATEWAY', {
    name: '80',
    virtual_hosts: [
      { name: 'vhost1', domains: ['domain'] },
      { name: 'gateway', domains: ['gateway'] },
    ],
  });
  assert.deepEqual(views(RC, gateway), [
    view(RC, {
      name: '80',
      virtual_hosts: [{ name: 'gateway', domains: ['gateway', 'domain:80'] }, { name: 'new-vhost' }],
    }),
  ]);

  const arrayInsert = run('SIDECAR_OUTBOUND', {
    name: '9090',
    virtual_hosts: [
      {
        name: 'test.com',
        domains: ['domain'],
        routes: [
          { name: 'route1.0', route: { prefix_rewrite: '/' } },
          { name: 'route2.0', redirect: { response_code: 1 } },
          { name: 'route3.0', redirect: { response_code: 3 } },
        ],
      },
    ],
  });
  assert.deepEqual(views(RC, arrayInsert), [
    view(RC, {
      name: '9090',
      virtual_hosts: [
        {
          name: 'test.com',
          domains: ['domain', 'domain:80'],
          routes: [
            { name: 'route0.0' },
            { name: 'route1.0', route: { prefix_rewrite: '/' } },
            { name: 'route1.5' },
            { name: 'route2.0', redirect: { response_code: 1 } },
            { name: 'route2.5' },
            { name: 'route3.0', redirect: { response_code: 3 } },
            { name: 'route4.0' },
          ],
        },
        { name: 'new-vhost' },
      ],
    }),
  ]);
});

test('VIRTUAL_HOST REPLACE, MERGE and MERGE_AND_REPLACE_LIST: istiod TestReplaceVhost, TestMergeAndReplaceListVhost', () => {
  const RC = TypeName.RouteConfiguration;
  const replaced = {
    name: 'replaced',
    domains: ['replaced.com'],
    rate_limits: [{ actions: [{ request_headers: { header_name: ':path', descriptor_key: 'PATH' } }] }],
  };
  const replace = P(
    'VIRTUAL_HOST',
    'REPLACE',
    { context: 'SIDECAR_INBOUND', routeConfiguration: { vhost: { name: 'to-be-replaced' } } },
    replaced,
  );
  const rc: RouteConfiguration = deepFreeze({
    name: 'inbound|http|80',
    virtual_hosts: [
      { name: 'to-be-replaced', domains: ['xxx'], routes: [{ name: 'xxx', route: { prefix_rewrite: '/xxx' } }] },
    ],
  });
  assert.deepEqual(views(RC, patchRouteConfigurations('SIDECAR_INBOUND', [rc], [replace])), [
    view(RC, { name: 'inbound|http|80', virtual_hosts: [replaced] }),
  ]);

  const vhost1: RouteConfiguration = deepFreeze({
    name: 'inbound|http|80',
    virtual_hosts: [{ name: 'vhost1', domains: ['original.com'] }],
  });
  const domains = (op: 'MERGE' | 'MERGE_AND_REPLACE_LIST') =>
    patchRouteConfigurations(
      'SIDECAR_INBOUND',
      [vhost1],
      [
        P(
          'VIRTUAL_HOST',
          op,
          { context: 'SIDECAR_INBOUND', routeConfiguration: { vhost: { name: 'vhost1' } } },
          { domains: ['patched.com'] },
        ),
      ],
    )[0]?.virtual_hosts?.[0]?.domains;
  assert.deepEqual(domains('MERGE'), ['original.com', 'patched.com']);
  assert.deepEqual(domains('MERGE_AND_REPLACE_LIST'), ['patched.com']);
});

test('HTTP_ROUTE MERGE: routes shared by two virtual hosts are not changed for the other (istiod TestPatchHTTPRoute)', () => {
  const shared = deepFreeze([{ name: 'shared', route: { prefix_rewrite: '/shared' } }]);
  const rc: RouteConfiguration = deepFreeze({
    name: 'http.8080',
    virtual_hosts: [
      { name: 'shared', domains: ['*'], routes: shared },
      { name: 'foo', domains: ['bar'], routes: shared },
      { name: 'untouched', domains: ['u'], routes: [{ name: 'u', redirect: {} }] },
    ],
  });
  const [out] = patchRouteConfigurations(
    'GATEWAY',
    [rc],
    [
      P(
        'HTTP_ROUTE',
        'MERGE',
        { routeConfiguration: { vhost: { name: 'shared', route: { action: 'ROUTE' } } } },
        { route: { prefix_rewrite: '/foo' } },
      ),
    ],
    { gatewayPortMap: new Map([[8080, []]]) },
  );
  assert.ok(out);
  assert.deepEqual(
    view(TypeName.RouteConfiguration, out),
    view(TypeName.RouteConfiguration, {
      ...rc,
      virtual_hosts: [
        { name: 'shared', domains: ['*'], routes: [{ name: 'shared', route: { prefix_rewrite: '/foo' } }] },
        { name: 'foo', domains: ['bar'], routes: shared },
        { name: 'untouched', domains: ['u'], routes: [{ name: 'u', redirect: {} }] },
      ],
    }),
  );
  assert.equal(out.virtual_hosts?.[1], rc.virtual_hosts?.[1]);
  assert.equal(out.virtual_hosts?.[2], rc.virtual_hosts?.[2]);
  // A route config no patch reaches is the same object.
  const other: RouteConfiguration = deepFreeze({ name: 'http.9090', virtual_hosts: [{ name: 'x' }] });
  const [same] = patchRouteConfigurations(
    'GATEWAY',
    [other],
    [P('VIRTUAL_HOST', 'MERGE', { routeConfiguration: { portNumber: 8080 } }, { domains: ['y'] })],
  );
  assert.equal(same, other);
});

test('VIRTUAL_HOST REMOVE removes by name: a virtual host added under a removed name goes too (istiod)', () => {
  const rc: RouteConfiguration = deepFreeze({ name: '80', virtual_hosts: [{ name: 'a' }, { name: 'b' }] });
  const [out] = patchRouteConfigurations(
    'SIDECAR_OUTBOUND',
    [rc],
    [
      P('VIRTUAL_HOST', 'REMOVE', { routeConfiguration: { vhost: { name: 'a' } } }),
      P('VIRTUAL_HOST', 'ADD', {}, { name: 'a', domains: ['again'] }),
    ],
  );
  assert.deepEqual(
    out?.virtual_hosts?.map((v) => v.name),
    ['b'],
  );
});

// ---------------------------------------------------------------- listeners (listener_patch_test.go)

/** istiod's TestApplyListenerPatches patches, the proxy matches resolved for its 1.2.2 sidecar (one INSERT_FIRST is for 1.5+). */
function listenerTestPatches(): ResolvedPatch[] {
  const SO = 'SIDECAR_OUTBOUND';
  const SI = 'SIDECAR_INBOUND';
  const GW = 'GATEWAY';
  const sub = (port: number | undefined, name: string, extra: object = {}) => ({
    ...(port ? { portNumber: port } : {}),
    filterChain: { ...extra, filter: { name: HCM, subFilter: { name } } },
  });
  const downstreamTls = (ctx: object) => ({ transport_socket: tlsSocket(TypeName.DownstreamTlsContext, ctx) });
  const tcpProxyFilter = (name: string) => ({
    name,
    typed_config: packAny(TypeName.TcpProxy, { stat_prefix: 'redis_stats', cluster: 'custom-redis-cluster' }),
  });
  return [
    P('LISTENER', 'ADD', { context: SO }, { name: 'new-outbound-listener1' }),
    P(
      'NETWORK_FILTER',
      'INSERT_BEFORE',
      { context: SO, listener: { portNumber: 12345, filterChain: { filter: { name: 'filter1' } } } },
      { name: 'filter0' },
    ),
    P('NETWORK_FILTER', 'REMOVE', {
      context: SO,
      listener: { portNumber: 12345, filterChain: { filter: { name: 'filter2' } } },
    }),
    P('LISTENER', 'REMOVE', { context: SI, listener: { portNumber: 12345 } }),
    P('LISTENER', 'MERGE', { context: SI, listener: { portNumber: 80 } }, {}),
    P('FILTER_CHAIN', 'REMOVE', {
      context: SI,
      listener: { portNumber: 80, filterChain: { transportProtocol: 'tls' } },
    }),
    P('LISTENER', 'MERGE', { context: GW, listener: { portNumber: 80 } }, { listener_filters: [{ name: 'foo' }] }),
    P(
      'FILTER_CHAIN',
      'MERGE',
      { context: GW, listener: { portNumber: 80, filterChain: { sni: '*.foo.com' } } },
      { filter_chain_match: { server_names: ['foo.com'] } },
    ),
    P(
      'NETWORK_FILTER',
      'MERGE',
      { listener: { filterChain: { filter: { name: REDIS } } } },
      {
        name: REDIS,
        typed_config: packAny(TypeName.TcpProxy, { idle_timeout: { nanos: 200_000_000 } }),
      },
    ),
    P(
      'HTTP_FILTER',
      'INSERT_AFTER',
      { context: GW, listener: sub(80, 'http-filter2', { sni: '*.foo.com' }) },
      { name: 'http-filter3' },
    ),
    P('HTTP_FILTER', 'REMOVE', { context: GW, listener: sub(80, 'http-filter-to-be-removed-then-add') }),
    P(
      'HTTP_FILTER',
      'ADD',
      { context: GW, listener: sub(80, 'http-filter-to-be-removed-then-add') },
      { name: 'http-filter-to-be-removed-then-add' },
    ),
    P('HTTP_FILTER', 'INSERT_BEFORE', { context: SI, listener: sub(80, 'http-filter2') }, { name: 'http-filter3' }),
    P(
      'HTTP_FILTER',
      'INSERT_BEFORE',
      { context: SI, listener: sub(undefined, 'http-filter3') },
      { name: 'http-filter-to-be-removed2' },
    ),
    P('HTTP_FILTER', 'REMOVE', { context: SI, listener: sub(80, 'http-filter-to-be-removed2') }),
    P('HTTP_FILTER', 'INSERT_AFTER', { context: SI, listener: sub(80, 'http-filter2') }, { name: 'http-filter4' }),
    P('HTTP_FILTER', 'REMOVE', { context: SI, listener: sub(80, 'http-filter-to-be-removed') }),
    P('HTTP_FILTER', 'REMOVE', { context: SI, listener: sub(80, 'http-filter-to-be-removed-then-add') }),
    P(
      'HTTP_FILTER',
      'ADD',
      { context: SI, listener: sub(80, 'http-filter-to-be-removed-then-add') },
      { name: 'http-filter-to-be-removed-then-add' },
    ),
    P(
      'HTTP_FILTER',
      'MERGE',
      { context: SI, listener: sub(80, FAULT) },
      {
        name: FAULT,
        typed_config: packAny(TypeName.Fault, { downstream_nodes: ['foo'] }),
      },
    ),
    P('HTTP_FILTER', 'INSERT_FIRST', { context: SI, listener: sub(80, 'http-filter2') }, { name: 'http-filter0' }),
    P(
      'HTTP_FILTER',
      'MERGE',
      { context: SI, listener: sub(80, FAULT) },
      {
        typed_config: packAny(TypeName.Fault, { upstream_cluster: 'scooby' }),
      },
    ),
    // istiod's test writes this type URL with the prefix twice: the message name is what follows the last '/'.
    P(
      'NETWORK_FILTER',
      'MERGE',
      { context: SI, listener: { portNumber: 80, filterChain: { filter: { name: HCM } } } },
      {
        name: HCM,
        typed_config: {
          type_url: `type.googleapis.com/type.googleapis.com/${TypeName.HttpConnectionManager}`,
          value: encodeMessage(TypeName.HttpConnectionManager, { xff_num_trusted_hops: 4 }),
        },
      },
    ),
    P(
      'NETWORK_FILTER',
      'MERGE',
      { context: SI, listener: { portNumber: 80, filterChain: { filter: { name: HCM } } } },
      {
        name: HCM,
        typed_config: packAny(TypeName.HttpConnectionManager, {
          merge_slashes: true,
          always_set_request_id_in_response: true,
        }),
      },
    ),
    P('HTTP_FILTER', 'INSERT_AFTER', { context: SI, listener: sub(80, 'http-filter2') }, { name: 'http-filter-5' }),
    P(
      'NETWORK_FILTER',
      'REPLACE',
      { listener: { portNumber: 6379, filterChain: { filter: { name: 'filter1' } } } },
      tcpProxyFilter('envoy.redis_proxy'),
    ),
    P(
      'NETWORK_FILTER',
      'REPLACE',
      { listener: { portNumber: 6381, filterChain: { filter: { name: 'default-network-filter' } } } },
      { name: 'default-network-filter-replaced' },
    ),
    P('NETWORK_FILTER', 'REMOVE', {
      listener: { portNumber: 6381, filterChain: { filter: { name: 'default-network-filter-removed' } } },
    }),
    P(
      'NETWORK_FILTER',
      'REPLACE',
      {
        listener: {
          portNumber: 6380,
          filterChain: { filter: { name: 'network-filter-should-not-be-replaced-not-match' } },
        },
      },
      { name: 'network-filter-replaced-should-not-be-applied' },
    ),
    P(
      'HTTP_FILTER',
      'REPLACE',
      { listener: { name: 'listener-http-filter-to-be-replaced', ...sub(undefined, 'http-filter-to-be-replaced') } },
      { name: 'http-filter-replaced' },
    ),
    P(
      'HTTP_FILTER',
      'REPLACE',
      {
        listener: {
          name: 'listener-http-filter-to-be-replaced-not-found',
          ...sub(undefined, 'http-filter-should-not-be-replaced-not-match'),
        },
      },
      { name: 'http-filter-replaced-should-not-be-applied' },
    ),
    P(
      'NETWORK_FILTER',
      'REPLACE',
      {
        listener: {
          name: 'virtualInbound',
          filterChain: { destinationPort: 6380, filter: { name: 'network-filter-to-be-replaced' } },
        },
      },
      tcpProxyFilter('envoy.redis_proxy'),
    ),
    P(
      'FILTER_CHAIN',
      'MERGE',
      { context: SO, listener: { portNumber: 12345, filterChain: { transportProtocol: 'tls' } } },
      downstreamTls({
        common_tls_context: { tls_params: { tls_maximum_protocol_version: 4, tls_minimum_protocol_version: 3 } },
      }),
    ),
    P('FILTER_CHAIN', 'REMOVE', {
      context: SO,
      listener: { portNumber: 12345, filterChain: { applicationProtocols: 'http/1.1' } },
    }),
    P('LISTENER_FILTER', 'REMOVE', { context: SO, listener: { portNumber: 12345 } }),
    P(
      'LISTENER_FILTER',
      'ADD',
      { context: SO, listener: { portNumber: 12345 } },
      { name: 'http-filter-to-be-removed-then-add' },
    ),
    P('FILTER_CHAIN', 'MERGE', { context: SO, listener: { portNumber: 7777 } }, { transport_socket: ppSocket() }),
    P('FILTER_CHAIN', 'MERGE', { context: SO, listener: { portNumber: 7778 } }, { transport_socket: ppSocket() }),
    P('NETWORK_FILTER', 'REMOVE', {
      listener: {
        name: 'virtualInbound',
        filterChain: { name: 'filter-chain-name-match', filter: { name: 'custom-network-filter-2' } },
      },
    }),
    P(
      'NETWORK_FILTER',
      'INSERT_BEFORE',
      {
        listener: {
          name: 'virtualInbound',
          filterChain: { name: 'filter-chain-name-match', filter: { name: 'custom-network-filter-1' } },
        },
      },
      { name: 'network-filter-to-be-removed' },
    ),
    P('NETWORK_FILTER', 'REMOVE', {
      listener: {
        name: 'virtualInbound',
        filterChain: { name: 'filter-chain-name-match', filter: { name: 'network-filter-to-be-removed' } },
      },
    }),
    P(
      'FILTER_CHAIN',
      'MERGE',
      { context: SI, listener: { portNumber: 80 } },
      downstreamTls({ common_tls_context: { alpn_protocols: ['h2-80', 'http/1.1-80'] } }),
    ),
    P(
      'FILTER_CHAIN',
      'MERGE',
      { context: SI, listener: { portNumber: 6380 } },
      downstreamTls({ common_tls_context: { alpn_protocols: ['h2-6380', 'http/1.1-6380'] } }),
    ),
    P(
      'LISTENER_FILTER',
      'ADD',
      { context: SO, listener: { portNumber: 12345 } },
      { name: 'envoy.filters.listener.proxy_protocol' },
    ),
    P(
      'LISTENER_FILTER',
      'INSERT_BEFORE',
      { context: SO, listener: { portNumber: 12345, listenerFilter: 'envoy.filters.listener.proxy_protocol' } },
      { name: 'before proxy_protocol' },
    ),
    P(
      'LISTENER_FILTER',
      'INSERT_AFTER',
      { context: SO, listener: { portNumber: 12345, listenerFilter: 'envoy.filters.listener.proxy_protocol' } },
      { name: 'after proxy_protocol' },
    ),
    P('LISTENER_FILTER', 'REMOVE', {
      context: SO,
      listener: { portNumber: 6381, listenerFilter: 'filter-to-be-removed' },
    }),
    P(
      'LISTENER_FILTER',
      'REPLACE',
      { context: SO, listener: { portNumber: 6381, listenerFilter: 'filter-before-replace' } },
      { name: 'filter-after-replace' },
    ),
  ];
}

const LIS = TypeName.Listener;

test('LISTENER, FILTER_CHAIN, NETWORK_FILTER, HTTP_FILTER, LISTENER_FILTER: istiod "gateway lds"', () => {
  const patches = listenerTestPatches();
  const another: Listener = {
    name: 'another-listener',
    address: sock(443),
    filter_chains: [
      { filter_chain_match: { server_names: ['nomatch.com', '*.foo.com'] }, filters: [{ name: 'network-filter' }] },
    ],
  };
  const input: Listener[] = deepFreeze([
    {
      name: '80',
      address: sock(80),
      filter_chains: [
        {
          filter_chain_match: { server_names: ['match.com', '*.foo.com'] },
          filters: [hcm(named('http-filter1', 'http-filter2'))],
        },
      ],
    },
    another,
  ]);
  const out = patchListeners('GATEWAY', input, patches);
  assert.deepEqual(views(LIS, out), [
    view(LIS, {
      name: '80',
      address: sock(80),
      listener_filters: [{ name: 'foo' }],
      filter_chains: [
        {
          filter_chain_match: { server_names: ['match.com', '*.foo.com', 'foo.com'] },
          filters: [hcm(named('http-filter1', 'http-filter2', 'http-filter3', 'http-filter-to-be-removed-then-add'))],
        },
      ],
    }),
    view(LIS, another),
  ]);
  assert.equal(out[1], input[1], 'a listener no patch touched is the same object');
});

test('istiod "gateway lds with priority": patches apply in the order given (LISTENER_FILTER MERGE, HTTP_FILTER REMOVE, ADD)', () => {
  const gw = { context: 'GATEWAY' as const };
  const sub = {
    portNumber: 80,
    filterChain: { filter: { name: HCM, subFilter: { name: 'http-filter-to-be-removed-then-add' } } },
  };
  const patches = [
    P(
      'LISTENER_FILTER',
      'MERGE',
      { ...gw, listener: { portNumber: 80, listenerFilter: 'envoy.filters.listener.tls_inspector' } },
      {
        name: 'envoy.filters.listener.tls_inspector',
        typed_config: packAny(TypeName.TlsInspector, { initial_read_buffer_size: { value: 8192 } }),
      },
    ),
    P('HTTP_FILTER', 'REMOVE', { ...gw, listener: sub }),
    P('HTTP_FILTER', 'ADD', { ...gw, listener: sub }, { name: 'http-filter-to-be-removed-then-add' }),
  ];
  const tlsInspector = (cfg: object) => ({
    name: 'envoy.filters.listener.tls_inspector',
    typed_config: packAny(TypeName.TlsInspector, cfg),
  });
  const input: Listener[] = deepFreeze([
    { name: '80', address: sock(80), filter_chains: [{ filters: [hcm([])] }], listener_filters: [tlsInspector({})] },
  ]);
  assert.deepEqual(views(LIS, patchListeners('GATEWAY', input, patches)), [
    view(LIS, {
      name: '80',
      address: sock(80),
      filter_chains: [{ filters: [hcm(named('http-filter-to-be-removed-then-add'))] }],
      listener_filters: [tlsInspector({ initial_read_buffer_size: { value: 8192 } })],
    }),
  ]);
});

test('istiod "sidecar outbound lds" and "- skip adds"', () => {
  const patches = listenerTestPatches();
  const downstream = (params: object) =>
    tlsSocket(TypeName.DownstreamTlsContext, { common_tls_context: { tls_params: params } });
  const tcpProxy = (cfg: object): NetworkFilter => ({ name: REDIS, typed_config: packAny(TypeName.TcpProxy, cfg) });
  const redisStats = {
    name: 'envoy.redis_proxy',
    typed_config: packAny(TypeName.TcpProxy, { stat_prefix: 'redis_stats', cluster: 'custom-redis-cluster' }),
  };
  const hcmListener = (name: string, filters: string[]): Listener => ({
    name,
    filter_chains: [{ filter_chain_match: { destination_port: { value: 80 } }, filters: [hcm(named(...filters))] }],
  });
  const untouched = {
    notFound: {
      name: 'network-filter-to-be-replaced-not-found',
      address: sock(6380),
      filter_chains: [{ filters: named('network-filter-should-not-be-replaced') }],
    },
    another: { name: 'another-listener' },
    httpNotFound: hcmListener('listener-http-filter-to-be-replaced-not-found', [
      'http-filter-should-not-be-replaced',
      'another-http-filter',
    ]),
  };
  const input: Listener[] = deepFreeze([
    {
      name: '12345',
      address: sock(12345),
      filter_chains: [
        {
          filter_chain_match: { transport_protocol: 'tls' },
          transport_socket: downstream({ ecdh_curves: ['X25519'], tls_maximum_protocol_version: 2 }),
          filters: named('envoy.transport_sockets.tls'),
        },
        { filter_chain_match: { application_protocols: ['http/1.1', 'h2c'] }, filters: named('filter1') },
        { filters: named('filter1', 'filter2') },
      ],
    },
    {
      name: 'network-filter-to-be-replaced',
      address: sock(6379),
      filter_chains: [{ filters: named('filter1', 'filter2') }],
    },
    {
      name: 'redis-proxy',
      filter_chains: [
        {
          filter_chain_match: { destination_port: { value: 9999 } },
          filters: [tcpProxy({ stat_prefix: 'redis', cluster: 'redis', idle_timeout: { seconds: 5 } })],
        },
      ],
    },
    untouched.notFound,
    {
      name: 'default-filter-chain',
      address: sock(6381),
      filter_chains: [{ filters: named('network-filter') }],
      default_filter_chain: { filters: named('default-network-filter', 'default-network-filter-removed') },
      listener_filters: named('filter-to-be-removed', 'filter-before-replace'),
    },
    untouched.another,
    hcmListener('listener-http-filter-to-be-replaced', ['http-filter-to-be-replaced', 'another-http-filter']),
    untouched.httpNotFound,
    {
      name: 'custom-tls-replacement',
      address: sock(7777),
      filter_chains: [{ transport_socket: downstream({}), filters: named('filter') }],
    },
    { name: 'custom-tls-addition', address: sock(7778), filter_chains: [{ filters: named('filter') }] },
  ]);
  const listenerFilters12345 = named(
    'http-filter-to-be-removed-then-add',
    'before proxy_protocol',
    'envoy.filters.listener.proxy_protocol',
    'after proxy_protocol',
  );
  const out = patchListeners('SIDECAR_OUTBOUND', input, patches);
  assert.deepEqual(
    views(LIS, out),
    views(LIS, [
      {
        name: '12345',
        address: sock(12345),
        filter_chains: [
          {
            filter_chain_match: { transport_protocol: 'tls' },
            transport_socket: downstream({
              ecdh_curves: ['X25519'],
              tls_maximum_protocol_version: 4,
              tls_minimum_protocol_version: 3,
            }),
            filters: named('envoy.transport_sockets.tls'),
          },
          { filters: named('filter0', 'filter1') },
        ],
        listener_filters: listenerFilters12345,
      },
      {
        name: 'network-filter-to-be-replaced',
        address: sock(6379),
        filter_chains: [{ filters: [redisStats, { name: 'filter2' }] }],
      },
      {
        name: 'redis-proxy',
        filter_chains: [
          {
            filter_chain_match: { destination_port: { value: 9999 } },
            // Durations are replaced whole, not merged field by field (Istio's merge).
            filters: [tcpProxy({ stat_prefix: 'redis', cluster: 'redis', idle_timeout: { nanos: 200_000_000 } })],
          },
        ],
      },
      untouched.notFound,
      {
        name: 'default-filter-chain',
        address: sock(6381),
        filter_chains: [{ filters: named('network-filter') }],
        default_filter_chain: { filters: named('default-network-filter-replaced') },
        listener_filters: named('filter-after-replace'),
      },
      untouched.another,
      hcmListener('listener-http-filter-to-be-replaced', ['http-filter-replaced', 'another-http-filter']),
      untouched.httpNotFound,
      {
        name: 'custom-tls-replacement',
        address: sock(7777),
        // Another socket name: the whole value is merged, the socket's name and typed config replaced.
        filter_chains: [{ transport_socket: ppSocket(), filters: named('filter') }],
      },
      {
        name: 'custom-tls-addition',
        address: sock(7778),
        filter_chains: [{ transport_socket: ppSocket(), filters: named('filter') }],
      },
      { name: 'new-outbound-listener1' },
    ]),
  );
  for (const i of [3, 5, 7]) assert.equal(out[i], input[i], `${input[i]?.name} is the same object`);

  const noAdd: Listener[] = deepFreeze([
    {
      name: '12345',
      address: sock(12345),
      filter_chains: [
        {
          filter_chain_match: { transport_protocol: 'tls' },
          transport_socket: tlsSocket(TypeName.DownstreamTlsContext, {}),
          filters: named('envoy.transport_sockets.tls'),
        },
        { filter_chain_match: { application_protocols: ['http/1.1', 'h2c'] }, filters: named('filter1') },
        { filters: named('filter1', 'filter2') },
      ],
    },
    { name: 'another-listener' },
  ]);
  assert.deepEqual(
    views(LIS, patchListeners('SIDECAR_OUTBOUND', noAdd, patches, { skipAdds: true })),
    views(LIS, [
      {
        name: '12345',
        address: sock(12345),
        filter_chains: [
          {
            filter_chain_match: { transport_protocol: 'tls' },
            transport_socket: downstream({ tls_maximum_protocol_version: 4, tls_minimum_protocol_version: 3 }),
            filters: named('envoy.transport_sockets.tls'),
          },
          { filters: named('filter0', 'filter1') },
        ],
        listener_filters: listenerFilters12345,
      },
      { name: 'another-listener' },
    ]),
  );
});

test('istiod "sidecar inbound virtual": virtualInbound port matches on the chains\' destination port', () => {
  const patches = listenerTestPatches();
  const fault = (cfg: object): HttpFilter => ({ name: FAULT, typed_config: packAny(TypeName.Fault, cfg) });
  const blackhole: FilterChain = {
    name: 'virtualInbound-blackhole',
    filter_chain_match: { destination_port: { value: 15006 } },
    filters: [
      {
        name: TCP_PROXY,
        typed_config: packAny(TypeName.TcpProxy, { stat_prefix: 'BlackHoleCluster', cluster: 'BlackHoleCluster' }),
      },
    ],
  };
  const suffix: FilterChain = {
    filter_chain_match: { address_suffix: '0.0.0.0' },
    filters: named('network-filter-should-not-be-replaced'),
  };
  const notMatch: FilterChain = {
    name: 'filter-chain-name-not-match',
    filters: named('custom-network-filter-1', 'custom-network-filter-2'),
  };
  const catchAll: FilterChain = { name: 'catch-all', filter_chain_match: {}, filters: [hcm(named('base'))] };
  const head = {
    name: 'virtualInbound',
    use_original_dst: { value: true },
    traffic_direction: 1,
    address: sock(15006),
  };
  const input: Listener[] = deepFreeze([
    {
      ...head,
      filter_chains: [
        blackhole,
        {
          filter_chain_match: { destination_port: { value: 80 } },
          filters: [
            hcm([fault({ upstream_cluster: 'foobar' }), ...named('http-filter2', 'http-filter-to-be-removed')]),
          ],
        },
        suffix,
        { filter_chain_match: { destination_port: { value: 6380 } }, filters: named('network-filter-to-be-replaced') },
        notMatch,
        { name: 'filter-chain-name-match', filters: named('custom-network-filter-1', 'custom-network-filter-2') },
        catchAll,
      ],
    },
  ]);
  const alpn = (p: string[]) => tlsSocket(TypeName.DownstreamTlsContext, { common_tls_context: { alpn_protocols: p } });
  const out = patchListeners('SIDECAR_INBOUND', input, patches);
  assert.deepEqual(views(LIS, out), [
    view(LIS, {
      ...head,
      filter_chains: [
        blackhole,
        {
          filter_chain_match: { destination_port: { value: 80 } },
          transport_socket: alpn(['h2-80', 'http/1.1-80']),
          filters: [
            hcm(
              [
                { name: 'http-filter0' },
                fault({ upstream_cluster: 'scooby', downstream_nodes: ['foo'] }),
                ...named(
                  'http-filter3',
                  'http-filter2',
                  'http-filter-5',
                  'http-filter4',
                  'http-filter-to-be-removed-then-add',
                ),
              ],
              { xff_num_trusted_hops: 4, merge_slashes: true, always_set_request_id_in_response: true },
            ),
          ],
        },
        suffix,
        {
          filter_chain_match: { destination_port: { value: 6380 } },
          transport_socket: alpn(['h2-6380', 'http/1.1-6380']),
          filters: [
            {
              name: 'envoy.redis_proxy',
              typed_config: packAny(TypeName.TcpProxy, { stat_prefix: 'redis_stats', cluster: 'custom-redis-cluster' }),
            },
          ],
        },
        notMatch,
        { name: 'filter-chain-name-match', filters: named('custom-network-filter-1') },
        catchAll,
      ],
    }),
  ]);
  const chains = out[0]?.filter_chains ?? [];
  const given = input[0]?.filter_chains ?? [];
  for (const i of [0, 2, 4, 6]) assert.equal(chains[i], given[i], `chain ${i} is the same object`);
});

// ---------------------------------------------------------------- meshsnap's own cases

test('LISTENER_FILTER MERGE merges into every listener filter of the listener (istiod): another type panics, nothing applies', () => {
  const lis: Listener = deepFreeze({
    name: 'virtualInbound',
    address: sock(15006),
    listener_filters: [
      { name: 'envoy.filters.listener.original_dst', typed_config: packAny(TypeName.OriginalDst, {}) },
      { name: 'envoy.filters.listener.tls_inspector', typed_config: packAny(TypeName.TlsInspector, {}) },
    ],
    filter_chains: [{ filters: named('a', 'b') }],
  });
  const panics: string[] = [];
  const out = patchListeners(
    'SIDECAR_INBOUND',
    [lis],
    [
      P('NETWORK_FILTER', 'REMOVE', { listener: { filterChain: { filter: { name: 'b' } } } }),
      P(
        'LISTENER_FILTER',
        'MERGE',
        { listener: { listenerFilter: 'envoy.filters.listener.tls_inspector' } },
        {
          typed_config: packAny(TypeName.TlsInspector, { enable_ja3_fingerprinting: { value: true } }),
        },
      ),
    ],
    { onPanic: (p, m) => panics.push(`${p.applyTo}: ${m}`) },
  );
  assert.equal(out[0], lis, 'the listeners as given: "the patches did not take effect"');
  assert.deepEqual(panics, [
    `LISTENER_FILTER: descriptor mismatch: ${TypeName.OriginalDst} != ${TypeName.TlsInspector}`,
  ]);
});

test('FILTER_CHAIN: REMOVE drops chains (the default chain too), ADD appends, chains added without filters are dropped (istiod)', () => {
  const lis: Listener = deepFreeze({
    name: '0.0.0.0_8080',
    address: sock(8080),
    filter_chains: [
      { name: 'keep', filters: named('a') },
      { name: 'drop', filter_chain_match: { server_names: ['x.example'] }, filters: named('b') },
    ],
    default_filter_chain: { name: 'default', filters: named('c') },
  });
  const out = patchListeners(
    'SIDECAR_OUTBOUND',
    [lis],
    [
      P('FILTER_CHAIN', 'REMOVE', { listener: { portNumber: 8080, filterChain: { sni: 'x.example' } } }),
      P('FILTER_CHAIN', 'REMOVE', { listener: { filterChain: { name: 'default' } } }),
      P('FILTER_CHAIN', 'ADD', { listener: { portNumber: 8080 } }, { name: 'added', filters: named('d') }),
      P('FILTER_CHAIN', 'ADD', { listener: { portNumber: 8080 } }, { name: 'no-filters' }),
      P('NETWORK_FILTER', 'REMOVE', { listener: { filterChain: { name: 'keep', filter: { name: 'a' } } } }),
    ],
  );
  assert.deepEqual(views(LIS, out), [
    view(LIS, {
      name: '0.0.0.0_8080',
      address: sock(8080),
      // A chain whose filters a NETWORK_FILTER REMOVE emptied stays (istiod: an empty, not nil, list).
      filter_chains: [{ name: 'keep' }, { name: 'added', filters: named('d') }],
    }),
  ]);
  assert.equal(out[0]?.filter_chains?.length, 2);
});

test('SIDECAR_INBOUND: route patches apply to the inline route configs of the inbound HCMs, shared filters stay shared', () => {
  const route = (name: string): RouteConfiguration => ({
    name,
    virtual_hosts: [
      {
        name: 'inbound|http|9080',
        domains: ['*'],
        routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: name } }],
      },
    ],
  });
  const inboundHcm = (name: string): NetworkFilter =>
    hcm(named('envoy.filters.http.router'), { stat_prefix: 'inbound_0.0.0.0_9080', route_config: route(name) });
  const shared = inboundHcm('inbound|9080||');
  const other = inboundHcm('inbound|9090||');
  const lis: Listener = deepFreeze({
    name: 'virtualInbound',
    address: sock(15006),
    filter_chains: [
      { filter_chain_match: { destination_port: { value: 9080 }, transport_protocol: 'tls' }, filters: [shared] },
      {
        filter_chain_match: { destination_port: { value: 9080 }, transport_protocol: 'raw_buffer' },
        filters: [shared],
      },
      { filter_chain_match: { destination_port: { value: 9090 } }, filters: [other] },
    ],
  });
  const patches = [
    P(
      'VIRTUAL_HOST',
      'MERGE',
      { context: 'SIDECAR_INBOUND', routeConfiguration: { portNumber: 9080 } },
      { domains: ['extra'] },
    ),
    P(
      'HTTP_ROUTE',
      'INSERT_BEFORE',
      { routeConfiguration: { name: 'inbound|9080||', vhost: { route: { name: 'default' } } } },
      {
        name: 'first',
        match: { prefix: '/first' },
        direct_response: { status: 200 },
      },
    ),
    P('VIRTUAL_HOST', 'MERGE', { context: 'SIDECAR_OUTBOUND' }, { domains: ['outbound-only'] }),
  ];
  const [out] = patchListeners('SIDECAR_INBOUND', [lis], patches);
  assert.ok(out);
  const chains = out.filter_chains ?? [];
  const patched = route('inbound|9080||');
  const want = hcm(named('envoy.filters.http.router'), {
    stat_prefix: 'inbound_0.0.0.0_9080',
    route_config: {
      ...patched,
      virtual_hosts: [
        {
          ...patched.virtual_hosts?.[0],
          domains: ['*', 'extra'],
          routes: [
            { name: 'first', match: { prefix: '/first' }, direct_response: { status: 200 } },
            ...(patched.virtual_hosts?.[0]?.routes ?? []),
          ],
        },
      ],
    },
  });
  const F = 'envoy.config.listener.v3.Filter';
  assert.deepEqual(view(F, chains[0]?.filters?.[0] ?? {}), view(F, want));
  assert.equal(chains[0]?.filters?.[0], chains[1]?.filters?.[0], 'one patched filter for the chains that shared one');
  assert.equal(chains[2], lis.filter_chains?.[2], 'port 9090: untouched');
  // Outbound: the inline route configs are not patched.
  assert.equal(patchListeners('SIDECAR_OUTBOUND', [lis], patches)[0], lis);
});

test('compiled resources (frozen, shared): patched copies encode and pass the Envoy check; what no patch reaches stays the same object', () => {
  const out = compile(buildInputSet(generateMesh({ services: 12, seed: 7 }).docs)).output;
  const inbound = [...out.groups].filter(([id]) => id.startsWith('inbound/'));
  const outbound = out.groups.get('outbound');
  assert.ok(inbound.length > 0 && outbound);
  const router = { name: HCM, subFilter: { name: 'envoy.filters.http.router' } };
  const patches = [
    P(
      'HTTP_FILTER',
      'INSERT_BEFORE',
      { listener: { filterChain: { filter: router } } },
      {
        name: FAULT,
        typed_config: packAny(TypeName.Fault, { upstream_cluster: 'x' }),
      },
    ),
    P('VIRTUAL_HOST', 'MERGE', { context: 'SIDECAR_INBOUND' }, { domains: ['patched.example'] }),
    P('CLUSTER', 'MERGE', { cluster: { portNumber: 1 } }, { lb_policy: 1 }),
  ];
  let hcms = 0;
  let shared = 0;
  for (const [, table] of inbound) {
    const given = [...table.listeners.values()];
    const patched = patchListeners('SIDECAR_INBOUND', given, patches);
    assert.equal(patched.length, given.length);
    // Chains that shared an HCM filter share its patched copy.
    given.forEach((l, li) => {
      const copies = new Map<object, object>();
      (l.filter_chains ?? []).forEach((chain, ci) =>
        (chain.filters ?? []).forEach((f, fi) => {
          const copy = patched[li]?.filter_chains?.[ci]?.filters?.[fi];
          assert.ok(copy);
          if (copies.has(f)) {
            shared++;
            assert.equal(copy, copies.get(f));
          } else copies.set(f, copy);
        }),
      );
    });
    for (const l of patched) {
      encodeMessage(LIS, l);
      assert.deepEqual(validateResource('listeners', l, undefined, oneCheckValidator()), [], 'Envoy accepts it');
      const json = JSON.stringify(view(LIS, l));
      for (const chain of l.filter_chains ?? [])
        for (const f of chain.filters ?? [])
          if (f.name === HCM) {
            hcms++;
            const rendered = JSON.stringify(view('envoy.config.listener.v3.Filter', f));
            assert.match(rendered, /envoy\.filters\.http\.fault.*envoy\.filters\.http\.router/);
            assert.match(rendered, /patched\.example/);
          }
      assert.ok(json.length > 0);
    }
    // No cluster has port 1: every cluster is the one given.
    const clusters = [...table.clusters.values()];
    patchClusters('SIDECAR_INBOUND', clusters, patches).forEach((c, i) => assert.equal(c, clusters[i]));
  }
  assert.ok(hcms > 0, 'the mesh has inbound HTTP chains');
  assert.ok(shared > 0, 'the mesh has chains that share a filter');
  const routes = [...outbound.routes.values()] as RouteConfiguration[];
  // SIDECAR_INBOUND route patches do not reach outbound route configs.
  patchRouteConfigurations('SIDECAR_OUTBOUND', routes, patches).forEach((r, i) => assert.equal(r, routes[i]));
});

test('a memo shared by calls with the same patches (the copier of one compile): chains and HCMs patched once, results as without it', () => {
  const router = { name: HCM, subFilter: { name: 'envoy.filters.http.router' } };
  const fault = { name: FAULT, typed_config: packAny(TypeName.Fault, { upstream_cluster: 'x' }) };
  const patches = [
    P('HTTP_FILTER', 'INSERT_BEFORE', { listener: { filterChain: { filter: router } } }, fault),
    // Only the listener named `a`'s chains on port 9080 lose their TLS socket name.
    P('FILTER_CHAIN', 'MERGE', { listener: { name: 'a', filterChain: { destinationPort: 9080 } } }, { name: 'merged' }),
    P('VIRTUAL_HOST', 'MERGE', { context: 'SIDECAR_INBOUND' }, { domains: ['patched.example'] }),
  ];
  // Two listeners (two proxy classes' groups) holding the very same chains, as interned ones are.
  const http = deepFreeze({
    name: 'http',
    filter_chain_match: { destination_port: { value: 9080 } },
    filters: [
      hcm(named('envoy.filters.http.router'), {
        route_config: {
          name: 'inbound|9080||',
          virtual_hosts: [
            {
              name: 'inbound|http|9080',
              domains: ['*'],
              routes: [{ match: { prefix: '/' }, route: { cluster: 'inbound|9080||' } }],
            },
          ],
        },
      }),
    ],
  }) as FilterChain;
  const tcp = deepFreeze({
    name: 'tcp',
    filters: [{ name: TCP_PROXY, typed_config: packAny(TypeName.TcpProxy, { cluster: 'c' }) }],
  }) as FilterChain;
  const listener = (name: string, port: number): Listener =>
    deepFreeze({ name, address: sock(port), filter_chains: [http, tcp] }) as Listener;
  const given = [listener('a', 15006), listener('b', 15006), listener('a', 15007), listener('a', 15006)];
  for (const ctx of ['SIDECAR_INBOUND', 'SIDECAR_OUTBOUND'] as const) {
    const memo = new ListenerPatchMemo();
    const shared = given.map((l) => patchListeners(ctx, [l], patches, { memo })[0] as Listener);
    const alone = given.map((l) => patchListeners(ctx, [l], patches)[0] as Listener);
    assert.deepEqual(views(LIS, shared), views(LIS, alone), `${ctx}: the same listeners as without the memo`);
    const [a, b, a7, again] = shared as [Listener, Listener, Listener, Listener];
    // The same listener name and port: the same patched chains.
    assert.equal(again.filter_chains?.[0], a.filter_chains?.[0]);
    assert.equal(a.filter_chains?.[0]?.name, 'merged');
    // Another name: the FILTER_CHAIN patch does not match, the HTTP filter patch does, on the same HCM copy.
    assert.equal(b.filter_chains?.[0]?.name, 'http');
    assert.equal(b.filter_chains?.[0]?.filters?.[0], a.filter_chains?.[0]?.filters?.[0], 'one patched HCM');
    assert.equal(a7.filter_chains?.[0]?.name, 'merged');
    assert.equal(b.filter_chains?.[1], tcp, 'what no patch reaches stays the same object');
    const rendered = JSON.stringify(view(LIS, a));
    assert.match(rendered, /envoy\.filters\.http\.fault.*envoy\.filters\.http\.router/);
    if (ctx === 'SIDECAR_INBOUND') assert.match(rendered, /patched\.example/);
    else assert.doesNotMatch(rendered, /patched\.example/);
  }
  // Other patches: results of their own, not the memo's of the first list.
  const memo = new ListenerPatchMemo();
  const first = patchListeners('SIDECAR_INBOUND', [given[0] as Listener], patches, { memo })[0];
  const other = patchListeners('SIDECAR_INBOUND', [given[0] as Listener], [patches[0] as ResolvedPatch], { memo })[0];
  assert.notEqual(other?.filter_chains?.[0], first?.filter_chains?.[0]);
  assert.equal(other?.filter_chains?.[0]?.name, 'http');
});
