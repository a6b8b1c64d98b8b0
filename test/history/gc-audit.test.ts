/**
 * gc and the audit log: relay records (ACKs, NACKs) filed on days older than `auditDays` are
 * deleted; newer ones and operator actions (pins, tags, gc runs) are kept; a dry run only counts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gc } from '../../src/history/gc.js';
import type { AuditRecord } from '../../src/snapshot/audit.js';
import { compileAndPublish, context, STATE, tempStore } from './helpers.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2031, 5, 15, 12, 0, 0);
const at = (daysAgo: number): string => new Date(NOW - daysAgo * DAY).toISOString();
const relayRecord = (daysAgo: number, kind: 'ack' | 'nack' = 'ack'): AuditRecord => ({
  at: at(daysAgo),
  kind,
  relay: 'relay-a',
  channel: 'main',
  nodeId: `sidecar~10.0.0.${daysAgo}~p.default~default.svc.cluster.local`,
  classId: 'sidecar/default/_',
  typeUrl: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  version: 'v',
  snapshotVersion: 1,
});

test(
  'gc deletes relay audit batches older than auditDays, keeps newer ones and operator actions',
  { timeout: 60_000 },
  async () => {
    const { store, cleanup } = tempStore();
    try {
      await compileAndPublish(store, STATE, ['virtual-service-reviews-v3.yaml']);
      await store.appendAudit([relayRecord(40), relayRecord(40, 'nack')]);
      await store.appendAudit([relayRecord(31)]);
      await store.appendAudit([relayRecord(5)]);
      await store.appendAudit([
        {
          ...relayRecord(45),
          kind: 'pin',
          relay: '',
          nodeId: '',
          classId: '',
          typeUrl: '',
          actor: 'ops',
          reason: 'incident',
        },
      ]);
      const ctx = context(store, { now: () => new Date(NOW) });

      const dry = await gc(ctx, { dryRun: true, graceMs: 3_600_000 });
      assert.equal(dry.deletedAuditBatches, 2);
      const all = async (): Promise<AuditRecord[]> => {
        const out: AuditRecord[] = [];
        for await (const r of store.readAudit()) out.push(r);
        return out;
      };
      assert.equal((await all()).length, 5, 'a dry run deletes nothing');

      const real = await gc(ctx, { graceMs: 3_600_000 });
      assert.equal(real.deletedAuditBatches, 2);
      const left = await all();
      assert.deepEqual(
        left.filter((r) => r.kind !== 'gc').map((r) => [r.kind, r.at]),
        [
          ['pin', at(45)],
          ['ack', at(5)],
        ],
      );
      assert.equal(left.filter((r) => r.kind === 'gc').length, 1, 'the gc run itself is audited');

      const shorter = await gc(ctx, { graceMs: 3_600_000, auditDays: 2 });
      assert.equal(shorter.deletedAuditBatches, 1, 'auditDays sets the window');
    } finally {
      cleanup();
    }
  },
);
