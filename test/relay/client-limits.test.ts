/**
 * Limits on what an xDS client sends: oversized node ids and metadata are refused with a clear
 * INVALID_ARGUMENT, as are requests naming too many resources; NACK details are truncated (and say
 * so) before they are kept, audited or logged; a stream sending too fast is closed.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { XDS_TYPE_URL } from '../../src/xds/type-urls.js';
import { bookinfo } from './fixtures.js';
import { NODE, startHarness } from './protocol-client.js';

const T = { timeout: 15_000 };
const CDS = XDS_TYPE_URL.clusters;

test('a node id over maxNodeIdLength is refused with INVALID_ARGUMENT, and the id is kept nowhere', T, async (t) => {
  const limited: string[] = [];
  const lines: string[] = [];
  const h = await startHarness({
    limits: { maxNodeIdLength: 64 },
    onLimited: (_s, _n, reason) => limited.push(reason),
    log: (l) => lines.push(l),
  });
  t.after(() => h.close());
  h.xds.setSnapshot(bookinfo());
  const s = h.open();
  const id = `sidecar~10.0.0.1~${'x'.repeat(3_500_000)}.default~default.svc.cluster.local`;
  s.send({ node: { ...NODE.productpage, id }, type_url: CDS });
  const status = await s.status;
  assert.equal(status.code, grpc.status.INVALID_ARGUMENT);
  assert.match(status.details, new RegExp(`node.id is ${id.length} characters; this relay accepts at most 64`));
  assert.equal(limited.length, 1);
  assert.ok(!h.events.some((e) => 'nodeId' in e && e.nodeId.length > 64), 'no event carries the id');
  assert.ok(
    lines.every((l) => l.length < 1000),
    'log lines bounded',
  );
});

test('node metadata over maxNodeMetadataBytes is refused with INVALID_ARGUMENT', T, async (t) => {
  const h = await startHarness({ limits: { maxNodeMetadataBytes: 1024 } });
  t.after(() => h.close());
  h.xds.setSnapshot(bookinfo());
  const s = h.open('DeltaAggregatedResources');
  const metadata = { fields: { ...NODE.productpage.metadata.fields, BIG: { stringValue: 'm'.repeat(2000) } } };
  s.send({ node: { id: NODE.productpage.id, metadata }, type_url: CDS });
  const status = await s.status;
  assert.equal(status.code, grpc.status.INVALID_ARGUMENT);
  assert.match(status.details, /node\.metadata is \d+ bytes as JSON; this relay accepts at most 1024/);
});

test('a node locality longer than maxNodeIdLength is refused with INVALID_ARGUMENT', T, async (t) => {
  const h = await startHarness({ limits: { maxNodeIdLength: 200 } });
  t.after(() => h.close());
  h.xds.setSnapshot(bookinfo());
  const s = h.open();
  s.send({
    node: { ...NODE.productpage, locality: { region: 'r'.repeat(150), zone: 'z'.repeat(100) } },
    type_url: CDS,
  });
  const status = await s.status;
  assert.equal(status.code, grpc.status.INVALID_ARGUMENT);
  assert.match(status.details, /node\.locality is 250 characters; this relay accepts at most 200/);
});

test(
  'more resource names than maxResourceNames in a request (SotW) or a subscription (delta): INVALID_ARGUMENT',
  T,
  async (t) => {
    const h = await startHarness({ limits: { maxResourceNames: 10 } });
    t.after(() => h.close());
    h.xds.setSnapshot(bookinfo());
    const names = Array.from({ length: 11 }, (_, i) => `outbound|9080||s${i}.default.svc.cluster.local`);
    const sotw = h.open();
    sotw.send({ node: NODE.productpage, type_url: XDS_TYPE_URL.endpoints, resource_names: names });
    const a = await sotw.status;
    assert.equal(a.code, grpc.status.INVALID_ARGUMENT);
    assert.match(a.details, /11 resource names in one request or subscription; this relay accepts at most 10/);
    const delta = h.open('DeltaAggregatedResources');
    delta.send({
      node: NODE.productpage,
      type_url: XDS_TYPE_URL.endpoints,
      resource_names_subscribe: names.slice(0, 6),
    });
    await delta.next();
    delta.send({ type_url: XDS_TYPE_URL.endpoints, resource_names_subscribe: names.slice(6) });
    assert.equal((await delta.status).code, grpc.status.INVALID_ARGUMENT, 'the subscription grew past the limit');
    // Within the limit: served.
    const ok = h.open();
    ok.send({ node: NODE.productpage, type_url: XDS_TYPE_URL.endpoints, resource_names: names.slice(0, 10) });
    assert.equal((await ok.next()).type_url, XDS_TYPE_URL.endpoints);
  },
);

test(
  'a 1 MB NACK error_detail is truncated to maxErrorDetailLength, saying so, in the event, the status and the log',
  T,
  async (t) => {
    const lines: string[] = [];
    const h = await startHarness({ limits: { maxErrorDetailLength: 100 }, log: (l) => lines.push(l) });
    t.after(() => h.close());
    h.xds.setSnapshot(bookinfo());
    const s = h.open();
    s.send({ node: NODE.productpage, type_url: CDS });
    const r = await s.next();
    const detail = `bad\u001b[2J${'e'.repeat(1_000_000)}`;
    s.send({ type_url: CDS, response_nonce: r.nonce, version_info: '', error_detail: { code: 3, message: detail } });
    const nack = await (async () => {
      for (let i = 0; i < 300; i++) {
        const e = h.events.find((x) => x.kind === 'nack');
        if (e?.kind === 'nack') return e;
        await new Promise((res) => setTimeout(res, 10));
      }
      return assert.fail('no NACK event');
    })();
    assert.equal(nack.error, `${detail.slice(0, 100)}…[truncated by the relay: ${detail.length} chars sent]`);
    const status = h.xds.statuses()[0]?.types[CDS]?.nack?.error ?? '';
    assert.ok(status.length < 200, 'the proxy status keeps the truncated text');
    const line = lines.find((l) => l.includes('NACK')) ?? '';
    assert.ok(line.length > 0 && line.length < 1000, `log line bounded: ${line.length}`);
    assert.ok(!line.includes('\u001b'), 'escape sequences escaped');
    assert.match(line, /\\u001b\[2J/);
  },
);

test('a stream over its request rate is closed with RESOURCE_EXHAUSTED; a calm one is not', T, async (t) => {
  const limited: string[] = [];
  const h = await startHarness({
    limits: { requestsPerSecond: 1, requestBurst: 5 },
    onLimited: (_s, _n, reason) => limited.push(reason),
  });
  t.after(() => h.close());
  h.xds.setSnapshot(bookinfo());
  const calm = h.open();
  calm.send({ node: NODE.productpage, type_url: CDS });
  await calm.next();
  const abuser = h.open();
  abuser.send({ node: NODE.productpage, type_url: CDS });
  for (let i = 0; i < 50; i++) abuser.send({ type_url: CDS, resource_names: [`n${i}`] });
  const status = await abuser.status;
  assert.equal(status.code, grpc.status.RESOURCE_EXHAUSTED);
  assert.match(status.details, /more than 5 requests at once or 1 per second/);
  assert.equal(limited.length, 1);
  assert.equal(h.xds.streamCount, 1, 'the calm stream is still open');
});
