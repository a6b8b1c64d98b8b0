/** Incremental (delta) xDS against XdsServer, spoken by a raw protocol client. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { XDS_TYPE_URL } from '../../src/xds/type-urls.js';
import { bookinfo, bumped } from './fixtures.js';
import { NODE, names, startHarness } from './protocol-client.js';

const CDS = XDS_TYPE_URL.clusters;
const EDS = XDS_TYPE_URL.endpoints;
const DETAILS_V1 = 'outbound|9080|v1|details.default.svc.cluster.local';
const REVIEWS_V2 = 'outbound|9080|v2|reviews.default.svc.cluster.local';
const CLASS = 'sidecar/default/productpage';
const T = { timeout: 10_000 };

test('delta: wildcard CDS, per-resource versions are digests, ACK, removal and change', T, async (t) => {
  const h = await startHarness();
  t.after(() => h.close());
  const v1 = bookinfo();
  h.xds.setSnapshot(v1);
  const s = h.open('DeltaAggregatedResources');
  s.send({ node: NODE.productpage, type_url: CDS });
  const r = await s.next();
  const all = v1.resources(CLASS, 'clusters');
  assert.equal(r.system_version_info, '1');
  assert.equal(r.resources.length, all?.size);
  for (const res of r.resources) assert.equal(res.version, all?.get(res.name ?? '')?.digest);
  s.send({ type_url: CDS, response_nonce: r.nonce });
  await s.none(150);
  assert.ok(h.events.some((e) => e.kind === 'ack' && e.typeUrl === CDS && e.version === '1'));

  h.xds.setSnapshot(
    v1.derive(2, (_c, type, m) => {
      if (type !== 'clusters') return;
      m.delete(REVIEWS_V2);
      m.set(DETAILS_V1, bumped(m.get(DETAILS_V1) as never, 'v2'));
    }),
  );
  const d = await s.next();
  assert.equal(d.system_version_info, '2');
  assert.deepEqual(names(d, true), [DETAILS_V1]);
  assert.deepEqual(d.removed_resources, [REVIEWS_V2]);
  s.send({ type_url: CDS, response_nonce: d.nonce });
  h.xds.setSnapshot(
    v1.derive(3, (_c, type, m) => {
      if (type !== 'clusters') return;
      m.delete(REVIEWS_V2);
      m.set(DETAILS_V1, bumped(m.get(DETAILS_V1) as never, 'v2'));
    }),
  );
  await s.none(200);
});

test('delta: named subscribe, unsubscribe, resubscribe, absent names, NACK', T, async (t) => {
  const h = await startHarness();
  t.after(() => h.close());
  h.xds.setSnapshot(bookinfo());
  const s = h.open('DeltaAggregatedResources');
  s.send({ node: NODE.productpage, type_url: EDS, resource_names_subscribe: [DETAILS_V1] });
  const a = await s.next();
  assert.deepEqual(names(a, true), [DETAILS_V1]);
  s.send({ type_url: EDS, response_nonce: a.nonce, resource_names_subscribe: [REVIEWS_V2] });
  const b = await s.next();
  assert.deepEqual(names(b, true), [REVIEWS_V2], 'only the new name is sent');
  s.send({ type_url: EDS, response_nonce: b.nonce, resource_names_unsubscribe: [DETAILS_V1] });
  await s.none(150);
  s.send({ type_url: EDS, resource_names_subscribe: [DETAILS_V1, 'outbound|1|x|nosuch'] });
  const c = await s.next();
  assert.deepEqual(names(c, true), [DETAILS_V1], 'a resubscribed resource is sent again');
  assert.deepEqual(c.removed_resources, ['outbound|1|x|nosuch'], 'a missing resource is reported removed');
  s.send({ type_url: EDS, response_nonce: c.nonce, error_detail: { code: 3, message: 'no thanks' } });
  await s.none(200);
  const st = h.xds.statuses()[0];
  assert.equal(st?.protocol, 'delta');
  assert.equal(st?.types[EDS]?.nack?.error, 'no thanks');
  assert.ok(h.events.some((e) => e.kind === 'nack' && e.error === 'no thanks'));
});

test('delta reconnect with initial_resource_versions: only changed resources are sent', T, async (t) => {
  const h = await startHarness();
  t.after(() => h.close());
  const v1 = bookinfo();
  h.xds.setSnapshot(v1);
  const all = [...(v1.resources(CLASS, 'clusters')?.values() ?? [])];
  const initial: Record<string, string> = Object.fromEntries(all.map((r) => [r.name, r.digest]));
  initial[DETAILS_V1] = 'sha256:old';
  initial['outbound|1||gone.default.svc.cluster.local'] = 'sha256:gone';
  const s = h.open('DeltaAggregatedResources');
  s.send({ node: NODE.productpage, type_url: CDS, initial_resource_versions: initial });
  const r = await s.next();
  assert.deepEqual(names(r, true), [DETAILS_V1]);
  assert.deepEqual(r.removed_resources, ['outbound|1||gone.default.svc.cluster.local']);
  // Everything already current: no response at all.
  const s2 = h.open('DeltaAggregatedResources');
  s2.send({
    node: NODE.productpage,
    type_url: CDS,
    initial_resource_versions: Object.fromEntries(all.map((x) => [x.name, x.digest])),
  });
  await s2.none(250);
});
