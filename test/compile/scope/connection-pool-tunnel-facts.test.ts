/**
 * DestinationRule and Sidecar fields istiod translates and meshsnap once warned about as unknown or
 * ignored, checked from YAML to what a sidecar is served:
 * - `connectionPool.http.http2KeepAlive` (istiod's applyConnectionPool: PINGs on HTTP/2 upstreams only);
 * - `loadBalancer.zoneAwareLbSetting` (ZoneAwareLBSettings.ApplyToCluster);
 * - `tunnel` (tunnelingconfig.Apply: a named subset's own tunnel, the rule's for weighted routes);
 * - the inbound cluster's whole connection pool, a Sidecar's `inboundConnectionPool` and
 *   `ingress[].connectionPool` over the rule's (buildInboundCluster, InboundConnectionPoolForPort);
 * - a gateway's AUTO_PASSTHROUGH chains: the rule's tcp_proxy settings without its tunnel;
 * - `outlierDetectionHttpErrorCodes` and `backendUtilization`, reported as not applied.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileGateway, gatewayYaml, INGRESS_NODE } from '../../helpers/gateway-sim.js';
import { served } from '../../helpers/mesh.js';
import { compileMesh, proxy, sidecar, view, WEB } from './scope-mesh.js';

type Json = Record<string, unknown>;

const rule = (host: string, spec: string, name = host) => `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: ${name}, namespace: default}
spec:
  host: ${host}
${spec}`;

function compiled(...docs: string[]) {
  const result = compileMesh(...docs);
  const v = view(result, proxy('default', { app: 'web' }));
  return {
    cluster: (name: string) => v.resources.clusters.get(name) as Json,
    listener: (name: string) => v.resources.listeners.get(name) as Json,
    diagnostics: result.diagnostics
      .filter((d) => d.severity !== 'info' && d.code !== 'subset-no-endpoints')
      .map((d) => `${d.severity} ${d.code} ${d.field}`),
  };
}

const httpOptions = (c: Json): Json | undefined =>
  (c.typed_extension_protocol_options as Json | undefined)?.[
    'envoy.extensions.upstreams.http.v3.HttpProtocolOptions'
  ] as Json | undefined;
const h2Options = (c: Json): Json | undefined =>
  ((httpOptions(c)?.explicit_http_config as Json | undefined)?.http2_protocol_options as Json | undefined) ?? undefined;

const GRPC_SERVICE = `apiVersion: v1
kind: Service
metadata: {name: pinger, namespace: default}
spec:
  clusterIP: 2.0.0.9
  ports: [{port: 7070, name: grpc}, {port: 7080, name: http}, {port: 7090, name: grpc-web}]`;

test('http2KeepAlive: connection_keepalive on HTTP/2 upstreams (gRPC, gRPC-Web, upgraded HTTP), none on HTTP/1.1', () => {
  const { cluster, diagnostics } = compiled(
    GRPC_SERVICE,
    rule(
      'pinger',
      `  trafficPolicy:
    connectionPool: {http: {http2KeepAlive: {interval: 30s, timeout: 5s}}}
    portLevelSettings:
    - port: {number: 7080}
      connectionPool: {http: {h2UpgradePolicy: UPGRADE, http2KeepAlive: {interval: 1m, timeout: 100ms}}}`,
    ),
  );
  assert.deepEqual(diagnostics, []);
  const host = 'pinger.default.svc.cluster.local';
  assert.deepEqual(h2Options(cluster(`outbound|7070||${host}`))?.connection_keepalive, {
    interval: '30s',
    timeout: '5s',
  });
  // gRPC-Web is HTTP/2 upstream too (istiod's IsHTTP2).
  assert.deepEqual(h2Options(cluster(`outbound|7090||${host}`))?.connection_keepalive, {
    interval: '30s',
    timeout: '5s',
  });
  assert.deepEqual(h2Options(cluster(`outbound|7080||${host}`))?.connection_keepalive, {
    interval: '60s',
    timeout: '0.1s',
  });
  // An HTTP/1.1 upstream: istiod still writes the protocol options (explicit HTTP/1.1), without PINGs.
  const { cluster: plain } = compiled(
    rule('known', `  trafficPolicy: {connectionPool: {http: {http2KeepAlive: {interval: 30s, timeout: 5s}}}}`),
  );
  const opts = httpOptions(plain('outbound|80||known.default.svc.cluster.local'));
  assert.deepEqual(opts?.explicit_http_config, { http_protocol_options: {} });
  assert.equal(JSON.stringify(opts).includes('keepalive'), false);
});

test('http2KeepAlive: both durations required, at least 1ms', () => {
  const { diagnostics } = compiled(
    rule('known', `  trafficPolicy: {connectionPool: {http: {http2KeepAlive: {interval: 0s}}}}`),
  );
  assert.deepEqual(diagnostics.sort(), [
    'error invalid-field spec.trafficPolicy.connectionPool.http.http2KeepAlive.interval',
    'error missing-field spec.trafficPolicy.connectionPool.http.http2KeepAlive.timeout',
  ]);
});

test('zoneAwareLbSetting: zone_aware_lb_config with the minimum cluster size; disabled, routing at 0 %', () => {
  const { cluster, diagnostics } = compiled(
    rule(
      'known',
      `  trafficPolicy:
    loadBalancer: {zoneAwareLbSetting: {minClusterSize: 3}}
    portLevelSettings:
    - port: {number: 8080}
      loadBalancer: {zoneAwareLbSetting: {enabled: false}}`,
    ),
  );
  assert.deepEqual(diagnostics, []);
  const lb = (name: string) => (cluster(name).common_lb_config as Json).zone_aware_lb_config as Json;
  assert.deepEqual(lb('outbound|80||known.default.svc.cluster.local'), { min_cluster_size: '3' });
  const off = lb('outbound|8080||known.default.svc.cluster.local');
  assert.ok(off.routing_enabled !== undefined, 'routing_enabled is written, at 0 %');
  assert.equal((off.routing_enabled as Json).value ?? 0, 0);
});

test('zoneAwareLbSetting: validated as istiod (one of locality/zone-aware, region-level failover only)', () => {
  const { diagnostics } = compiled(
    rule(
      'known',
      `  trafficPolicy:
    outlierDetection: {consecutive5xxErrors: 1}
    loadBalancer:
      localityLbSetting: {enabled: true}
      zoneAwareLbSetting:
        failover: [{from: us-east, to: us-east}, {from: us-east/a, to: eu}]
        failoverPriority: [topology.kubernetes.io/zone, my-label]`,
    ),
  );
  assert.deepEqual(diagnostics.sort(), [
    'error invalid-field spec.trafficPolicy.loadBalancer.zoneAwareLbSetting',
    'error invalid-field spec.trafficPolicy.loadBalancer.zoneAwareLbSetting.failoverPriority[0]',
    'error invalid-field spec.trafficPolicy.loadBalancer.zoneAwareLbSetting.failover[0]',
    'error invalid-field spec.trafficPolicy.loadBalancer.zoneAwareLbSetting.failover[1]',
  ]);
});

const TCP_SERVICE = `apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec:
  clusterIP: 2.0.0.8
  ports: [{port: 5432, name: tcp-pg}]`;

const tcpProxyOf = (l: Json): Json => {
  const chains = l.filter_chains as Json[];
  const filters = (chains[chains.length - 1] as Json).filters as Json[];
  return (filters.find((f) => f.name === 'envoy.filters.network.tcp_proxy') as Json).typed_config as Json;
};

test('tunnel: the tcp_proxy tunnels to target host:port (POST when asked); a named subset takes its own tunnel only', () => {
  const tunnelRule = rule(
    'db',
    `  trafficPolicy: {tunnel: {targetHost: egress.example.com, targetPort: 8443}}
  subsets:
  - name: post
    labels: {v: post}
    trafficPolicy: {tunnel: {protocol: POST, targetHost: 'fd00::1', targetPort: 443}}
  - name: plain
    labels: {v: plain}`,
  );
  const route = (destinations: string) => `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db, namespace: default}
spec: {hosts: [db], tcp: [{route: ${destinations}}]}`;
  const listener = (...docs: string[]) => compiled(TCP_SERVICE, tunnelRule, ...docs).listener('2.0.0.8_5432');

  assert.deepEqual(tcpProxyOf(listener()).tunneling_config, { hostname: 'egress.example.com:8443' });
  assert.deepEqual(tcpProxyOf(listener(route('[{destination: {host: db, subset: post}}]'))).tunneling_config, {
    hostname: '[fd00::1]:443',
    use_post: true,
  });
  // istiod does not fall back to the rule's tunnel for a subset that has none.
  assert.equal(tcpProxyOf(listener(route('[{destination: {host: db, subset: plain}}]'))).tunneling_config, undefined);
  // Weighted: the rule's tunnel, whatever the subsets say.
  assert.deepEqual(
    tcpProxyOf(
      listener(
        route(
          '[{destination: {host: db, subset: post}, weight: 50}, {destination: {host: db, subset: plain}, weight: 50}]',
        ),
      ),
    ).tunneling_config,
    { hostname: 'egress.example.com:8443' },
  );
});

test('tunnel: validated as istiod (CONNECT or POST, an FQDN or IP, a port; not with proxyProtocol)', () => {
  const { diagnostics } = compiled(
    TCP_SERVICE,
    rule('db', `  trafficPolicy: {tunnel: {protocol: GET, targetHost: 'bad host', targetPort: 0}}`),
    rule(
      'db',
      `  trafficPolicy: {proxyProtocol: {version: V1}, tunnel: {targetHost: 10.0.0.1, targetPort: 80}}`,
      'db-2',
    ),
  );
  assert.deepEqual(diagnostics.sort(), [
    'error invalid-field spec.trafficPolicy.tunnel',
    'error invalid-field spec.trafficPolicy.tunnel.protocol',
    'error invalid-field spec.trafficPolicy.tunnel.targetHost',
    'error invalid-field spec.trafficPolicy.tunnel.targetPort',
  ]);
});

test("inbound cluster: the rule's whole connection pool (timeouts, keepalive, limits), the sniffed port takes the client's protocol", () => {
  const { cluster, diagnostics } = compiled(
    WEB,
    rule(
      'web',
      `  trafficPolicy:
    retryBudget: {percent: 10}
    connectionPool:
      tcp: {maxConnections: 7, connectTimeout: 2s, tcpKeepalive: {time: 60s}, maxConnectionDuration: 1h}
      http: {idleTimeout: 30s, maxRequestsPerConnection: 3}`,
    ),
  );
  assert.deepEqual(diagnostics, []);
  const c = cluster('inbound|9080||');
  assert.equal(c.connect_timeout, '2s');
  const t = ((c.circuit_breakers as Json).thresholds as Json[])[0] as Json;
  assert.equal(t.max_connections, 7);
  assert.deepEqual(t.retry_budget, { budget_percent: { value: 10 }, min_retry_concurrency: 3 });
  assert.deepEqual(c.upstream_connection_options, { tcp_keepalive: { keepalive_time: 60 } });
  const opts = httpOptions(c) as Json;
  assert.deepEqual(opts.common_http_protocol_options, {
    idle_timeout: '30s',
    max_connection_duration: '3600s',
    max_requests_per_connection: 3,
  });
  assert.deepEqual(opts.explicit_http_config, { http_protocol_options: {} });
  // Port 81 names no protocol: the inbound side sniffs it, so the cluster speaks what the client spoke.
  assert.ok((httpOptions(cluster('inbound|9081||')) as Json).use_downstream_protocol_config);
});

test("Sidecar inboundConnectionPool over the rule's pool; an ingress listener's own pool over both for its port", () => {
  const limits = (c: Json) => ((c.circuit_breakers as Json).thresholds as Json[])[0] as Json;
  const pool = `  trafficPolicy: {connectionPool: {tcp: {maxConnections: 7}}}`;
  const withSidecar = compiled(
    WEB,
    rule('web', pool),
    sidecar('default', '{inboundConnectionPool: {tcp: {maxConnections: 11}}}'),
  );
  assert.deepEqual(withSidecar.diagnostics, []);
  assert.equal(limits(withSidecar.cluster('inbound|9080||')).max_connections, 11);

  const withIngress = compiled(
    WEB,
    rule('web', pool),
    sidecar(
      'default',
      `{inboundConnectionPool: {tcp: {maxConnections: 11}}, ingress: [
        {port: {number: 9080, protocol: HTTP, name: http}, defaultEndpoint: '127.0.0.1:9080', connectionPool: {http: {http1MaxPendingRequests: 5}}},
        {port: {number: 9081, protocol: TCP, name: tcp}, defaultEndpoint: '127.0.0.1:9081'}]}`,
    ),
  );
  assert.deepEqual(withIngress.diagnostics, []);
  const own = limits(withIngress.cluster('inbound|9080||'));
  assert.equal(own.max_pending_requests, 5);
  assert.equal(
    own.max_connections,
    4294967295,
    "the listener's pool replaces the others, defaults for what it leaves out",
  );
  assert.equal(limits(withIngress.cluster('inbound|9081||')).max_connections, 11);
  // Without a Sidecar the rule's pool applies.
  assert.equal(limits(compiled(WEB, rule('web', pool)).cluster('inbound|9080||')).max_connections, 7);
});

test('a Sidecar connection pool is validated as a DestinationRule one (istiod: validateConnectionPool)', () => {
  const { diagnostics } = compiled(
    WEB,
    sidecar(
      'default',
      '{inboundConnectionPool: {}, ingress: [{port: {number: 9080, protocol: HTTP, name: http}, connectionPool: {http: {idleTimeout: soon}}}]}',
    ),
  );
  assert.deepEqual(diagnostics.sort(), [
    'error invalid-field spec.ingress[0].connectionPool.http.idleTimeout',
    'error missing-field spec.inboundConnectionPool',
  ]);
});

test('outlierDetectionHttpErrorCodes and backendUtilization are reported as not applied; codes are checked', () => {
  const { diagnostics } = compiled(
    rule(
      'known',
      `  trafficPolicy:
    outlierDetection: {consecutive5xxErrors: 2, outlierDetectionHttpErrorCodes: [503, 429]}
    loadBalancer: {backendUtilization: {errorUtilizationPenaltyPercent: 10}}`,
    ),
    rule('alt-known', `  trafficPolicy: {outlierDetection: {outlierDetectionHttpErrorCodes: [99]}}`),
  );
  assert.deepEqual(diagnostics.sort(), [
    'error invalid-field spec.trafficPolicy.outlierDetection.outlierDetectionHttpErrorCodes[0]',
    'warning unsupported-field spec.trafficPolicy.loadBalancer.backendUtilization',
    'warning unsupported-field spec.trafficPolicy.outlierDetection.outlierDetectionHttpErrorCodes',
  ]);
});

test("AUTO_PASSTHROUGH: the rule's tcp_proxy settings apply per SNI cluster, its tunnel does not (tunnelingconfig.Skip)", () => {
  const r = compileGateway(
    gatewayYaml(
      'eastwest',
      'istio-system',
      `port: {number: 15443, name: tls, protocol: TLS}\nhosts: ['*.default.svc.cluster.local']\ntls: {mode: AUTO_PASSTHROUGH}`,
    ) +
      rule(
        'productpage',
        `  trafficPolicy:
    connectionPool: {tcp: {idleTimeout: 90s}}
    tunnel: {targetHost: egress.example.com, targetPort: 8443}
  subsets:
  - name: v1
    labels: {version: v1}
    trafficPolicy: {loadBalancer: {consistentHash: {useSourceIp: true}}}`,
      ),
  );
  const listener = served(r, INGRESS_NODE).resources.listeners.get('0.0.0.0_15443') as Json;
  const proxyFor = (sni: string) => {
    const chain = (listener.filter_chains as Json[]).find((c) =>
      ((c.filter_chain_match as Json).server_names as string[]).includes(sni),
    ) as Json;
    return ((chain.filters as Json[])[0] as Json).typed_config as Json;
  };
  const main = proxyFor('outbound_.9080_._.productpage.default.svc.cluster.local');
  assert.equal(main.idle_timeout, '90s');
  assert.equal(main.tunneling_config, undefined);
  assert.equal(main.hash_policy, undefined);
  const v1 = proxyFor('outbound_.9080_.v1_.productpage.default.svc.cluster.local');
  assert.equal(v1.idle_timeout, '90s');
  assert.deepEqual(v1.hash_policy, [{ source_ip: {} }]);
});

test('tls.caCrl: the CRL file on the upstream validation context of file-based SIMPLE/MUTUAL origination (istiod constructUpstreamTLS)', () => {
  const { cluster, diagnostics } = compiled(
    rule('known', `  trafficPolicy: {tls: {mode: SIMPLE, caCertificates: /etc/ca.pem, caCrl: /etc/crl.pem}}`),
  );
  assert.deepEqual(diagnostics, []);
  const socket = cluster('outbound|80||known.default.svc.cluster.local').transport_socket as Json;
  const common = (socket.typed_config as Json).common_tls_context as Json;
  const validation = (common.combined_validation_context as Json).default_validation_context as Json;
  assert.deepEqual(validation.crl, { filename: '/etc/crl.pem' });
});

test('a Sidecar ingress pool with HTTP settings on a non-HTTP port is warned about, as istiod', () => {
  const { diagnostics } = compiled(
    WEB,
    sidecar(
      'default',
      `{ingress: [{port: {number: 9081, protocol: TCP, name: tcp}, defaultEndpoint: '127.0.0.1:9081', connectionPool: {http: {idleTimeout: 5s}}}]}`,
    ),
  );
  assert.deepEqual(diagnostics, ['warning ignored-field spec.ingress[0].connectionPool.http']);
});
