import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NO_SECURITY } from '../../src/compile/security/workload-security.js';
import { buildInbound, reportNamedTargetPorts } from '../../src/compile/listeners.js';
import { decodeMessage, encodeMessage, codecOf, type Cluster, type FilterChain } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';
import {
  assertListenerRoundTrip,
  destinationRule,
  endpoint,
  filterConfig,
  makeContext,
  port,
  service,
  unpack,
} from './listeners-helpers.js';

const HCM = 'envoy.filters.network.http_connection_manager';
const TCP = 'envoy.filters.network.tcp_proxy';

const reviews = service('reviews', 'default', [port(9080, 'HTTP', 9080, 'http')], { clusterIP: '10.96.0.11' });
const grpc = service('echo', 'default', [port(80, 'GRPC', 'grpc-port', 'grpc'), port(5432, 'TCP', 15432, 'tcp')], {
  clusterIP: '10.96.0.30',
});
const echoEndpoints = new Map([[grpc.hostname, new Map([[80, [endpoint('10.1.0.7', 7070)]]])]]);

function chainsOf(built: ReturnType<typeof buildInbound>): FilterChain[] {
  return built.listeners.get('virtualInbound')?.filter_chains ?? [];
}

test('virtualInbound: 15006, original_dst + inspectors, blackhole, passthrough chains, then one mTLS and one plaintext chain per HTTP port', () => {
  const built = buildInbound(makeContext([reviews]), {
    namespace: 'default',
    services: [reviews],
    security: NO_SECURITY,
  });
  assert.deepEqual([...built.listeners.keys()], ['virtualInbound']);
  const l = built.listeners.get('virtualInbound');
  assert.ok(l);
  assertListenerRoundTrip(l);
  assert.deepEqual(l.address, { socket_address: { address: '0.0.0.0', port_value: 15006 } });
  assert.equal(l.traffic_direction, 1 /* INBOUND */);
  assert.deepEqual(
    l.listener_filters?.map((f) => f.name),
    [
      'envoy.filters.listener.original_dst',
      'envoy.filters.listener.tls_inspector',
      'envoy.filters.listener.http_inspector',
    ],
  );
  // Neither the declared HTTP port (its chains match no plaintext ALPN) nor 15006 itself is sniffed for HTTP;
  // TLS is detected everywhere but on 15006, as in istiod.
  const range = (p: number) => ({ destination_port_range: { start: p, end: p + 1 } });
  assert.deepEqual(l.listener_filters?.[2]?.filter_disabled, { or_match: { rules: [range(9080), range(15006)] } });
  assert.deepEqual(l.listener_filters?.[1]?.filter_disabled, range(15006));

  const names = chainsOf(built).map((c) => c.name);
  assert.deepEqual(names, [
    'virtualInbound-blackhole',
    'virtualInbound-catchall-http',
    'virtualInbound-catchall-http',
    'virtualInbound',
    'virtualInbound',
    'virtualInbound',
    '0.0.0.0_9080',
    '0.0.0.0_9080',
  ]);
  const [mtls, plain] = chainsOf(built).filter((c) => c.name === '0.0.0.0_9080');
  assert.deepEqual(mtls?.filter_chain_match, {
    destination_port: { value: 9080 },
    transport_protocol: 'tls',
    application_protocols: ['istio', 'istio-peer-exchange', 'istio-http/1.0', 'istio-http/1.1', 'istio-h2'],
  });
  assert.deepEqual(plain?.filter_chain_match, { destination_port: { value: 9080 }, transport_protocol: 'raw_buffer' });
  assert.equal(plain?.transport_socket, undefined);

  const tls = unpack(mtls?.transport_socket?.typed_config);
  const common = tls.common_tls_context as Record<string, unknown>;
  assert.deepEqual(tls.require_client_certificate, { value: true });
  assert.deepEqual(common.alpn_protocols, ['h2', 'http/1.1']);
  const sds = common.tls_certificate_sds_secret_configs as { name: string; sds_config: Record<string, unknown> }[];
  assert.deepEqual(
    sds.map((s) => s.name),
    ['default'],
  );
  assert.deepEqual((sds[0]?.sds_config.api_config_source as Record<string, unknown>).grpc_services, [
    { envoy_grpc: { cluster_name: 'sds-grpc' } },
  ]);
  assert.equal(
    (
      (common.combined_validation_context as Record<string, unknown>).validation_context_sds_secret_config as {
        name: string;
      }
    ).name,
    'ROOTCA',
  );
  assert.equal(common.tls_certificates, undefined, 'never key material');

  for (const chain of [mtls, plain]) {
    const hcm = filterConfig(chain, HCM);
    assert.equal(hcm.stat_prefix, 'inbound_0.0.0.0_9080');
    assert.deepEqual(
      (hcm.http_filters as { name: string }[]).map((f) => f.name),
      ['envoy.filters.http.fault', 'envoy.filters.http.cors', 'envoy.filters.http.router'],
    );
    const rc = hcm.route_config as {
      name: string;
      virtual_hosts: { name: string; domains: string[]; routes: Record<string, unknown>[] }[];
    };
    assert.equal(rc.name, 'inbound|9080||');
    assert.equal(rc.virtual_hosts[0]?.name, 'inbound|http|9080');
    assert.deepEqual(rc.virtual_hosts[0]?.domains, ['*']);
    const route = rc.virtual_hosts[0]?.routes[0];
    assert.equal(route?.name, 'default');
    assert.deepEqual(route?.match, { prefix: '/' });
    assert.equal((route?.route as Record<string, unknown>).cluster, 'inbound|9080||');
    assert.deepEqual((route?.route as Record<string, unknown>).timeout, {});
  }
  const passthroughTcp = chainsOf(built).find(
    (c) => c.name === 'virtualInbound' && c.filter_chain_match?.transport_protocol === 'raw_buffer',
  );
  assert.equal(filterConfig(passthroughTcp, TCP).cluster, 'InboundPassthroughCluster');
});

