import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildClusters, buildServiceClusters } from '../../src/compile/clusters.js';
import { buildEndpoints } from '../../src/compile/endpoints.js';
import { codecOf, decodeMessage, encodeMessage, type Cluster } from '../../src/xds/proto.js';
import { resourceToJson } from '../../src/xds/json.js';
import { TypeName } from '../../src/xds/type-urls.js';
import { context, destinationRule, endpoint, host, model, service } from './clusters-model.js';

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Encodes like the snapshot does and renders as Envoy's config_dump shows it. */
const dump = (c: Cluster | undefined): J => {
  assert.ok(c, 'cluster exists');
  return resourceToJson(TypeName.Cluster, encodeMessage(TypeName.Cluster, c)) as J;
};

/** ROUND_ROBIN is the enum's zero value: proto3 leaves it out on the wire and in config dumps. */
const lbPolicy = (c: J): string => c.lb_policy ?? 'ROUND_ROBIN';

const reviews = service('reviews');
const reviewsEps = {
  [host('reviews')]: {
    9080: [
      endpoint('10.0.0.1', { labels: { app: 'reviews', version: 'v1' }, serviceAccount: 'bookinfo-reviews' }),
      endpoint('10.0.0.2', { labels: { app: 'reviews', version: 'v2' }, serviceAccount: 'bookinfo-reviews' }),
    ],
  },
};

test('an outbound EDS cluster looks like istiod’s', () => {
  const ctx = context(model([reviews], reviewsEps));
  const out = buildClusters(ctx, 'sidecar');
  const name = `outbound|9080||${host('reviews')}`;
  const c = dump(out.get(name));
  assert.equal(c.name, name);
  assert.equal(c.type, 'EDS');
  assert.deepEqual(c.eds_cluster_config, {
    service_name: name,
    eds_config: { ads: {}, initial_fetch_timeout: '0s', resource_api_version: 'V3' },
  });
  assert.equal(c.connect_timeout, '10s');
  assert.equal(c.lb_policy, 'LEAST_REQUEST');
  assert.deepEqual(c.circuit_breakers.thresholds, [
    {
      max_connections: 4294967295,
      max_pending_requests: 4294967295,
      max_requests: 4294967295,
      max_retries: 4294967295,
      track_remaining: true,
    },
  ]);
  assert.deepEqual(c.metadata.filter_metadata.istio, {
    services: [{ host: host('reviews'), name: 'reviews', namespace: 'default' }],
  });
  assert.equal(c.typed_extension_protocol_options, undefined, 'plain HTTP/1.1 port needs no protocol options');
  assert.equal(c.transport_socket, undefined);
});

