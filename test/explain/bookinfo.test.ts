/**
 * `explain` on bookinfo (the owners' fixtures): the questions of issue 18, answered from the
 * productpage sidecar's compiled resources.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { explain, type ExplainRequest, type ProxyResources } from '../../src/explain/index.js';
import { explainRequest } from '../helpers/explain-request.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { compileTexts } from '../../src/pipeline.js';
import { BOOKINFO_NODES, served } from '../helpers/mesh.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const NETWORKING = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const file = (path: string) => ({ file: path, text: readFileSync(path, 'utf8') });
const REGISTRY_ONLY = {
  file: 'mesh.yaml',
  text: 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: istio, namespace: istio-system }\ndata:\n  mesh: |\n    outboundTrafficPolicy:\n      mode: REGISTRY_ONLY\n',
};

function productpage(extra: { file: string; text: string }[] = []): ProxyResources {
  const result = compileTexts(
    [
      file(BOOKINFO_STATE),
      file(join(NETWORKING, 'destination-rule-all.yaml')),
      file(join(NETWORKING, 'virtual-service-reviews-test-v2.yaml')),
      ...extra,
    ],
    { hasher: nodeSha256Hex },
  );
  return served(result, BOOKINFO_NODES.productpage).resources;
}

/** A request as `meshsnap explain` builds it for productpage (its pod IP is the source). */
const request = (over: Partial<ExplainRequest>): ExplainRequest =>
  explainRequest({
    host: 'reviews.default.svc.cluster.local',
    port: 9080,
    destinationIp: '10.96.10.3',
    sourceIp: '10.244.0.16',
    path: '/reviews/0',
    ...over,
  });

const resources = productpage();
const REVIEWS_VS = {
  kind: 'VirtualService',
  namespace: 'default',
  name: 'reviews',
  config: '/apis/networking.istio.io/v1/namespaces/default/virtual-service/reviews',
};

test('productpage → reviews with end-user: jason reaches v2 through VirtualService reviews', () => {
  const e = explain(resources, request({ headers: { 'end-user': 'jason' } }));
  assert.equal(e.outcome, 'routed');
  assert.equal(e.listener?.name, '0.0.0.0_9080');
  assert.match(e.listener?.why.join('\n') ?? '', /virtualOutbound/);
  assert.match(e.listener?.why.join('\n') ?? '', /use_original_dst/);
  assert.deepEqual(e.filterChain?.match, {
    transport_protocol: 'raw_buffer',
    application_protocols: ['http/1.1', 'h2c'],
  });
  assert.equal(e.routeConfig?.name, '9080');
  assert.equal(e.routeConfig?.source, 'rds');
  assert.equal(e.virtualHost?.name, 'reviews.default.svc.cluster.local:9080');
  assert.equal(e.virtualHost?.matchedDomain, 'reviews.default.svc.cluster.local');
  assert.equal(e.route?.index, 0);
  assert.deepEqual(e.route?.provenance, [REVIEWS_VS]);
  assert.deepEqual(
    e.clusters.map((c) => [c.name, c.weight]),
    [['outbound|9080|v2|reviews.default.svc.cluster.local', 100]],
  );
  assert.deepEqual(
    e.clusters[0]?.endpoints.map((p) => `${p.address}:${String(p.port)}`),
    ['10.244.0.14:9080'],
  );
  assert.ok(e.provenance.some((p) => p.kind === 'VirtualService' && p.name === 'reviews'));
  assert.ok(e.provenance.some((p) => p.kind === 'DestinationRule' && p.name === 'reviews'));
  assert.deepEqual(e.skippedRoutes, []);
  assert.deepEqual(
    e.httpFilters?.map((f) => f.name),
    ['envoy.filters.http.fault', 'envoy.filters.http.cors', 'envoy.filters.http.router'],
  );
});