test('inbound clusters: one ORIGINAL_DST cluster per target port, named targetPorts resolved through endpoints', () => {
  const ctx = makeContext([grpc], { endpoints: echoEndpoints });
  const built = buildInbound(ctx, { namespace: 'default', services: [grpc], security: NO_SECURITY });
  assert.deepEqual([...built.clusters.keys()], ['inbound|7070||', 'inbound|15432||']);
  const c = built.clusters.get('inbound|7070||') as Cluster;
  const decoded = codecOf(TypeName.Cluster)?.toObject(
    decodeMessage(TypeName.Cluster, encodeMessage(TypeName.Cluster, c)),
    { enums: String, longs: Number },
  );
  assert.ok(decoded);
  assert.equal(decoded.type, 'ORIGINAL_DST');
  assert.equal(decoded.lb_policy, 'CLUSTER_PROVIDED');
  assert.deepEqual(decoded.connect_timeout, { seconds: 10 });
  assert.deepEqual(decoded.upstream_bind_config, { source_address: { address: '127.0.0.6', port_value: 0 } });
  const thresholds = (decoded.circuit_breakers as { thresholds: Record<string, unknown>[] }).thresholds[0];
  assert.deepEqual(thresholds?.max_requests, { value: 4294967295 });
  assert.equal(thresholds?.track_remaining, true);
  const services = (decoded.metadata as { filter_metadata: { istio: { fields: Record<string, unknown> } } })
    .filter_metadata.istio.fields.services;
  assert.deepEqual(services, {
    listValue: {
      values: [
        {
          structValue: {
            fields: {
              host: { stringValue: 'echo.default.svc.cluster.local' },
              name: { stringValue: 'echo' },
              namespace: { stringValue: 'default' },
            },
          },
        },
      ],
    },
  });
  // gRPC: HTTP/2 to the application.
  const opts = decoded.typed_extension_protocol_options as Record<string, { type_url: string }>;
  assert.deepEqual(Object.keys(opts), ['envoy.extensions.upstreams.http.v3.HttpProtocolOptions']);

  // The TCP port: three chains (Istio mTLS, other TLS, plaintext) with a tcp_proxy to its cluster.
  const tcpChains = chainsOf(built).filter((ch) => ch.name === '0.0.0.0_15432');
  assert.deepEqual(
    tcpChains.map((ch) => [ch.filter_chain_match?.transport_protocol, ch.transport_socket ? 'mtls' : 'none']),
    [
      ['tls', 'mtls'],
      ['tls', 'none'],
      ['raw_buffer', 'none'],
    ],
  );
  for (const ch of tcpChains)
    assert.deepEqual(filterConfig(ch, TCP), { stat_prefix: 'inbound|15432||', cluster: 'inbound|15432||' });
  // The gRPC port's route has no inbound retry (it breaks streaming) and HTTP/2 on the HCM.
  const hcm = filterConfig(
    chainsOf(built).find((ch) => ch.name === '0.0.0.0_7070'),
    HCM,
  );
  assert.deepEqual(hcm.http2_protocol_options, {});
  const route = (
    hcm.route_config as { virtual_hosts: { name: string; routes: { route: Record<string, unknown> }[] }[] }
  ).virtual_hosts[0];
  assert.equal(route?.name, 'inbound|http|80');
  assert.equal(route?.routes[0]?.route.retry_policy, undefined);
  assert.equal(ctx.diags.all.length, 0);
});

