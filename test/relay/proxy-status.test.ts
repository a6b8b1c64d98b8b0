/**
 * Proxy status is the relay's truth: a stream's connect and disconnect reach the audit log, and the
 * API's per-proxy status (src/api/proxies.ts) says disconnected, with the time, once the stream is gone.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { proxyStatuses } from '../../src/api/proxies.js';
import { silentLogger } from '../../src/relay/log.js';
import { startRelay } from '../../src/relay/relay.js';
import { ADS_SERVICE } from '../../src/relay/xds/services.js';
import type { AuditRecord } from '../../src/snapshot/audit.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { XDS_TYPE_URL } from '../../src/xds/type-urls.js';
import { NODE, TestStream } from './protocol-client.js';
import { eventually, publishSet, tempDir } from './store-fixture.js';

const tmp = tempDir('meshsnap-proxy-status-');
after(() => tmp.remove());

async function records(store: LocalStore): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  for await (const r of store.readAudit()) out.push(r);
  return out;
}

const statusOf = async (store: LocalStore, nodeId: string) =>
  (await proxyStatuses(store.readAudit(), 'main')).find((p) => p.nodeId === nodeId);

test(
  'a proxy that ACKed and then disconnected: connect and disconnect audited, status disconnected with its time',
  { timeout: 30_000 },
  async (t) => {
    const store = new LocalStore(join(tmp.dir, 'store'));
    await publishSet(store, 'base');
    const relay = await startRelay({
      store,
      host: '127.0.0.1',
      port: 0,
      httpPort: 0,
      pollMs: 50,
      auditFlushMs: 50,
      relayId: 'relay-1',
      drainTimeoutMs: 1000,
      log: silentLogger,
    });
    t.after(() => relay.close());
    const client = new grpc.Client(`127.0.0.1:${relay.port}`, grpc.credentials.createInsecure());
    t.after(() => client.close());
    const cds = XDS_TYPE_URL.clusters;

    const stream = new TestStream(client, `/${ADS_SERVICE}/StreamAggregatedResources`, false);
    t.after(() => stream.close());
    stream.send({ node: NODE.productpage, type_url: cds, resource_names: [] });
    const r1 = await stream.next(5000);
    stream.send({
      node: NODE.productpage,
      type_url: cds,
      resource_names: [],
      version_info: r1.version_info,
      response_nonce: r1.nonce,
    });

    const connected = await eventually(
      async () => {
        const p = await statusOf(store, NODE.productpage.id);
        return p && Object.keys(p.acked).length > 0 ? p : undefined;
      },
      5000,
      'ACK in the audit log',
    );
    assert.equal(connected.connected, true);
    assert.match(String(connected.connectedAt), /^\d{4}-\d\d-\d\dT/);
    assert.equal(connected.disconnectedAt, null);

    stream.close();
    const gone = await eventually(
      async () => {
        const p = await statusOf(store, NODE.productpage.id);
        return p && !p.connected ? p : undefined;
      },
      5000,
      'disconnected in the status',
    );
    assert.ok(gone.disconnectedAt !== null && gone.connectedAt !== null && gone.disconnectedAt >= gone.connectedAt);
    assert.equal(gone.acked[cds]?.version, r1.version_info, 'what it ACKed is kept');

    const mine = (await records(store)).filter((r) => r.nodeId === NODE.productpage.id);
    const connect = mine.find((r) => r.kind === 'connect');
    const disconnect = mine.find((r) => r.kind === 'disconnect');
    assert.equal(connect?.relay, 'relay-1');
    assert.match(connect?.classId ?? '', /^sidecar\/default\//);
    assert.equal(disconnect?.classId, connect?.classId, 'the disconnect names the class of its stream');
    assert.equal(disconnect?.detail?.stream, connect?.detail?.stream);
  },
);

const rec = (at: number, kind: AuditRecord['kind'], stream?: string): AuditRecord => ({
  at: new Date(Date.UTC(2030, 0, 1, 0, 0, at)).toISOString(),
  kind,
  relay: 'relay-1',
  channel: 'main',
  nodeId: 'sidecar~10.0.0.1~a.default~default.svc.cluster.local',
  classId: 'sidecar/default/_',
  typeUrl: kind === 'ack' ? XDS_TYPE_URL.clusters : '',
  version: kind === 'ack' ? 'v' : '',
  snapshotVersion: kind === 'ack' ? 3 : 0,
  ...(stream !== undefined ? { detail: { stream } } : {}),
});

async function* iterate(list: readonly AuditRecord[]): AsyncIterable<AuditRecord> {
  yield* list;
}

test('proxyStatuses: a reconnect before the old stream closed stays connected; the last close disconnects', async () => {
  const [open] = await proxyStatuses(
    iterate([rec(1, 'connect', 's1'), rec(2, 'ack'), rec(3, 'connect', 's2'), rec(4, 'disconnect', 's1')]),
  );
  assert.equal(open?.connected, true);
  assert.equal(open?.connectedAt, rec(3, 'connect').at);
  assert.equal(open?.disconnectedAt, null);

  const [closed] = await proxyStatuses(
    iterate([rec(1, 'connect', 's1'), rec(2, 'ack'), rec(3, 'disconnect', 's1'), rec(4, 'ack')]),
  );
  assert.equal(closed?.connected, false, 'a late ACK record does not reopen a closed stream');
  assert.equal(closed?.disconnectedAt, rec(3, 'disconnect').at);

  // Logs of relays that recorded no connects: an ACK is all there is, as before.
  const [legacy] = await proxyStatuses(iterate([rec(1, 'ack')]));
  assert.equal(legacy?.connected, true);
  assert.equal(legacy?.connectedAt, null);
});