test('auto mTLS: tlsMode-istio gets Istio mTLS with SDS secrets, the rest plaintext', () => {
  const ctx = context(model([reviews], reviewsEps));
  const c = dump(buildClusters(ctx, 'sidecar').get(`outbound|9080||${host('reviews')}`));
  const [istio, disabled] = c.transport_socket_matches;
  assert.equal(c.transport_socket_matches.length, 2);
  assert.equal(istio.name, 'tlsMode-istio');
  assert.deepEqual(istio.match, { tlsMode: 'istio' });
  assert.equal(disabled.name, 'tlsMode-disabled');
  assert.equal(disabled.transport_socket.name, 'envoy.transport_sockets.raw_buffer');
  const tls = istio.transport_socket.typed_config;
  assert.equal(tls['@type'], 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext');
  assert.equal(tls.sni, `outbound_.9080_._.${host('reviews')}`);
  const common = tls.common_tls_context;
  assert.deepEqual(common.alpn_protocols, ['istio-peer-exchange', 'istio']);
  const sds = {
    api_config_source: {
      api_type: 'GRPC',
      set_node_on_first_message_only: true,
      transport_api_version: 'V3',
      grpc_services: [{ envoy_grpc: { cluster_name: 'sds-grpc' } }],
    },
    initial_fetch_timeout: '0s',
    resource_api_version: 'V3',
  };
  assert.deepEqual(common.tls_certificate_sds_secret_configs, [{ name: 'default', sds_config: sds }]);
  assert.deepEqual(common.combined_validation_context.validation_context_sds_secret_config, {
    name: 'ROOTCA',
    sds_config: sds,
  });
  assert.deepEqual(common.combined_validation_context.default_validation_context.match_subject_alt_names, [
    { exact: 'spiffe://cluster.local/ns/default/sa/bookinfo-reviews' },
  ]);
});

test('auto mTLS off in the mesh config: no transport socket at all', () => {
  const ctx = context(model([reviews], reviewsEps), { enableAutoMtls: false });
  const c = dump(buildClusters(ctx, 'sidecar').get(`outbound|9080||${host('reviews')}`));
  assert.equal(c.transport_socket_matches, undefined);
  assert.equal(c.transport_socket, undefined);
});

test('port protocol decides the upstream HTTP protocol', () => {
  const svc = service('multi', {
    ports: [
      { port: 80, protocol: 'HTTP' },
      { port: 81, protocol: 'GRPC' },
      { port: 82, protocol: 'HTTP2' },
      { port: 83, protocol: 'Unsupported' },
      { port: 84, protocol: 'TCP' },
      { port: 85, protocol: 'UDP' },
    ],
  });
  const out = buildClusters(context(model([svc])), 'sidecar');
  const opts = (port: number) =>
    dump(out.get(`outbound|${port}||${host('multi')}`)).typed_extension_protocol_options?.[
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions'
    ];
  assert.equal(opts(80), undefined);
  assert.deepEqual(opts(81).explicit_http_config, { http2_protocol_options: {} });
  assert.deepEqual(opts(82).explicit_http_config, { http2_protocol_options: {} });
  assert.deepEqual(opts(83).use_downstream_protocol_config, { http_protocol_options: {}, http2_protocol_options: {} });
  assert.equal(opts(84), undefined);
  assert.equal(out.has(`outbound|85||${host('multi')}`), false, 'no cluster for UDP ports');
  // HTTP/2 clusters advertise h2 in the Istio ALPN list.
  const grpcTls = dump(out.get(`outbound|81||${host('multi')}`)).transport_socket_matches[0].transport_socket
    .typed_config;
  assert.deepEqual(grpcTls.common_tls_context.alpn_protocols, ['istio-peer-exchange', 'istio', 'h2']);
});

test('headless services get ORIGINAL_DST clusters, ExternalName services STRICT_DNS', () => {
  const headless = service('db', { headless: true, ports: [{ port: 5432, protocol: 'TCP' }] });
  const ext = service('search', { externalName: 'search.example.com', ports: [{ port: 443, protocol: 'TLS' }] });
  const eps = { [host('db')]: { 5432: [endpoint('10.0.1.1', { port: 5432 }), endpoint('10.0.1.2', { port: 5432 })] } };
  const out = buildClusters(context(model([headless, ext], eps)), 'sidecar');
  const db = dump(out.get(`outbound|5432||${host('db')}`));
  assert.equal(db.type, 'ORIGINAL_DST');
  assert.equal(db.lb_policy, 'CLUSTER_PROVIDED');
  assert.equal(db.eds_cluster_config, undefined);
  assert.equal(db.transport_socket_matches, undefined, 'no socket matches on ORIGINAL_DST');
  assert.equal(
    db.transport_socket.typed_config.sni,
    `outbound_.5432_._.${host('db')}`,
    'all endpoints have sidecars: Istio mTLS',
  );
  const search = dump(out.get(`outbound|443||${host('search')}`));
  assert.equal(search.type, 'STRICT_DNS');
  assert.deepEqual(search.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address, {
    address: 'search.example.com',
    port_value: 443,
  });
  assert.equal(search.transport_socket_matches, undefined, 'external services get no auto mTLS');
});

test('headless service with a plaintext endpoint gets no mTLS', () => {
  const headless = service('db', { headless: true, ports: [{ port: 5432, protocol: 'TCP' }] });
  const eps = {
    [host('db')]: {
      5432: [endpoint('10.0.1.1', { port: 5432 }), endpoint('10.0.1.2', { port: 5432, tlsMode: 'disabled' })],
    },
  };
  const c = dump(buildClusters(context(model([headless], eps)), 'sidecar').get(`outbound|5432||${host('db')}`));
  assert.equal(c.transport_socket, undefined);
});

test('fixed clusters: BlackHole, Passthrough, InboundPassthrough', () => {
  const out = buildClusters(context(model([])), 'sidecar');
  const bh = dump(out.get('BlackHoleCluster'));
  assert.equal(bh.type, 'STATIC');
  assert.equal(bh.load_assignment, undefined);
  const pt = dump(out.get('PassthroughCluster'));
  assert.equal(pt.type, 'ORIGINAL_DST');
  assert.equal(pt.lb_policy, 'CLUSTER_PROVIDED');
  assert.equal(
    pt.typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions']
      .common_http_protocol_options.idle_timeout,
    '300s',
  );
  const ipt = dump(out.get('InboundPassthroughCluster'));
  assert.equal(ipt.type, 'ORIGINAL_DST');
  assert.deepEqual(ipt.upstream_bind_config.source_address, { address: '127.0.0.6', port_value: 0 });
});

test('subsets become clusters with the rule’s provenance and merged policy', () => {
  const dr = destinationRule('default', 'reviews', {
    host: 'reviews',
    trafficPolicy: { loadBalancer: { simple: 'RANDOM' }, connectionPool: { tcp: { maxConnections: 100 } } },
    subsets: [
      { name: 'v1', labels: { version: 'v1' } },
      { name: 'v2', labels: { version: 'v2' }, trafficPolicy: { loadBalancer: { simple: 'ROUND_ROBIN' } } },
    ],
  });
  const ctx = context(model([reviews], reviewsEps, [dr]));
  const out = buildClusters(ctx, 'sidecar');
  const main = dump(out.get(`outbound|9080||${host('reviews')}`));
  const v1 = dump(out.get(`outbound|9080|v1|${host('reviews')}`));
  const v2 = dump(out.get(`outbound|9080|v2|${host('reviews')}`));
  assert.equal(main.lb_policy, 'RANDOM');
  assert.equal(lbPolicy(v1), 'RANDOM', 'subset without policy inherits the top level');
  assert.equal(lbPolicy(v2), 'ROUND_ROBIN', 'subset policy overrides the load balancer');
  assert.equal(v2.circuit_breakers.thresholds[0].max_connections, 100, '…but keeps the top-level connection pool');
  assert.equal(
    v1.metadata.filter_metadata.istio.config,
    '/apis/networking.istio.io/v1/namespaces/default/destination-rule/reviews',
  );
  assert.equal(v1.metadata.filter_metadata.istio.subset, 'v1');
  assert.equal(main.metadata.filter_metadata.istio.subset, undefined);
  assert.equal(v1.eds_cluster_config.service_name, `outbound|9080|v1|${host('reviews')}`);
  assert.equal(
    v1.transport_socket_matches[0].transport_socket.typed_config.sni,
    `outbound_.9080_.v1_.${host('reviews')}`,
  );
});

test('port-level settings replace the top-level policy for that port only', () => {
  const svc = service('api', { ports: [{ port: 80 }, { port: 81 }] });
  const dr = destinationRule('default', 'api', {
    host: 'api',
    trafficPolicy: {
      loadBalancer: { simple: 'RANDOM' },
      outlierDetection: { consecutive5xxErrors: 3 },
      portLevelSettings: [{ port: { number: 81 }, loadBalancer: { simple: 'ROUND_ROBIN' } }],
    },
  });
  const out = buildClusters(context(model([svc], {}, [dr])), 'sidecar');
  const p80 = dump(out.get(`outbound|80||${host('api')}`));
  const p81 = dump(out.get(`outbound|81||${host('api')}`));
  assert.equal(p80.lb_policy, 'RANDOM');
  assert.ok(p80.outlier_detection);
  assert.equal(lbPolicy(p81), 'ROUND_ROBIN');
  assert.equal(p81.outlier_detection, undefined, 'port-level settings do not inherit the top level');
});

test('load balancer translation', () => {
  const cases: [Record<string, unknown>, Record<string, unknown>][] = [
    [{ simple: 'LEAST_CONN' }, { lb_policy: 'LEAST_REQUEST' }],
    [
      { simple: 'ROUND_ROBIN', warmupDurationSecsMs: 30_000 },
      { lb_policy: 'ROUND_ROBIN', round_robin_lb_config: { slow_start_config: { slow_start_window: '30s' } } },
    ],
    [
      { consistentHash: { httpHeaderName: 'x-user', ringHash: { minimumRingSize: 2048 } } },
      { lb_policy: 'RING_HASH', ring_hash_lb_config: { minimum_ring_size: '2048' } },
    ],
    [
      { consistentHash: { useSourceIp: true } },
      { lb_policy: 'RING_HASH', ring_hash_lb_config: { minimum_ring_size: '1024' } },
    ],
    [
      { consistentHash: { useSourceIp: true, maglev: { tableSize: 65537 } } },
      { lb_policy: 'MAGLEV', maglev_lb_config: { table_size: '65537' } },
    ],
    [{ simple: 'PASSTHROUGH' }, { lb_policy: 'CLUSTER_PROVIDED', type: 'ORIGINAL_DST', eds_cluster_config: undefined }],
  ];
  for (const [loadBalancer, expected] of cases) {
    const dr = destinationRule('default', 'reviews', { host: 'reviews', trafficPolicy: { loadBalancer } });
    const c = dump(
      buildClusters(context(model([reviews], reviewsEps, [dr])), 'sidecar').get(`outbound|9080||${host('reviews')}`),
    );
    for (const [k, v] of Object.entries(expected))
      assert.deepEqual(k === 'lb_policy' ? lbPolicy(c) : c[k], v, `${JSON.stringify(loadBalancer)} → ${k}`);
  }
});

test('locality settings turn on locality weighted load balancing', () => {
  const dr = destinationRule('default', 'reviews', {
    host: 'reviews',
    trafficPolicy: {
      loadBalancer: {
        localityLbSetting: {
          enabled: true,
          distribute: [{ from: 'us-east/*', to: { 'us-east/*': 80, 'us-west/*': 20 } }],
        },
      },
    },
  });
  const c = dump(
    buildClusters(context(model([reviews], reviewsEps, [dr])), 'sidecar').get(`outbound|9080||${host('reviews')}`),
  );
  assert.deepEqual(c.common_lb_config, { locality_weighted_lb_config: {} });
  const plain = dump(
    buildClusters(context(model([reviews], reviewsEps)), 'sidecar').get(`outbound|9080||${host('reviews')}`),
  );
  assert.equal(plain.common_lb_config.locality_weighted_lb_config, undefined);
});

test('connection pool and outlier detection translation', () => {
  const dr = destinationRule('default', 'reviews', {
    host: 'reviews',
    trafficPolicy: {
      connectionPool: {
        tcp: {
          maxConnections: 10,
          connectTimeoutMs: 2500,
          tcpKeepalive: { probes: 3, timeMs: 7_200_000, intervalMs: 75_000 },
          maxConnectionDurationMs: 600_000,
        },
        http: {
          http1MaxPendingRequests: 5,
          http2MaxRequests: 50,
          maxRetries: 2,
          maxRequestsPerConnection: 1,
          idleTimeoutMs: 30_000,
        },
      },
      outlierDetection: {
        consecutive5xxErrors: 5,
        consecutiveGatewayErrors: 0,
        intervalMs: 10_000,
        baseEjectionTimeMs: 30_000,
        maxEjectionPercent: 50,
        minHealthPercent: 25,
      },
    },
  });
  const c = dump(
    buildClusters(context(model([reviews], reviewsEps, [dr])), 'sidecar').get(`outbound|9080||${host('reviews')}`),
  );
  assert.equal(c.connect_timeout, '2.5s');
  assert.deepEqual(c.circuit_breakers.thresholds[0], {
    max_connections: 10,
    max_pending_requests: 5,
    max_requests: 50,
    max_retries: 2,
    track_remaining: true,
  });
  assert.deepEqual(c.upstream_connection_options.tcp_keepalive, {
    keepalive_probes: 3,
    keepalive_time: 7200,
    keepalive_interval: 75,
  });
  const http = c.typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'];
  assert.deepEqual(http.common_http_protocol_options, {
    idle_timeout: '30s',
    max_connection_duration: '600s',
    max_requests_per_connection: 1,
  });
  assert.deepEqual(http.explicit_http_config, { http_protocol_options: {} }, 'HTTP/1.1 made explicit, as istiod does');
  assert.deepEqual(c.outlier_detection, {
    consecutive_5xx: 5,
    interval: '10s',
    base_ejection_time: '30s',
    max_ejection_percent: 50,
    enforcing_consecutive_5xx: 100,
    enforcing_success_rate: 0,
    consecutive_gateway_failure: 0,
    enforcing_consecutive_gateway_failure: 0,
  });
  assert.deepEqual(c.common_lb_config.healthy_panic_threshold, { value: 25 });
});

test('h2UpgradePolicy UPGRADE makes an HTTP/1.1 port speak HTTP/2 upstream', () => {
  const dr = destinationRule('default', 'reviews', {
    host: 'reviews',
    trafficPolicy: { connectionPool: { http: { h2UpgradePolicy: 'UPGRADE' } } },
  });
  const c = dump(
    buildClusters(context(model([reviews], reviewsEps, [dr])), 'sidecar').get(`outbound|9080||${host('reviews')}`),
  );
  assert.deepEqual(
    c.typed_extension_protocol_options['envoy.extensions.upstreams.http.v3.HttpProtocolOptions'].explicit_http_config,
    { http2_protocol_options: {} },
  );
});

test('DestinationRule TLS modes', () => {
  const withTls = (tls: Record<string, unknown>, subsets = false) => {
    const dr = destinationRule('default', 'reviews', {
      host: 'reviews',
      ...(subsets
        ? { subsets: [{ name: 'v1', labels: { version: 'v1' }, trafficPolicy: { tls: tls as never } }] }
        : { trafficPolicy: { tls: tls as never } }),
    });
    const ctx = context(model([reviews], reviewsEps, [dr]));
    const out = buildClusters(ctx, 'sidecar');
    return { c: dump(out.get(`outbound|9080|${subsets ? 'v1' : ''}|${host('reviews')}`)), ctx };
  };
  {
    const { c } = withTls({ mode: 'DISABLE' });
    assert.equal(c.transport_socket, undefined);
    assert.equal(c.transport_socket_matches, undefined, 'explicit DISABLE turns auto mTLS off');
  }
  {
    const { c } = withTls({
      mode: 'SIMPLE',
      caCertificates: '/etc/certs/ca.pem',
      sni: 'reviews.example.com',
      subjectAltNames: ['reviews.example.com'],
    });
    const tls = c.transport_socket.typed_config;
    assert.equal(tls.sni, 'reviews.example.com');
    assert.equal(
      tls.common_tls_context.combined_validation_context.validation_context_sds_secret_config.name,
      'file-root:/etc/certs/ca.pem',
    );
    assert.deepEqual(
      tls.common_tls_context.combined_validation_context.default_validation_context.match_subject_alt_names,
      [{ exact: 'reviews.example.com' }],
    );
    assert.equal(tls.common_tls_context.tls_certificate_sds_secret_configs, undefined);
    assert.equal(c.metadata.filter_metadata.istio.alpn_override, 'false');
  }
  {
    const { c } = withTls({
      mode: 'MUTUAL',
      clientCertificate: '/etc/certs/cert.pem',
      privateKey: '/etc/certs/key.pem',
    });
    const tls = c.transport_socket.typed_config;
    assert.equal(
      tls.common_tls_context.tls_certificate_sds_secret_configs[0].name,
      'file-cert:/etc/certs/cert.pem~/etc/certs/key.pem',
    );
    assert.equal(
      tls.common_tls_context.combined_validation_context.validation_context_sds_secret_config.name,
      'file-root:system',
    );
  }
  {
    const { c, ctx } = withTls({ mode: 'MUTUAL', caCertificates: '/etc/ca.pem' });
    assert.equal(c.transport_socket, undefined);
    assert.ok(
      ctx.diags.all.some(
        (d) => d.code === 'invalid-tls' && d.severity === 'error' && d.field === 'spec.trafficPolicy.tls',
      ),
    );
  }
  {
    const { c, ctx } = withTls({ mode: 'SIMPLE', credentialName: 'reviews-cert' });
    assert.equal(c.transport_socket, undefined, 'istiod does not hand credentialName secrets to every sidecar');
    assert.ok(ctx.diags.all.some((d) => d.code === 'credential-name-ignored' && d.name === 'reviews'));
  }
  {
    const { c } = withTls({ mode: 'ISTIO_MUTUAL' }, true);
    assert.equal(c.transport_socket_matches, undefined, 'explicit ISTIO_MUTUAL is not auto-detected');
    const tls = c.transport_socket.typed_config;
    assert.equal(tls.sni, `outbound_.9080_.v1_.${host('reviews')}`);
    assert.equal(tls.common_tls_context.tls_certificate_sds_secret_configs[0].name, 'default');
  }
});

test('no private key material ever reaches a cluster', () => {
  const pem = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----';
  const dr = destinationRule('default', 'reviews', {
    host: 'reviews',
    trafficPolicy: { tls: { mode: 'MUTUAL', clientCertificate: '/etc/cert.pem', privateKey: pem } },
  });
  const ctx = context(model([reviews], reviewsEps, [dr]));
  const bytes = [...buildClusters(ctx, 'sidecar').values()].map((c) => encodeMessage(TypeName.Cluster, c));
  const text = bytes.map((b) => new TextDecoder('latin1').decode(b)).join('\n');
  assert.equal(text.includes('PRIVATE KEY'), false);
  assert.ok(ctx.diags.all.some((d) => d.code === 'invalid-tls'));
});

test('proxyless gRPC clusters: EDS only, no sockets, ROUND_ROBIN or RING_HASH', () => {
  const headless = service('db', { headless: true, ports: [{ port: 5432, protocol: 'TCP' }] });
  const dr = destinationRule('default', 'reviews', {
    host: 'reviews',
    trafficPolicy: {
      loadBalancer: { simple: 'LEAST_REQUEST' },
      connectionPool: { http: { http2MaxRequests: 7 } },
      outlierDetection: { consecutive5xxErrors: 2 },
    },
    subsets: [
      {
        name: 'v1',
        labels: { version: 'v1' },
        trafficPolicy: { loadBalancer: { consistentHash: { maglev: { tableSize: 65537 } } } },
      },
    ],
  });
  const ctx = context(model([reviews, headless], reviewsEps, [dr]));
  const out = buildClusters(ctx, 'grpc');
  assert.deepEqual(
    [...out.keys()].sort(),
    [`outbound|9080|v1|${host('reviews')}`, `outbound|9080||${host('reviews')}`].sort(),
  );
  const main = dump(out.get(`outbound|9080||${host('reviews')}`));
  assert.equal(main.type, 'EDS');
  assert.equal(lbPolicy(main), 'ROUND_ROBIN', 'LEAST_REQUEST is not offered to grpc-js-xds');
  assert.deepEqual(main.eds_cluster_config.eds_config, { ads: {} });
  assert.deepEqual(main.circuit_breakers.thresholds, [{ max_requests: 7 }]);
  assert.ok(main.outlier_detection);
  assert.equal(main.transport_socket, undefined);
  assert.equal(main.transport_socket_matches, undefined);
  assert.equal(dump(out.get(`outbound|9080|v1|${host('reviews')}`)).lb_policy, 'RING_HASH');
});

test('every cluster round-trips through protobuf', () => {
  const dr = destinationRule('default', 'reviews', {
    host: 'reviews',
    trafficPolicy: { connectionPool: { http: { idleTimeoutMs: 1000 } }, outlierDetection: { consecutive5xxErrors: 1 } },
    subsets: [{ name: 'v1', labels: { version: 'v1' } }],
  });
  const svcs = [
    reviews,
    service('grpc', { ports: [{ port: 50051, protocol: 'GRPC' }] }),
    service('db', { headless: true }),
  ];
  const ctx = context(model(svcs, reviewsEps, [dr]));
  const codec = codecOf(TypeName.Cluster);
  assert.ok(codec);
  for (const generator of ['sidecar', 'grpc'] as const) {
    for (const [name, c] of buildClusters(ctx, generator)) {
      const bytes = encodeMessage(TypeName.Cluster, c);
      const decoded = decodeMessage(TypeName.Cluster, bytes);
      assert.deepEqual(
        codec.toObject(decoded, { bytes: String }),
        codec.toObject(codec.fromObject(c as Record<string, unknown>), { bytes: String }),
        name,
      );
      assert.deepEqual(encodeMessage(TypeName.Cluster, decoded), bytes, name);
    }
  }
});

test('output does not depend on input order', () => {
  const svcs = [reviews, service('ratings'), service('details', { ns: 'other' })];
  const drs = [
    destinationRule('default', 'b', { host: 'reviews', subsets: [{ name: 'v2', labels: { version: 'v2' } }] }),
    destinationRule('default', 'a', { host: 'reviews', subsets: [{ name: 'v1', labels: { version: 'v1' } }] }),
  ];
  const one = buildClusters(context(model(svcs, reviewsEps, drs)), 'sidecar');
  const two = buildClusters(context(model([...svcs].reverse(), reviewsEps, [...drs].reverse())), 'sidecar');
  assert.deepEqual([...one.keys()], [...two.keys()]);
  for (const [name, c] of one)
    assert.deepEqual(
      encodeMessage(TypeName.Cluster, c),
      encodeMessage(TypeName.Cluster, two.get(name) as Cluster),
      name,
    );
});

test('buildClusters is the union of buildServiceClusters plus the fixed clusters', () => {
  const svcs = [reviews, service('ratings')];
  const ctx = context(model(svcs, reviewsEps));
  const all = buildClusters(ctx, 'sidecar');
  const union = new Map<string, Cluster>();
  for (const s of ctx.model.services) for (const [n, c] of buildServiceClusters(ctx, s, 'sidecar')) union.set(n, c);
  assert.deepEqual([...all.keys()].filter((n) => n.startsWith('outbound|')).sort(), [...union.keys()].sort());
});

test('10k services × 3 endpoints: a cluster and an assignment per service', () => {
  const svcs = [];
  const eps: Record<string, Record<number, ReturnType<typeof endpoint>[]>> = {};
  for (let i = 0; i < 10_000; i++) {
    const s = service(`svc-${i}`, { ns: `ns-${i % 50}` });
    svcs.push(s);
    eps[s.hostname] = {
      9080: [0, 1, 2].map((j) =>
        endpoint(`10.${(i >> 8) & 255}.${i & 255}.${j}`, {
          serviceAccount: 'sa',
          podName: `svc-${i}-7d9f8b6c5d-abcd${j}`,
        }),
      ),
    };
  }
  const ctx = context(model(svcs, eps));
  const clusters = buildClusters(ctx, 'sidecar');
  const assignments = buildEndpoints(ctx);
  assert.equal(clusters.size, 10_003);
  assert.equal(assignments.size, 10_000); // speed: bench/, not a timed test
});
