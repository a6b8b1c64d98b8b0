/** The audit log: store batches (immutable JSON lines, never overwritten) and the relay's batching writer. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AuditLog } from '../../src/relay/audit.js';
import type { AuditRecord } from '../../src/snapshot/audit.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { tempDir } from './store-fixture.js';

const tmp = tempDir('meshsnap-audit-');
after(() => tmp.remove());
let n = 0;
const freshStore = (): LocalStore => new LocalStore(join(tmp.dir, `store-${++n}`));

const rec = (i: number, over: Partial<AuditRecord> = {}): AuditRecord => ({
  at: new Date(Date.UTC(2030, 0, 2, 3, 4, 5) + i * 1000).toISOString(),
  kind: 'ack',
  relay: 'relay-a',
  channel: 'main',
  nodeId: `sidecar~10.0.0.${i}~p${i}.default~default.svc.cluster.local`,
  classId: 'sidecar/default/_',
  typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  version: 'abc',
  snapshotVersion: 7,
  ...over,
});

async function readAll(store: LocalStore, since?: string): Promise<AuditRecord[]> {
  const out: AuditRecord[] = [];
  for await (const r of store.readAudit(since === undefined ? {} : { since })) out.push(r);
  return out;
}

test(
  'LocalStore: batches are new immutable files under audit/<day>/, read back in order, filtered by since',
  { timeout: 10_000 },
  async () => {
    const store = freshStore();
    assert.deepEqual(await readAll(store), []);
    await store.appendAudit([]);
    await store.appendAudit([rec(1), rec(2, { kind: 'nack', error: 'bad cluster' })]);
    await store.appendAudit([rec(3)]);
    await store.appendAudit([rec(3)]); // same content, same time: a new file, never an overwrite
    const files = readdirSync(join(store.root, 'audit', '2030-01-02'));
    assert.equal(files.length, 3);
    for (const f of files) assert.match(f, /^2030-01-02T\d{6}\.\d{3}Z-relay-a-\d+\.jsonl$/);
    const text = readFileSync(join(store.root, 'audit', '2030-01-02', files.sort()[0] as string), 'utf8');
    assert.equal(text.split('\n').filter(Boolean).length, 2);

    const all = await readAll(store);
    assert.deepEqual(
      all.map((r) => r.nodeId.split('~')[1]),
      ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.3'],
    );
    assert.equal(all[1]?.error, 'bad cluster');
    const later = await readAll(store, rec(2).at);
    assert.equal(later.length, 3);
    assert.equal((await readAll(store, '2031-01-01T00:00:00Z')).length, 0);
  },
);

test(
  'AuditLog: ACK/NACK events batched by size and time; a failing store keeps the records for the next flush',
  { timeout: 10_000 },
  async () => {
    const batches: AuditRecord[][] = [];
    let failNext = 0;
    const store = {
      appendAudit: async (records: readonly AuditRecord[]) => {
        if (failNext > 0) {
          failNext--;
          throw new Error('store down');
        }
        batches.push([...records]);
      },
    };
    let errors = 0;
    const log = new AuditLog({
      store,
      relayId: 'r1',
      channel: 'main',
      flushMs: 50,
      maxBatch: 3,
      digestOf: (v) => (v === 4 ? 'sha256:x' : undefined),
      onError: () => errors++,
    });
    const ack = (i: number) => ackOf(i, 4);
    log.observe({
      kind: 'push',
      streamId: 's',
      nodeId: 'n',
      typeUrl: 't',
      version: 'v',
      snapshotVersion: 4,
      resources: 1,
      at: Date.now(),
    });
    log.observe({ kind: 'connect', streamId: 's', nodeId: 'n', classId: 'c', protocol: 'sotw', at: Date.now() });
    assert.equal(log.pending, 0, 'pushes and connects are not audited');

    for (let i = 0; i < 3; i++) log.observe(ack(i)); // maxBatch reached: flushed at once
    await log.flush();
    assert.equal(batches.length, 1);
    assert.equal(batches[0]?.length, 3);
    assert.equal(batches[0]?.[0]?.digest, 'sha256:x');
    assert.equal(batches[0]?.[0]?.relay, 'r1');

    log.observe({
      kind: 'nack',
      streamId: 's',
      nodeId: 'n9',
      classId: 'c',
      typeUrl: 't',
      version: 'v',
      snapshotVersion: 5,
      error: 'no',
      at: Date.now(),
    });
    await new Promise((r) => setTimeout(r, 150)); // the timer flushes it
    assert.equal(batches.length, 2);
    assert.equal(batches[1]?.[0]?.kind, 'nack');
    assert.equal(batches[1]?.[0]?.error, 'no');
    assert.equal(batches[1]?.[0]?.digest, undefined);

    failNext = 1;
    log.observe(ack(10));
    await log.flush();
    assert.equal(errors, 1);
    assert.equal(log.pending, 1, 'kept after a failed append');
    log.observe(ack(11));
    await log.close();
    assert.equal(log.pending, 0);
    assert.deepEqual(
      batches[2]?.map((r) => r.nodeId),
      ['n10', 'n11'],
    );
    assert.equal(log.written, 6);
  },
);

test(
  'AuditLog.holdUntil: a full batch waits while a switch is written, then is flushed at once',
  { timeout: 10_000 },
  async () => {
    const batches: AuditRecord[][] = [];
    const log = new AuditLog({
      store: { appendAudit: async (records: readonly AuditRecord[]) => void batches.push([...records]) },
      relayId: 'r1',
      channel: 'main',
      flushMs: 60_000,
      maxBatch: 2,
    });
    const ack = (i: number) => ackOf(i, 1);
    let written!: () => void;
    log.holdUntil(new Promise<void>((r) => (written = r)));
    for (let i = 0; i < 3; i++) log.observe(ack(i));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(batches.length, 0, 'nothing written while the switch is');
    assert.equal(log.pending, 3);
    written();
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(
      batches.map((b) => b.map((r) => r.nodeId)),
      [['n0', 'n1'], ['n2']],
      'every record written, in order, once the switch is',
    );
    await log.close();
  },
);

/** Node `n<i>`'s ACK of snapshot version `snapshotVersion`, at a fixed time plus i ms. */
function ackOf(i: number, snapshotVersion: number) {
  return {
    kind: 'ack' as const,
    streamId: 's',
    nodeId: `n${i}`,
    classId: 'c',
    typeUrl: 't',
    version: 'v',
    snapshotVersion,
    at: Date.UTC(2030, 0, 1) + i,
  };
}
