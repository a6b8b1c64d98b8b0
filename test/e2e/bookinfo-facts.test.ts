/**
 * The facts a user checks on bookinfo, asserted directly (the golden files hold the full output).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { BOOKINFO_NODES, compileFiles, served } from '../helpers/mesh.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const withScenario = (...files: string[]) =>
  compileFiles([BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml'), ...files.map((f) => join(NET, f))]);

type J = Record<string, unknown>;
const arr = (v: unknown): J[] => (Array.isArray(v) ? (v as J[]) : []);

function vhost(routes: Map<string, J>, routeConfig: string, name: string): J {
  const rc = routes.get(routeConfig);
  assert.ok(rc, `route config ${routeConfig} is served`);
  const vh = arr(rc.virtual_hosts).find((v) => v.name === name);
  assert.ok(vh, `virtual host ${name} in route config ${routeConfig}`);
  return vh;
}

test('reviews-50-v3: the productpage sidecar splits reviews 50/50 between v1 and v3', () => {
  const result = withScenario('virtual-service-reviews-50-v3.yaml');
  const { classId, resources } = served(result, BOOKINFO_NODES.productpage);
  assert.equal(classId, 'sidecar/default/productpage');
  const vh = vhost(resources.routes, '9080', 'reviews.default.svc.cluster.local:9080');
  const routes = arr(vh.routes);
  assert.equal(routes.length, 1);
  const weighted = arr(((routes[0]?.route as J).weighted_clusters as J).clusters);
  assert.deepEqual(
    weighted.map((c) => [c.name, c.weight]),
    [
      ['outbound|9080|v1|reviews.default.svc.cluster.local', 50],
      ['outbound|9080|v3|reviews.default.svc.cluster.local', 50],
    ],
  );
  // Both subset clusters and their endpoints exist, each with the one matching pod.
  for (const [subset, ip] of [
    ['v1', '10.244.0.13'],
    ['v3', '10.244.0.15'],
  ] as const) {
    const name = `outbound|9080|${subset}|reviews.default.svc.cluster.local`;
    assert.ok(resources.clusters.has(name), `${name} is served`);
    const cla = resources.endpoints.get(name);
    const ips = arr(cla?.endpoints).flatMap((l) =>
      arr(l.lb_endpoints).map((e) => (((e.endpoint as J).address as J).socket_address as J).address),
    );
    assert.deepEqual(ips, [ip]);
  }
  // Provenance: the route says which VirtualService made it.
  assert.equal(
    (((routes[0]?.metadata as J).filter_metadata as J).istio as J).config,
    '/apis/networking.istio.io/v1/namespaces/default/virtual-service/reviews',
  );
});

test('reviews-jason-v2-v3: the end-user header match comes first and sends jason to v2', () => {
  const { resources } = served(withScenario('virtual-service-reviews-jason-v2-v3.yaml'), BOOKINFO_NODES.productpage);
  const routes = arr(vhost(resources.routes, '9080', 'reviews.default.svc.cluster.local:9080').routes);
  assert.equal(routes.length, 2);
  const headers = arr((routes[0]?.match as J).headers);
  assert.equal(headers[0]?.name, 'end-user');
  assert.equal(((headers[0]?.string_match as J) ?? {}).exact, 'jason');
  assert.equal((routes[0]?.route as J).cluster, 'outbound|9080|v2|reviews.default.svc.cluster.local');
  assert.equal((routes[1]?.route as J).cluster, 'outbound|9080|v3|reviews.default.svc.cluster.local');
});

test('ratings-test-abort: jason gets a 500 fault on ratings, everyone else goes to v1', () => {
  const { resources } = served(withScenario('virtual-service-ratings-test-abort.yaml'), BOOKINFO_NODES.productpage);
  const routes = arr(vhost(resources.routes, '9080', 'ratings.default.svc.cluster.local:9080').routes);
  const fault = ((routes[0]?.typed_per_filter_config as J)['envoy.filters.http.fault'] as J) ?? {};
  assert.equal(fault['@type'], 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault');
  assert.equal((fault.abort as J).http_status, 500);
  assert.equal((routes[1]?.route as J).cluster, 'outbound|9080|v1|ratings.default.svc.cluster.local');
});

test('without a VirtualService a service gets istiod’s default route and EDS cluster', () => {
  const { resources } = served(compileFiles([BOOKINFO_STATE]), BOOKINFO_NODES.productpage);
  const routes = arr(vhost(resources.routes, '9080', 'details.default.svc.cluster.local:9080').routes);
  assert.equal(routes[0]?.name, 'default');
  assert.equal((routes[0]?.route as J).cluster, 'outbound|9080||details.default.svc.cluster.local');
  const rc = resources.routes.get('9080') as J;
  assert.equal(arr(rc.virtual_hosts).at(-1)?.name, 'allow_any');
  const cluster = resources.clusters.get('outbound|9080||details.default.svc.cluster.local') as J;
  assert.equal(cluster.type, 'EDS');
  for (const name of ['BlackHoleCluster', 'PassthroughCluster', 'InboundPassthroughCluster', 'inbound|9080||'])
    assert.ok(resources.clusters.has(name), name);
  for (const name of ['virtualOutbound', 'virtualInbound', '0.0.0.0_9080'])
    assert.ok(resources.listeners.has(name), name);
});

test('no private key material in any stored object, and ISTIO_MUTUAL uses SDS secrets', () => {
  const result = compileFiles([BOOKINFO_STATE, join(NET, 'destination-rule-all-mtls.yaml')]);
  const text = new TextDecoder('latin1');
  for (const [digest, bytes] of result.snapshot.objects)
    assert.ok(!/PRIVATE KEY/.test(text.decode(bytes)), `object ${digest} holds key material`);
  const { resources } = served(result, BOOKINFO_NODES.productpage);
  const cluster = resources.clusters.get('outbound|9080|v1|reviews.default.svc.cluster.local') as J;
  const tls = JSON.stringify(cluster.transport_socket ?? cluster.transport_socket_matches);
  assert.match(tls, /"name":"default"/);
  assert.match(tls, /"name":"ROOTCA"/);
  assert.match(tls, /outbound_\.9080_\.v1_\.reviews\.default\.svc\.cluster\.local/);
});