test('without the header: v1, and the jason route is named as skipped with its reason', () => {
  const e = explain(resources, request({}));
  assert.equal(e.outcome, 'routed');
  assert.equal(e.clusters[0]?.name, 'outbound|9080|v1|reviews.default.svc.cluster.local');
  assert.equal(e.route?.index, 1);
  assert.equal(e.skippedRoutes?.length, 1);
  assert.match(e.skippedRoutes?.[0]?.reason ?? '', /header end-user exact "jason" \(request: absent\) does not hold/);
  // The short name resolves to the same virtual host (istiod's domains), and so does a header value that differs.
  const short = explain(resources, request({ host: 'reviews', headers: { 'end-user': 'mike' } }));
  assert.equal(short.virtualHost?.matchedDomain, 'reviews');
  assert.equal(short.clusters[0]?.name, 'outbound|9080|v1|reviews.default.svc.cluster.local');
});

test('a path no route matches: 404, the virtual host named', () => {
  // ratings has istiod's default route (prefix /); a VirtualService with only an exact path leaves others unmatched.
  const vs = {
    file: 'vs.yaml',
    text: `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: details, namespace: default }
spec:
  hosts: [details]
  http:
  - match: [{ uri: { exact: /details/0 } }]
    route: [{ destination: { host: details, subset: v1 } }]
`,
  };
  const r = productpage([vs]);
  const e = explain(r, request({ host: 'details', destinationIp: '10.96.10.1', path: '/nope' }));
  assert.equal(e.outcome, 'not_found');
  assert.equal(e.status, 404);
  assert.equal(e.virtualHost?.name, 'details.default.svc.cluster.local:9080');
  assert.match(e.summary, /no route of virtual host details\.default\.svc\.cluster\.local:9080/);
  assert.match(e.skippedRoutes?.[0]?.reason ?? '', /path "\/details\/0" does not match "\/nope"/);
  const ok = explain(r, request({ host: 'details', destinationIp: '10.96.10.1', path: '/details/0?x=1' }));
  assert.equal(ok.clusters[0]?.name, 'outbound|9080|v1|details.default.svc.cluster.local');
});

test('a TCP port: the tcp_proxy cluster of the service listener', () => {
  const e = explain(
    resources,
    request({
      host: 'istio-ingressgateway.istio-system.svc.cluster.local',
      destinationIp: '10.96.20.1',
      port: 443,
      protocol: 'tcp',
      path: '/',
    }),
  );
  assert.equal(e.outcome, 'tcp_proxy');
  assert.equal(e.network, 'tcp');
  assert.equal(e.listener?.name, '10.96.20.1_443');
  assert.match(e.listener?.why.join('\n') ?? '', /bound to exactly the original destination 10\.96\.20\.1:443/);
  assert.deepEqual(
    e.clusters.map((c) => c.name),
    ['outbound|443||istio-ingressgateway.istio-system.svc.cluster.local'],
  );
  assert.ok((e.clusters[0]?.endpoints.length ?? 0) > 0);
});

test('an unknown host: PassthroughCluster under ALLOW_ANY, BlackHoleCluster under REGISTRY_ONLY', () => {
  const tcp = request({
    host: 'www.example.com',
    destinationIp: '93.184.216.34',
    port: 443,
    protocol: 'tcp',
    path: '/',
  });
  const open = explain(resources, tcp);
  assert.equal(open.outcome, 'passthrough');
  assert.equal(open.listener?.name, 'virtualOutbound');
  assert.deepEqual(
    open.clusters.map((c) => c.name),
    ['PassthroughCluster'],
  );

  const closed = productpage([REGISTRY_ONLY]);
  const blocked = explain(closed, tcp);
  assert.equal(blocked.outcome, 'blackhole');
  assert.equal(blocked.listener?.name, 'virtualOutbound');
  assert.match(blocked.listener?.why.join('\n') ?? '', /virtualOutbound keeps the connection/);
  assert.deepEqual(
    blocked.clusters.map((c) => c.name),
    ['BlackHoleCluster'],
  );

  // HTTP on a port with a wildcard listener: the route config's catch-all virtual host, which
  // istiod makes a direct 502 under REGISTRY_ONLY (and a route to PassthroughCluster otherwise).
  const http = explain(closed, request({ host: 'www.example.com', destinationIp: undefined, port: 80 }));
  assert.equal(http.outcome, 'direct_response');
  assert.equal(http.status, 502);
  assert.equal(http.virtualHost?.name, 'block_all');
  assert.equal(http.virtualHost?.matchedDomain, '*');
  const httpOpen = explain(resources, request({ host: 'www.example.com', destinationIp: undefined, port: 80 }));
  assert.equal(httpOpen.virtualHost?.name, 'allow_any');
  assert.deepEqual(
    httpOpen.clusters.map((c) => c.name),
    ['PassthroughCluster'],
  );
});

