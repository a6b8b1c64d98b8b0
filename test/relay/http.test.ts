/**
 * The relay in-process (startRelay): readiness before and after the first version, the debug and
 * metrics endpoints, a proxy's ACK and NACK showing up in /debug/proxies, /metrics and the audit log,
 * and a corrupt new version refused while the last good one stays served.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { silentLogger } from '../../src/relay/log.js';
import { startRelay, type Relay } from '../../src/relay/relay.js';
import type { ProxyStatus } from '../../src/relay/types.js';
import { ADS_SERVICE } from '../../src/relay/xds/services.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import type { AuditRecord } from '../../src/snapshot/audit.js';
import { XDS_TYPE_URL } from '../../src/xds/type-urls.js';
import { NODE, TestStream } from './protocol-client.js';
import { corruptObject, eventually, newObjects, publishSet, tempDir } from './store-fixture.js';

const tmp = tempDir('meshsnap-http-');
after(() => tmp.remove());

// Response bodies are checked field by field below; `any` keeps those checks short.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function get(port: number, path: string): Promise<{ status: number; text: string; json: () => any }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

const metric = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

async function relayOn(store: LocalStore, t: { after(fn: () => Promise<void>): void }): Promise<Relay> {
  const relay = await startRelay({
    store,
    host: '127.0.0.1',
    port: 0,
    httpPort: 0,
    pollMs: 50,
    maxBackoffMs: 200,
    auditFlushMs: 100,
    relayId: 'test-relay',
    drainTimeoutMs: 1000,
    log: silentLogger,
  });
  t.after(() => relay.close());
  return relay;
}

test(
  'readyz: 503 with the reason before any version; 200 once one is published; other routes',
  { timeout: 20_000 },
  async (t) => {
    const store = new LocalStore(join(tmp.dir, 'empty'));
    const relay = await relayOn(store, t);
    assert.equal((await get(relay.httpPort, '/healthz')).status, 200);
    const before = await get(relay.httpPort, '/readyz');
    assert.equal(before.status, 503);
    assert.equal(before.json().ready, false);
    assert.match(before.json().reason, /no versions yet/);
    assert.equal(metric((await get(relay.httpPort, '/metrics')).text, 'meshsnap_relay_snapshot_version'), 0);

    await publishSet(store, 'base');
    const ready = await eventually(
      async () => {
        const r = await get(relay.httpPort, '/readyz');
        return r.status === 200 ? r.json() : undefined;
      },
      5000,
      'readyz 200',
    );
    assert.equal(ready.version, 1);
    const m = (await get(relay.httpPort, '/metrics')).text;
    assert.equal(metric(m, 'meshsnap_relay_snapshot_version'), 1);
    assert.equal(metric(m, 'meshsnap_relay_ready'), 1);
    assert.equal(metric(m, 'meshsnap_relay_streams'), 0);
    assert.equal((await get(relay.httpPort, '/debug/snapshot')).json().snapshot.serving.version, 1);
    assert.equal((await get(relay.httpPort, '/nope')).status, 404);
  },
);

test(
  'a proxy ACK and NACK: /debug/proxies, /metrics and the audit log in the store',
  { timeout: 20_000 },
  async (t) => {
    const store = new LocalStore(join(tmp.dir, 'acks'));
    const { digest } = await publishSet(store, 'base');
    const relay = await relayOn(store, t);
    const client = new grpc.Client(`127.0.0.1:${relay.port}`, grpc.credentials.createInsecure());
    t.after(() => client.close());
    const path = `/${ADS_SERVICE}/StreamAggregatedResources`;
    const cds = XDS_TYPE_URL.clusters;

    const acking = new TestStream(client, path, false);
    const nacking = new TestStream(client, path, false);
    t.after(() => {
      acking.close();
      nacking.close();
    });
    acking.send({ node: NODE.productpage, type_url: cds, resource_names: [] });
    const r1 = await acking.next(5000);
    assert.ok(r1.resources.length > 0);
    acking.send({
      node: NODE.productpage,
      type_url: cds,
      resource_names: [],
      version_info: r1.version_info,
      response_nonce: r1.nonce,
    });

    nacking.send({ node: NODE.grpc, type_url: cds, resource_names: [] });
    const r2 = await nacking.next(5000);
    nacking.send({
      node: NODE.grpc,
      type_url: cds,
      resource_names: [],
      version_info: '',
      response_nonce: r2.nonce,
      error_detail: { code: 3, message: 'cluster rejected for the test' },
    });

    const proxies = await eventually(
      async () => {
        const body = (await get(relay.httpPort, '/debug/proxies')).json() as { proxies: ProxyStatus[] };
        const acked = body.proxies.find((p) => p.nodeId === NODE.productpage.id)?.types[cds]?.acked;
        const nacked = body.proxies.find((p) => p.nodeId === NODE.grpc.id)?.types[cds]?.nack;
        return acked && nacked ? body : undefined;
      },
      5000,
      'ACK and NACK in /debug/proxies',
    );
    assert.equal(proxies.proxies.length, 2);
    const pp = proxies.proxies.find((p) => p.nodeId === NODE.productpage.id) as ProxyStatus;
    assert.match(pp.classId, /^sidecar\/default/);
    assert.equal(pp.types[cds]?.acked, r1.version_info);
    const g = proxies.proxies.find((p) => p.nodeId === NODE.grpc.id) as ProxyStatus;
    assert.equal(g.classId, 'grpc/default');
    assert.equal(g.types[cds]?.nack?.error, 'cluster rejected for the test');
    const sync = (p: ProxyStatus) => (p as ProxyStatus & { sync: Record<string, string> }).sync;
    assert.deepEqual(sync(pp), { CDS: 'SYNCED', EDS: 'NOT SENT', LDS: 'NOT SENT', RDS: 'NOT SENT' });
    assert.equal(sync(g).CDS, 'NACKED');

    const m = (await get(relay.httpPort, '/metrics')).text;
    assert.equal(metric(m, 'meshsnap_relay_streams'), 2);
    assert.equal(metric(m, 'meshsnap_relay_acks_total{type="clusters"}'), 1);
    assert.equal(metric(m, 'meshsnap_relay_nacks_total{type="clusters"}'), 1);
    assert.ok((metric(m, 'meshsnap_relay_pushes_total{type="clusters"}') ?? 0) >= 2);
    assert.match(m, /meshsnap_relay_push_latency_seconds_count\{type="clusters"\} [1-9]/);

    const records = await eventually(
      async () => {
        const out: AuditRecord[] = [];
        for await (const r of store.readAudit()) out.push(r);
        // Connects are recorded too: wait for the ACK and the NACK themselves.
        return out.some((r) => r.kind === 'ack') && out.some((r) => r.kind === 'nack') ? out : undefined;
      },
      5000,
      'audit records in the store',
    );
    const ack = records.find((r) => r.kind === 'ack');
    const nack = records.find((r) => r.kind === 'nack');
    assert.deepEqual(
      {
        node: ack?.nodeId,
        type: ack?.typeUrl,
        version: ack?.version,
        snap: ack?.snapshotVersion,
        digest: ack?.digest,
        relay: ack?.relay,
        channel: ack?.channel,
      },
      {
        node: NODE.productpage.id,
        type: cds,
        version: r1.version_info,
        snap: 1,
        digest,
        relay: 'test-relay',
        channel: 'main',
      },
    );
    assert.equal(nack?.nodeId, NODE.grpc.id);
    assert.equal(nack?.error, 'cluster rejected for the test');
  },
);

test(
  'a corrupt object in a new version: refused, last good served, error in /debug/snapshot, /readyz and metrics',
  { timeout: 20_000 },
  async (t) => {
    const store = new LocalStore(join(tmp.dir, 'corrupt'));
    await publishSet(store, 'base');
    const relay = await relayOn(store, t);
    await publishSet(store, 'reviews50');
    corruptObject(store, newObjects('base', 'reviews50')[0] as string);

    const snap = await eventually(
      async () => {
        const s = (await get(relay.httpPort, '/debug/snapshot')).json();
        return s.snapshot.lastError ? s : undefined;
      },
      5000,
      'the refusal',
    );
    assert.equal(snap.snapshot.serving.version, 1);
    assert.equal(snap.snapshot.head.version, 2);
    assert.match(snap.snapshot.lastError.message, /corrupt object/);
    const ready = await get(relay.httpPort, '/readyz');
    assert.equal(ready.status, 200, 'still serving the last good version');
    assert.match(ready.json().warning, /head version 2 refused/);
    const m = (await get(relay.httpPort, '/metrics')).text;
    assert.ok((metric(m, 'meshsnap_relay_store_errors_total') ?? 0) >= 1);
    assert.equal(metric(m, 'meshsnap_relay_snapshot_version'), 1);
  },
);

test('stream cap: streams beyond maxStreams get RESOURCE_EXHAUSTED', { timeout: 20_000 }, async (t) => {
  const store = new LocalStore(join(tmp.dir, 'cap'));
  await publishSet(store, 'base');
  const relay = await startRelay({
    store,
    host: '127.0.0.1',
    port: 0,
    httpPort: 0,
    maxStreams: 1,
    relayId: 'cap',
    drainTimeoutMs: 500,
    log: silentLogger,
  });
  t.after(() => relay.close());
  const client = new grpc.Client(`127.0.0.1:${relay.port}`, grpc.credentials.createInsecure());
  t.after(() => client.close());
  const path = `/${ADS_SERVICE}/StreamAggregatedResources`;
  const first = new TestStream(client, path, false);
  t.after(() => first.close());
  first.send({ node: NODE.productpage, type_url: XDS_TYPE_URL.clusters, resource_names: [] });
  await first.next(5000);
  const second = new TestStream(client, path, false);
  second.send({ node: NODE.grpc, type_url: XDS_TYPE_URL.clusters, resource_names: [] });
  const status = await second.status;
  assert.equal(status.code, grpc.status.RESOURCE_EXHAUSTED);
});

test(
  'two relays side by side on one store: both follow the channel, each under its own id',
  { timeout: 20_000 },
  async (t) => {
    const store = new LocalStore(join(tmp.dir, 'pair'));
    await publishSet(store, 'base');
    const a = await relayOn(store, t);
    const b = await startRelay({
      store,
      host: '127.0.0.1',
      port: 0,
      httpPort: 0,
      pollMs: 50,
      relayId: 'test-relay-b',
      drainTimeoutMs: 500,
      log: silentLogger,
    });
    t.after(() => b.close());
    await publishSet(store, 'reviews50');
    for (const r of [a, b])
      await eventually(
        async () => (await get(r.httpPort, '/readyz')).json().version === 2,
        5000,
        `${r.relayId} on version 2`,
      );
    assert.notEqual(a.relayId, b.relayId);
  },
);
