/** Per-type services, node placement errors, the stream cap and draining. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { XDS_TYPE_URL } from '../../src/xds/type-urls.js';
import { bookinfo } from './fixtures.js';
import { NODE, names, startHarness } from './protocol-client.js';

const T = { timeout: 10_000 };
const DETAILS_V1 = 'outbound|9080|v1|details.default.svc.cluster.local';

test('per-type services: StreamClusters (type_url may be empty) and DeltaEndpoints', T, async (t) => {
  const h = await startHarness();
  t.after(() => h.close());
  h.xds.setSnapshot(bookinfo());
  const cds = h.open('StreamClusters', 'envoy.service.cluster.v3.ClusterDiscoveryService');
  cds.send({ node: NODE.productpage });
  const r = await cds.next();
  assert.equal(r.type_url, XDS_TYPE_URL.clusters);
  assert.equal(r.resources.length, bookinfo().resources('sidecar/default/productpage', 'clusters')?.size);
  const eds = h.open('DeltaEndpoints', 'envoy.service.endpoint.v3.EndpointDiscoveryService');
  eds.send({ node: NODE.productpage, type_url: XDS_TYPE_URL.endpoints, resource_names_subscribe: [DETAILS_V1] });
  const d = await eds.next();
  assert.deepEqual(names(d, true), [DETAILS_V1]);
  // The wrong type on a per-type service is an error, not silence.
  const lds = h.open('StreamListeners', 'envoy.service.listener.v3.ListenerDiscoveryService');
  lds.send({ node: NODE.productpage, type_url: XDS_TYPE_URL.clusters });
  assert.equal((await lds.status).code, grpc.status.INVALID_ARGUMENT);
});

test('unknown namespace → NOT_FOUND, malformed node → INVALID_ARGUMENT, quickly and with the reason', T, async (t) => {
  const h = await startHarness();
  t.after(() => h.close());
  h.xds.setSnapshot(bookinfo());
  const started = Date.now();
  const a = h.open();
  a.send({ node: NODE.unknownNs, type_url: XDS_TYPE_URL.clusters });
  const sa = await a.status;
  assert.equal(sa.code, grpc.status.NOT_FOUND);
  assert.match(sa.details, /nowhere/);
  const b = h.open('DeltaAggregatedResources');
  b.send({ node: NODE.malformed, type_url: XDS_TYPE_URL.clusters });
  const sb = await b.status;
  assert.equal(sb.code, grpc.status.INVALID_ARGUMENT);
  assert.match(sb.details, /malformed node id/);
  const c = h.open();
  c.send({ type_url: XDS_TYPE_URL.clusters });
  assert.equal((await c.status).code, grpc.status.INVALID_ARGUMENT);
  assert.ok(Date.now() - started < 3000);
  assert.ok(h.events.some((e) => e.kind === 'rejected' && e.nodeId === NODE.unknownNs.id));
  assert.equal(h.xds.streamCount, 0);
});

test('stream cap → RESOURCE_EXHAUSTED; drain ends streams with OK', T, async (t) => {
  const h = await startHarness({ maxStreams: 1 });
  t.after(() => h.close());
  h.xds.setSnapshot(bookinfo());
  const a = h.open();
  a.send({ node: NODE.productpage, type_url: XDS_TYPE_URL.clusters });
  await a.next();
  const b = h.open();
  b.send({ node: NODE.productpage, type_url: XDS_TYPE_URL.clusters });
  assert.equal((await b.status).code, grpc.status.RESOURCE_EXHAUSTED);
  assert.equal(h.xds.streamCount, 1);
  await h.xds.drain(2000);
  assert.equal((await a.status).code, grpc.status.OK);
  assert.equal(h.xds.streamCount, 0);
});

test('many streams of a class share one encoded body, writes bounded', T, async (t) => {
  const h = await startHarness({ writeConcurrency: 4 });
  t.after(() => h.close());
  h.xds.setSnapshot(bookinfo());
  const streams = Array.from({ length: 40 }, () => h.open());
  for (const [i, s] of streams.entries())
    s.send({
      node: { ...NODE.productpage, id: NODE.productpage.id.replace('abcde', `p${i}`) },
      type_url: XDS_TYPE_URL.clusters,
    });
  const rs = await Promise.all(streams.map((s) => s.next()));
  assert.equal(new Set(rs.map((r) => r.nonce)).size, 40, 'each stream has its own nonce');
  assert.equal(new Set(rs.map((r) => r.version_info)).size, 1);
  assert.ok(h.xds.writesInFlight <= 4);
  assert.equal(h.xds.statuses().length, 40);
});