test('inbound: a call into productpage goes through virtualInbound to inbound|9080||', () => {
  const e = explain(
    resources,
    request({
      direction: 'inbound',
      host: 'productpage.default.svc.cluster.local',
      destinationIp: '10.244.0.16',
      path: '/productpage',
    }),
  );
  assert.equal(e.listener?.name, 'virtualInbound');
  assert.equal(e.filterChain?.name, '0.0.0.0_9080');
  assert.deepEqual(e.filterChain?.match, { destination_port: 9080, transport_protocol: 'raw_buffer' });
  assert.deepEqual(
    e.clusters.map((c) => c.name),
    ['inbound|9080||'],
  );
  const mtls = explain(
    resources,
    request({
      direction: 'inbound',
      host: 'productpage.default.svc.cluster.local',
      destinationIp: '10.244.0.16',
      tls: true,
      alpn: ['istio-http/1.1', 'istio'],
      path: '/productpage',
    }),
  );
  assert.equal(mtls.filterChain?.match.transport_protocol, 'tls');
  assert.deepEqual(
    mtls.clusters.map((c) => c.name),
    ['inbound|9080||'],
  );
});

test('a fault on the matched route: routed, and the fault filter that aborts it is named', () => {
  const r = productpage([file(join(NETWORKING, 'virtual-service-ratings-test-abort.yaml'))]);
  const jason = explain(
    r,
    request({ host: 'ratings', destinationIp: '10.96.10.2', path: '/ratings/0', headers: { 'end-user': 'jason' } }),
  );
  assert.equal(jason.outcome, 'routed');
  assert.equal(jason.clusters[0]?.name, 'outbound|9080|v1|ratings.default.svc.cluster.local');
  const fault = jason.httpFilters?.find((f) => f.name === 'envoy.filters.http.fault');
  assert.equal(fault?.perRoute, 'aborts 100% with HTTP 500');
  assert.match(jason.summary, /; the fault filter aborts 100% with HTTP 500$/);
  const others = explain(r, request({ host: 'ratings', destinationIp: '10.96.10.2', path: '/ratings/0' }));
  assert.equal(others.httpFilters?.find((f) => f.name === 'envoy.filters.http.fault')?.perRoute, undefined);
  assert.doesNotMatch(others.summary, /fault filter/);
});

test('a Sidecar egress listener bound to 127.0.0.1:9080 (captureMode NONE): the app calls it directly, and it routes reviews only', () => {
  const sidecar = {
    file: 'sidecar.yaml',
    text: `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: { name: default, namespace: default }
spec:
  egress:
  - port: { number: 9080, protocol: HTTP, name: egresshttp }
    bind: 127.0.0.1
    captureMode: NONE
    hosts: ["./reviews.default.svc.cluster.local"]
  - hosts: ["./*", "istio-system/*"]
`,
  };
  const r = productpage([sidecar]);
  const e = explain(r, request({ host: 'reviews', destinationIp: '127.0.0.1', headers: { 'end-user': 'jason' } }));
  assert.equal(e.outcome, 'routed');
  assert.equal(e.listener?.name, '127.0.0.1_9080');
  assert.match(e.listener?.why[0] ?? '', /does not redirect outbound traffic to the loopback address 127\.0\.0\.1/);
  assert.equal(e.routeConfig?.name, '9080');
  assert.equal(e.virtualHost?.name, 'reviews.default.svc.cluster.local:9080');
  assert.equal(e.clusters[0]?.name, 'outbound|9080|v2|reviews.default.svc.cluster.local');
  // Route config 9080 is that listener's: ratings (another host on 9080) has no virtual host there,
  // so its name falls to allow_any even through the captured 0.0.0.0_9080.
  const ratings = explain(r, request({ host: 'ratings.default.svc.cluster.local', destinationIp: '10.96.10.2' }));
  assert.equal(ratings.listener?.name, '0.0.0.0_9080');
  assert.equal(ratings.virtualHost?.name, 'allow_any');
  assert.equal(ratings.clusters[0]?.name, 'PassthroughCluster');
});
