/**
 * The audit log under a hostile proxy: a batch the store refuses is split and the refused record
 * dropped (counted), never blocking the records behind it; records have a maximum size; a store
 * that is down keeps everything for the next flush.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AuditLog } from '../../src/relay/audit.js';
import type { XdsEvent } from '../../src/relay/types.js';
import type { AuditRecord } from '../../src/snapshot/audit.js';

const T = { timeout: 10_000 };
const ack = (nodeId: string): XdsEvent => ({
  kind: 'ack',
  streamId: 's',
  nodeId,
  classId: 'c',
  typeUrl: 't',
  version: 'v',
  snapshotVersion: 1,
  at: Date.UTC(2030, 0, 1),
});
const nack = (nodeId: string, error: string): XdsEvent => ({
  kind: 'nack',
  streamId: 's',
  nodeId,
  classId: 'c',
  typeUrl: 't',
  version: 'v',
  snapshotVersion: 1,
  error,
  at: Date.UTC(2030, 0, 1),
});

/** A store that refuses any batch holding a record of node "poison" (as JSON.stringify did with "Invalid string length"). */
function pickyStore(): { appendAudit(records: readonly AuditRecord[]): Promise<void>; written: AuditRecord[] } {
  const written: AuditRecord[] = [];
  return {
    written,
    appendAudit: async (records) => {
      if (records.some((r) => r.nodeId === 'poison')) throw new RangeError('Invalid string length');
      written.push(...records);
    },
  };
}

test(
  'one record the store refuses is dropped and counted; the legitimate records before and after it are written in the same flush',
  T,
  async () => {
    const store = pickyStore();
    let dropped = 0;
    const log = new AuditLog({
      store,
      relayId: 'r',
      channel: 'main',
      flushMs: 60_000,
      maxBatch: 500,
      onDropped: (n) => (dropped += n),
    });
    for (let i = 0; i < 10; i++) log.observe(ack(`before-${i}`));
    log.observe(ack('poison'));
    for (let i = 0; i < 10; i++) log.observe(ack(`after-${i}`));
    await log.flush();
    assert.equal(log.pending, 0);
    assert.equal(dropped, 1);
    assert.deepEqual(
      store.written.map((r) => r.nodeId),
      [...Array.from({ length: 10 }, (_, i) => `before-${i}`), ...Array.from({ length: 10 }, (_, i) => `after-${i}`)],
    );
    // Later records are not held back either.
    log.observe(ack('legit-proxy'));
    await log.close();
    assert.equal(store.written.at(-1)?.nodeId, 'legit-proxy');
  },
);

test('poison at the head of the buffer: dropped as soon as the store takes the records behind it', T, async () => {
  const store = pickyStore();
  let dropped = 0;
  const log = new AuditLog({ store, relayId: 'r', channel: 'main', flushMs: 60_000, onDropped: (n) => (dropped += n) });
  log.observe(ack('poison'));
  log.observe(ack('legit'));
  await log.flush();
  assert.deepEqual(
    store.written.map((r) => r.nodeId),
    ['legit'],
  );
  assert.equal(dropped, 1);
  await log.close();
});

test('a store that is down: nothing dropped, everything written once it is back', T, async () => {
  let down = true;
  const written: AuditRecord[] = [];
  let dropped = 0;
  const store = {
    appendAudit: async (records: readonly AuditRecord[]) => {
      if (down) throw new Error('store unreachable');
      written.push(...records);
    },
  };
  const log = new AuditLog({ store, relayId: 'r', channel: 'main', flushMs: 60_000, onDropped: (n) => (dropped += n) });
  for (let i = 0; i < 20; i++) log.observe(ack(`n${i}`));
  await log.flush();
  await log.flush();
  assert.equal(log.pending, 20);
  assert.equal(dropped, 0);
  down = false;
  await log.close();
  assert.equal(written.length, 20);
  assert.deepEqual(
    written.map((r) => r.nodeId),
    Array.from({ length: 20 }, (_, i) => `n${i}`),
  );
});

test('records are at most maxRecordBytes: a huge node id and NACK text are cut to fit, saying so', T, async () => {
  const written: AuditRecord[] = [];
  const log = new AuditLog({
    store: { appendAudit: async (r) => void written.push(...r) },
    relayId: 'r',
    channel: 'main',
    flushMs: 60_000,
    maxRecordBytes: 2048,
  });
  log.observe(nack(`id-${'i'.repeat(3_500_000)}`, 'e'.repeat(1_000_000)));
  await log.close();
  assert.equal(written.length, 1);
  const r = written[0] as AuditRecord;
  assert.ok(JSON.stringify(r).length <= 2048, `record is ${JSON.stringify(r).length} bytes`);
  assert.match(r.nodeId, /truncated by the relay: 3500003 chars sent/);
  assert.match(r.error ?? '', /truncated by the relay: 1000000 chars sent/);
});