test('an unresolvable named targetPort skips that port with a diagnostic naming the Service field', () => {
  const ctx = makeContext([grpc]);
  const built = buildInbound(ctx, { namespace: 'default', services: [grpc], security: NO_SECURITY });
  assert.deepEqual([...built.clusters.keys()], ['inbound|15432||']);
  assert.equal(
    chainsOf(built).some((c) => c.name === '0.0.0.0_7070'),
    false,
  );
  // Said once per compile from the model, not by the builds, however many shapes contain the service.
  buildInbound(ctx, { namespace: 'default', services: [grpc, reviews], security: NO_SECURITY });
  assert.equal(ctx.diags.all.length, 0);
  reportNamedTargetPorts(ctx, grpc, ctx.diags);
  const d = ctx.diags.all;
  assert.equal(d.length, 1);
  assert.deepEqual(
    [d[0]?.kind, d[0]?.namespace, d[0]?.name, d[0]?.field, d[0]?.file],
    ['Service', 'default', 'echo', 'spec.ports[0].targetPort', 'echo.yaml'],
  );
  // A service without a selector has no inbound shape: nothing reads the port.
  const manual = { ...grpc, selector: {} };
  reportNamedTargetPorts(ctx, manual, ctx.diags);
  assert.equal(ctx.diags.all.length, 1);
});

test('a named targetPort that resolves to different container ports is built for the first and said', () => {
  // Two Deployments behind one Service, their containers naming different ports "grpc-port".
  const endpoints = new Map([
    [
      grpc.hostname,
      new Map([[80, [endpoint('10.1.0.7', 7070), { ...endpoint('10.1.0.9', 7071), podName: 'echo-v2-x' }]]]),
    ],
  ]);
  const ctx = makeContext([grpc], { endpoints });
  const built = buildInbound(ctx, { namespace: 'default', services: [grpc], security: NO_SECURITY });
  assert.deepEqual([...built.clusters.keys()], ['inbound|7070||', 'inbound|15432||']);
  reportNamedTargetPorts(ctx, grpc, ctx.diags);
  assert.deepEqual(
    ctx.diags.all.map((d) => [d.code, d.severity, d.kind, d.name, d.field]),
    [['target-port-differs', 'warning', 'Service', 'echo', 'spec.ports[0].targetPort']],
  );
  assert.match(ctx.diags.all[0]?.message ?? '', /port 7070 on 10\.1\.0\.7 but 7071 on pod echo-v2-x \(10\.1\.0\.9\)/);
  // The same port on every endpoint: nothing to say.
  const same = makeContext([grpc], {
    endpoints: new Map([[grpc.hostname, new Map([[80, [endpoint('10.1.0.7', 7070), endpoint('10.1.0.9', 7070)]]])]]),
  });
  reportNamedTargetPorts(same, grpc, same.diags);
  assert.deepEqual(same.diags.all, []);
});

