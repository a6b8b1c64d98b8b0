/** State of the World xDS against XdsServer, spoken by a raw protocol client (see protocol-client.ts). */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { XDS_TYPE_URL } from '../../src/xds/type-urls.js';
import { bookinfo, bumped } from './fixtures.js';
import { NODE, names, startHarness, type Harness } from './protocol-client.js';

const CDS = XDS_TYPE_URL.clusters;
const EDS = XDS_TYPE_URL.endpoints;
const LDS = XDS_TYPE_URL.listeners;
const RDS = XDS_TYPE_URL.routes;
const DETAILS_V1 = 'outbound|9080|v1|details.default.svc.cluster.local';
const REVIEWS_V2 = 'outbound|9080|v2|reviews.default.svc.cluster.local';
const CLASS = 'sidecar/default/productpage';

let h: Harness;
before(async () => {
  h = await startHarness();
  h.xds.setSnapshot(bookinfo());
});
after(() => h.close());

const T = { timeout: 10_000 };

test('wildcard CDS, named EDS, ACK: full set, exact names, version = type version', T, async () => {
  const s = h.open();
  s.send({ node: NODE.productpage, type_url: CDS });
  const cds = await s.next();
  const snap = bookinfo();
  assert.equal(cds.type_url, CDS);
  assert.equal(cds.version_info, snap.typeVersion(CLASS, 'clusters'));
  assert.ok(cds.nonce);
  assert.deepEqual(names(cds).sort(), [...(snap.resources(CLASS, 'clusters')?.keys() ?? [])].sort());
  s.send({ type_url: CDS, version_info: cds.version_info, response_nonce: cds.nonce });
  s.send({ type_url: EDS, resource_names: [DETAILS_V1] });
  const eds = await s.next();
  assert.equal(eds.type_url, EDS);
  assert.deepEqual(names(eds), [DETAILS_V1]);
  await s.none();
  const status = h.xds.statuses().find((p) => p.nodeId === NODE.productpage.id);
  assert.equal(status?.classId, CLASS);
  assert.equal(status?.types[CDS]?.acked, cds.version_info);
  assert.equal(status?.types[EDS]?.sent, eds.version_info);
  assert.ok(h.events.some((e) => e.kind === 'ack' && e.typeUrl === CDS && e.version === cds.version_info));
});

test('NACK: recorded with its error, nothing resent, proxy stays on its last ACKed version', T, async () => {
  const s = h.open();
  const node = { ...NODE.productpage, id: NODE.productpage.id.replace('abcde', 'nack1') };
  s.send({ node, type_url: CDS });
  const cds = await s.next();
  s.send({
    type_url: CDS,
    version_info: '',
    response_nonce: cds.nonce,
    error_detail: { code: 3, message: 'bad cluster' },
  });
  await s.none();
  const status = h.xds.statuses().find((p) => p.nodeId === node.id);
  assert.equal(status?.types[CDS]?.acked, undefined);
  assert.deepEqual(
    { v: status?.types[CDS]?.nack?.version, e: status?.types[CDS]?.nack?.error },
    { v: cds.version_info, e: 'bad cluster' },
  );
  assert.ok(
    h.events.some(
      (e) => e.kind === 'nack' && e.nodeId === node.id && e.error === 'bad cluster' && e.snapshotVersion === 1,
    ),
  );
});

test('a stale nonce is ignored; a subscription change gets the new set', T, async () => {
  const s = h.open();
  s.send({ node: NODE.grpc, type_url: EDS, resource_names: [DETAILS_V1] });
  const first = await s.next();
  assert.deepEqual(names(first), [DETAILS_V1]);
  s.send({
    type_url: EDS,
    resource_names: [DETAILS_V1, REVIEWS_V2],
    response_nonce: 'not-the-latest',
    version_info: first.version_info,
  });
  await s.none();
  s.send({
    type_url: EDS,
    resource_names: [DETAILS_V1, REVIEWS_V2],
    response_nonce: first.nonce,
    version_info: first.version_info,
  });
  const second = await s.next();
  assert.deepEqual(names(second).sort(), [DETAILS_V1, REVIEWS_V2]);
  // Names not in the snapshot are simply absent (named LDS as the gRPC client asks it).
  s.send({
    type_url: LDS,
    resource_names: ['nosuch.default.svc.cluster.local:80', 'productpage.default.svc.cluster.local:9080'],
  });
  const lds = await s.next();
  assert.deepEqual(names(lds), ['productpage.default.svc.cluster.local:9080']);
});

test('before the first snapshot streams wait, then get their response', T, async () => {
  const h2 = await startHarness();
  try {
    const s = h2.open();
    s.send({ node: NODE.productpage, type_url: CDS });
    await s.none(300);
    h2.xds.setSnapshot(bookinfo());
    const cds = await s.next();
    assert.equal(cds.resources.length, bookinfo().resources(CLASS, 'clusters')?.size);
  } finally {
    await h2.close();
  }
});

