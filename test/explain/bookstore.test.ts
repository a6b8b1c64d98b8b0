/**
 * `explain` on the bundled example mesh (examples/bookstore, REGISTRY_ONLY): the web sidecar's
 * calls — a 90/10 subset split, a route carrying faults, a TCP service in another namespace, a
 * port no service of that host has, and an unknown address.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { explain, type ExplainRequest } from '../../src/explain/index.js';
import { explainRequest } from '../helpers/explain-request.js';
import { compilePaths, served } from '../helpers/mesh.js';
import { EXAMPLES } from '../helpers/paths.js';

const WEB = {
  id: 'sidecar~10.244.1.10~web-v1-6c9f7d8b5-k2x7p.shop~shop.svc.cluster.local',
  metadata: { NAMESPACE: 'shop', LABELS: { app: 'web', version: 'v1' }, INSTANCE_IPS: '10.244.1.10' },
};
const resources = served(await compilePaths([join(EXAMPLES, 'bookstore')]), WEB).resources;
const call = (
  host: string,
  port: number,
  destinationIp: string | undefined,
  over: Partial<ExplainRequest> = {},
): ExplainRequest =>
  explainRequest({
    host,
    port,
    ...(destinationIp ? { destinationIp } : {}),
    sourceIp: '10.244.1.10',
    path: '/books',
    ...over,
  });

test('web → catalog: the 90/10 split of VirtualService shop/catalog, with both subsets’ endpoints', () => {
  const e = explain(resources, call('catalog', 9080, '10.96.40.11'));
  assert.equal(e.outcome, 'routed');
  assert.deepEqual(
    e.clusters.map((c) => [c.name, c.weight]),
    [
      ['outbound|9080|v1|catalog.shop.svc.cluster.local', 90],
      ['outbound|9080|v2|catalog.shop.svc.cluster.local', 10],
    ],
  );
  assert.ok(e.clusters.every((c) => c.endpoints.length > 0));
  assert.ok(e.provenance.some((p) => p.kind === 'VirtualService' && p.namespace === 'shop' && p.name === 'catalog'));
});

test('web → cart: the route’s faults are named with the fault filter', () => {
  const e = explain(resources, call('cart', 50051, '10.96.40.12', { protocol: 'h2c' }));
  assert.equal(e.outcome, 'routed');
  assert.match(
    e.httpFilters?.find((f) => f.name === 'envoy.filters.http.fault')?.perRoute ?? '',
    /aborts 1% with HTTP 503; delays 5% by 0\.5s/,
  );
});

test('web → postgres.payments: the TCP listener of its cluster IP and its tcp_proxy cluster', () => {
  const e = explain(resources, call('postgres.payments', 5432, '10.96.41.21', { protocol: 'tcp' }));
  assert.equal(e.outcome, 'tcp_proxy');
  assert.equal(e.listener?.name, '10.96.41.21_5432');
  assert.deepEqual(
    e.clusters.map((c) => c.name),
    ['outbound|5432||postgres.payments.svc.cluster.local'],
  );
});

test('REGISTRY_ONLY: a port the host has no service on is block_all (502); an unknown address is black-holed', () => {
  const wrongPort = explain(resources, call('catalog', 8080, '10.96.40.11'));
  assert.equal(wrongPort.virtualHost?.name, 'block_all');
  assert.equal(wrongPort.status, 502);
  const external = explain(
    resources,
    call('example.com', 443, '93.184.216.34', { tls: true, protocol: 'h2', alpn: ['h2'] }),
  );
  assert.equal(external.outcome, 'blackhole');
  assert.equal(external.listener?.name, 'virtualOutbound');
});