test('two services on one target port share a cluster; a DestinationRule sets its limits', () => {
  const a = service('a', 'default', [port(80, 'HTTP', 8080)], { clusterIP: '10.96.0.1' });
  const b = service('b', 'default', [port(80, 'HTTP', 8080)], { clusterIP: '10.96.0.2' });
  const dr = destinationRule('a', 'default', {
    host: 'a',
    trafficPolicy: { connectionPool: { tcp: { maxConnections: 100 }, http: { http2MaxRequests: 7 } } },
  });
  const ctx = makeContext([a, b], { destinationRules: new Map([[a.hostname, dr]]) });
  const built = buildInbound(ctx, { namespace: 'default', services: [b, a], security: NO_SECURITY });
  assert.deepEqual([...built.clusters.keys()], ['inbound|8080||']);
  const c = built.clusters.get('inbound|8080||');
  const t = c?.circuit_breakers?.thresholds?.[0];
  assert.deepEqual(
    [t?.max_connections, t?.max_requests, t?.max_pending_requests],
    [{ value: 100 }, { value: 7 }, { value: 4294967295 }],
  );
  const istio = c?.metadata?.filter_metadata?.istio?.fields;
  assert.deepEqual(
    istio?.services?.listValue?.values?.map((v) => v.structValue?.fields?.name?.stringValue),
    ['a', 'b'],
  );
  assert.equal(istio?.config?.stringValue, '/apis/networking.istio.io/v1/namespaces/default/destination-rule/a');
  assert.equal(chainsOf(built).filter((ch) => ch.name === '0.0.0.0_8080').length, 2);
});

test('a workload no service selects still gets virtualInbound with the passthrough chains and no clusters', () => {
  const built = buildInbound(makeContext([]), { namespace: 'default', services: [], security: NO_SECURITY });
  assert.equal(built.clusters.size, 0);
  const l = built.listeners.get('virtualInbound');
  assert.ok(l);
  assertListenerRoundTrip(l);
  assert.equal(l.filter_chains?.length, 6);
  // Passthrough chains sniff everything; only the loop-breaking chain on 15006 is not inspected.
  const loop = { destination_port_range: { start: 15006, end: 15007 } };
  assert.deepEqual(
    l.listener_filters?.map((f) => f.filter_disabled ?? null),
    [null, loop, loop],
  );
});

test('inbound output does not depend on the order of the shape services', () => {
  const ctx = makeContext([reviews, grpc], { endpoints: echoEndpoints });
  const x = buildInbound(ctx, { namespace: 'default', services: [reviews, grpc], security: NO_SECURITY });
  const y = buildInbound(ctx, { namespace: 'default', services: [grpc, reviews], security: NO_SECURITY });
  const bytes = (b: typeof x) => encodeMessage(TypeName.Listener, b.listeners.get('virtualInbound') as object);
  assert.deepEqual(bytes(x), bytes(y));
  assert.deepEqual([...x.clusters.keys()], [...y.clusters.keys()]);
  const tcpFirst = chainsOf(x).findIndex((c) => c.name === '0.0.0.0_7070');
  const httpFirst = chainsOf(x).findIndex((c) => c.name === '0.0.0.0_9080');
  assert.ok(tcpFirst < httpFirst, 'chains ordered by target port');
});

test("workloads with the same policies hold one frozen copy of the passthrough chains and of a TCP port's chains; an HTTP port's chains are the service's own", () => {
  const db = (name: string) =>
    service(name, 'default', [port(5432, 'TCP', 15432, 'tcp'), port(8080, 'HTTP', 8080, 'http')]);
  const [a, b] = [db('db-a'), db('db-b')] as const;
  const ctx = makeContext([a, b]);
  const chains = (s: typeof a) =>
    chainsOf(buildInbound(ctx, { namespace: 'default', services: [s], security: NO_SECURITY }));
  const [ca, cb] = [chains(a), chains(b)];
  assert.equal(ca.length, cb.length);
  const kinds = ca.map((c, i) => {
    const same = c === cb[i];
    // Shared means frozen (the wire writer and the validator keep their work per frozen object)…
    assert.equal(Object.isFrozen(c), same, `${c.name} #${i}`);
    // …and a chain the services do not share differs only in what names the service.
    if (!same) assert.equal(c.filters?.[0]?.name, HCM, `${c.name} #${i}`);
    return `${c.name}${same ? ' shared' : ''}`;
  });
  assert.deepEqual(kinds, [
    'virtualInbound-blackhole shared',
    'virtualInbound-catchall-http shared',
    'virtualInbound-catchall-http shared',
    'virtualInbound shared',
    'virtualInbound shared',
    'virtualInbound shared',
    '0.0.0.0_8080',
    '0.0.0.0_8080',
    '0.0.0.0_15432 shared',
    '0.0.0.0_15432 shared',
    '0.0.0.0_15432 shared',
  ]);
  assert.equal(filterConfig(ca[8] as FilterChain, TCP).cluster, 'inbound|15432||');
});
