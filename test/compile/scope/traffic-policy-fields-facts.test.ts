/**
 * DestinationRule traffic policy fields istiod translates and meshsnap once warned about as unknown:
 * `loadBalancer.warmup` (istiod's setWarmup) and `retryBudget` (applyRetryBudget; a subset's wins,
 * a port-level policy has none: util.MergeSubsetTrafficPolicy). Checked from YAML to the served clusters.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileMesh, proxy, view } from './scope-mesh.js';

type Json = Record<string, unknown>;

const rule = (spec: string) => `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: known, namespace: default}
spec:
  host: known
${spec}`;

function clusters(spec: string): { get: (name: string) => Json; diagnostics: string[] } {
  const result = compileMesh(rule(spec));
  const v = view(result, proxy('default'));
  return {
    get: (name) => v.resources.clusters.get(`${name}.default.svc.cluster.local`) as Json,
    diagnostics: result.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.code} ${d.field}`),
  };
}

const thresholds = (c: Json) => ((c.circuit_breakers as Json).thresholds as Json[])[0] as Json;

test('loadBalancer.warmup: slow start with its window, aggression and minimum weight (defaults 1 and 10 %)', () => {
  const { get, diagnostics } = clusters(`  trafficPolicy:
    loadBalancer: {simple: ROUND_ROBIN, warmup: {duration: 30s, aggression: 2, minimumPercent: 25}}
    portLevelSettings:
    - port: {number: 8080}
      loadBalancer: {warmup: {duration: 5s}}`);
  assert.deepEqual(diagnostics, []);
  assert.deepEqual((get('outbound|80||known').round_robin_lb_config as Json).slow_start_config, {
    slow_start_window: '30s',
    aggression: { default_value: 2, runtime_key: '(' },
    min_weight_percent: { value: 25 },
  });
  assert.deepEqual((get('outbound|8080||known').least_request_lb_config as Json).slow_start_config, {
    slow_start_window: '5s',
    aggression: { default_value: 1, runtime_key: '(' },
    min_weight_percent: { value: 10 },
  });
});

test("retryBudget: on the circuit breakers' thresholds (defaults 20 % and 3); a subset's wins; a port-level policy has none", () => {
  const { get, diagnostics } = clusters(`  trafficPolicy:
    retryBudget: {percent: 30}
    connectionPool: {http: {http2MaxRequests: 50}}
    portLevelSettings:
    - port: {number: 8080}
      connectionPool: {http: {http2MaxRequests: 60}}
  subsets:
  - name: v1
    labels: {version: v1}
    trafficPolicy: {retryBudget: {percent: 5, minRetryConcurrency: 7}}
  - name: v2
    labels: {version: v2}`);
  assert.deepEqual(
    diagnostics.filter((d) => !d.startsWith('subset-no-endpoints')),
    [],
  );
  const main = thresholds(get('outbound|80||known'));
  assert.deepEqual(main.retry_budget, { budget_percent: { value: 30 }, min_retry_concurrency: 3 });
  assert.equal(main.max_requests, 50, "the pool's limits stay");
  assert.deepEqual(thresholds(get('outbound|80|v1|known')).retry_budget, {
    budget_percent: { value: 5 },
    min_retry_concurrency: 7,
  });
  assert.deepEqual(thresholds(get('outbound|80|v2|known')).retry_budget, {
    budget_percent: { value: 30 },
    min_retry_concurrency: 3,
  });
  const portLevel = thresholds(get('outbound|8080||known'));
  assert.equal(portLevel.retry_budget, undefined);
  assert.equal(portLevel.max_requests, 60);
});

test('retryBudget.budgetInterval is reported as not applied', () => {
  const { diagnostics } = clusters(`  trafficPolicy: {retryBudget: {budgetInterval: 1s}}`);
  assert.deepEqual(diagnostics, ['unsupported-field spec.trafficPolicy.retryBudget.budgetInterval']);
});

test("proxyProtocol: the cluster's transport sockets wrapped in the upstream PROXY protocol socket (each auto-mTLS match, a raw buffer where none)", () => {
  const { get, diagnostics } = clusters(`  trafficPolicy: {proxyProtocol: {version: V2}}
  subsets:
  - name: v1
    labels: {version: v1}
    trafficPolicy: {tls: {mode: ISTIO_MUTUAL}, proxyProtocol: {version: V1}}`);
  assert.deepEqual(
    diagnostics.filter((d) => !d.startsWith('subset-no-endpoints')),
    [],
  );
  const wrapped = (socket: Json | undefined) => {
    assert.equal(socket?.name, 'envoy.transport_sockets.upstream_proxy_protocol');
    const config = socket?.typed_config as Json;
    return {
      version: (config.config as Json | undefined)?.version ?? 'V1',
      inner: (config.transport_socket as Json).name,
    };
  };
  // Auto mTLS: both matches wrapped.
  const main = get('outbound|80||known');
  assert.deepEqual(
    (main.transport_socket_matches as Json[]).map((m) => wrapped(m.transport_socket as Json)),
    [
      { version: 'V2', inner: 'envoy.transport_sockets.tls' },
      { version: 'V2', inner: 'envoy.transport_sockets.raw_buffer' },
    ],
  );
  // ISTIO_MUTUAL: the one transport socket, with the subset's version.
  assert.deepEqual(wrapped(get('outbound|80|v1|known').transport_socket as Json), {
    version: 'V1',
    inner: 'envoy.transport_sockets.tls',
  });
});

test('consistentHash.httpCookie.attributes: on the route hash policy cookie, as istiod', () => {
  const result = compileMesh(
    rule(`  trafficPolicy:
    loadBalancer:
      consistentHash:
        httpCookie: {name: session, ttl: 60s, attributes: [{name: SameSite, value: Strict}, {name: Secure}]}`),
  );
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info'),
    [],
  );
  const config = view(result, proxy('default')).resources.routes.get('80') as {
    virtual_hosts: { name: string; routes: { route?: { hash_policy?: Json[] } }[] }[];
  };
  const vh = config.virtual_hosts.find((h) => h.name === 'known.default.svc.cluster.local:80');
  assert.deepEqual(vh?.routes[0]?.route?.hash_policy, [
    {
      cookie: {
        name: 'session',
        ttl: '60s',
        attributes: [{ name: 'SameSite', value: 'Strict' }, { name: 'Secure' }],
      },
    },
  ]);
});