test(
  'snapshot switch: only changed types, in CDS, EDS, LDS, RDS order; nothing when unchanged; removals',
  T,
  async () => {
    const h2 = await startHarness();
    try {
      const v1 = bookinfo();
      h2.xds.setSnapshot(v1);
      const s = h2.open();
      const ack = async (type: string, names?: string[]) => {
        s.send({
          type_url: type,
          ...(names ? { resource_names: names } : {}),
          ...(type === CDS ? { node: NODE.productpage } : {}),
        });
        const r = await s.next();
        s.send({
          type_url: type,
          version_info: r.version_info,
          response_nonce: r.nonce,
          ...(names ? { resource_names: names } : {}),
        });
        return r;
      };
      // Send requests in the reverse order, so the switch order below comes from the server.
      await ack(CDS);
      await ack(RDS, ['9080']);
      await ack(LDS);
      await ack(EDS, [DETAILS_V1]);
      await s.none(150);

      // Change one resource of every type (RDS last in request order, first in name order).
      const v2 = v1.derive(2, (_c, type, m) => {
        const pick = { clusters: DETAILS_V1, endpoints: DETAILS_V1, listeners: '0.0.0.0_9080', routes: '9080' }[type];
        const r = m.get(pick);
        if (r) m.set(pick, bumped(r, 'v2'));
      });
      h2.xds.setSnapshot(v2);
      const order = [];
      for (let i = 0; i < 4; i++) {
        const r = await s.next();
        order.push(r.type_url);
        s.send({
          type_url: r.type_url,
          version_info: r.version_info,
          response_nonce: r.nonce,
          ...(r.type_url === EDS
            ? { resource_names: [DETAILS_V1] }
            : r.type_url === RDS
              ? { resource_names: ['9080'] }
              : {}),
        });
      }
      assert.deepEqual(order, [CDS, EDS, LDS, RDS]);
      await s.none(150);

      // Same resources again: nothing is sent, and the proxy counts as on version 3.
      h2.xds.setSnapshot(v2.derive(3, () => {}));
      await s.none(250);
      assert.equal(h2.xds.statuses()[0]?.snapshotVersion, 3);

      // An endpoint the proxy did not subscribe to changes: nothing for it. A route changes: RDS only.
      h2.xds.setSnapshot(
        v2.derive(4, (_c, type, m) => {
          const r = type === 'endpoints' ? m.get(REVIEWS_V2) : type === 'routes' ? m.get('9080') : undefined;
          if (r) m.set(r.name, bumped(r, 'v4'));
        }),
      );
      const rds = await s.next();
      assert.equal(rds.type_url, RDS);
      s.send({ type_url: RDS, version_info: rds.version_info, response_nonce: rds.nonce, resource_names: ['9080'] });
      await s.none(250);

      // A cluster disappears: the CDS response no longer lists it.
      h2.xds.setSnapshot(v2.derive(5, (_c, type, m) => void (type === 'clusters' && m.delete(REVIEWS_V2))));
      const cds = await s.next();
      assert.equal(cds.type_url, CDS);
      assert.ok(!names(cds).includes(REVIEWS_V2));
      assert.equal(cds.resources.length, (v1.resources(CLASS, 'clusters')?.size ?? 0) - 1);
      assert.ok(h2.events.some((e) => e.kind === 'push' && e.snapshotVersion === 5 && typeof e.latencyMs === 'number'));
    } finally {
      await h2.close();
    }
  },
);

test(
  'a switch pushes one nonce to every stream: new on each, its ACKs count, an older nonce is still stale',
  T,
  async () => {
    const h2 = await startHarness();
    try {
      const v1 = bookinfo();
      h2.xds.setSnapshot(v1);
      const nodes = ['sw1', 'sw2'].map((tag) => ({
        ...NODE.productpage,
        id: NODE.productpage.id.replace('abcde', tag),
      }));
      const streams = nodes.map(() => h2.open());
      const first = [];
      for (const [i, s] of streams.entries()) {
        s.send({ node: nodes[i], type_url: CDS });
        const r = await s.next();
        s.send({ type_url: CDS, version_info: r.version_info, response_nonce: r.nonce });
        first.push(r);
      }
      assert.notEqual(first[0]?.nonce, first[1]?.nonce, 'a response to a request has a nonce of its own');
      await Promise.all(streams.map((s) => s.none(100)));

      h2.xds.setSnapshot(
        v1.derive(2, (_c, type, m) => {
          const r = type === 'clusters' ? m.get(DETAILS_V1) : undefined;
          if (r) m.set(r.name, bumped(r, 'v2'));
        }),
      );
      const pushed = await Promise.all(streams.map((s) => s.next()));
      const nonce = pushed[0]?.nonce;
      assert.ok(nonce);
      const version = pushed[0]?.version_info;
      assert.notEqual(version, first[0]?.version_info, 'the clusters changed');
      assert.deepEqual(
        pushed.map((r) => [r.type_url, r.nonce, r.version_info]),
        pushed.map(() => [CDS, nonce, version]),
      );
      assert.ok(!first.some((r) => r.nonce === nonce), 'the push nonce is new on every stream');

      const [a, b] = streams as [(typeof streams)[number], (typeof streams)[number]];
      // Stream b answers the response before the push (its nonce is stale now): ignored, no NACK recorded.
      b.send({
        type_url: CDS,
        version_info: '',
        response_nonce: first[1]?.nonce,
        error_detail: { code: 3, message: 'stale' },
      });
      a.send({ type_url: CDS, version_info: pushed[0]?.version_info, response_nonce: nonce });
      await Promise.all(streams.map((s) => s.none(150)));
      const status = (id: string) => h2.xds.statuses().find((p) => p.nodeId === id)?.types[CDS];
      assert.equal(status(nodes[0]!.id)?.acked, pushed[0]?.version_info, 'the ACK of the push nonce counts');
      assert.equal(status(nodes[1]!.id)?.nack, undefined, 'a NACK of an older nonce is ignored');
      assert.equal(status(nodes[1]!.id)?.acked, first[1]?.version_info);

      // A fresh request after the push gets a nonce of its own again.
      b.send({ type_url: CDS, version_info: '', response_nonce: '' });
      const again = await b.next();
      assert.notEqual(again.nonce, nonce);
      assert.equal(again.version_info, pushed[1]?.version_info);
    } finally {
      await h2.close();
    }
  },
);
