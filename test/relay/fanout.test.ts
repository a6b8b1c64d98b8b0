/** Write budgets: a stream that never drains its writes cannot hold the shared slots, and is reported stalled. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Fanout, type StallReason, type WritableCall } from '../../src/relay/xds/fanout.js';

/** A call whose writes never complete (a proxy with a closed flow-control window). */
const stuck = (): WritableCall & { writes: number } => {
  const c = { writes: 0, write: () => (c.writes++, false) };
  return c;
};
/** A call whose writes complete at once. */
const healthy = (): WritableCall & { writes: number } => {
  const c = {
    writes: 0,
    write: (_: unknown, cb: (err?: Error | null) => void) => (c.writes++, setImmediate(cb), true),
  };
  return c;
};
const bytes = new Uint8Array([1, 2, 3]);
const until = async (check: () => boolean, what: string): Promise<void> => {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), what);
};

test(
  'stalled streams give their shared slots back: a healthy stream is written although every slot was taken by stalled ones',
  { timeout: 10_000 },
  async () => {
    const fanout = new Fanout({ limit: 2, slowWriteMs: 20, writeTimeoutMs: 60_000 });
    const stalledCalls = Array.from({ length: 10 }, stuck);
    const stalled = stalledCalls.map((c) => fanout.writer(c));
    for (const w of stalled) w.push({ bytes });
    const call = healthy();
    const w = fanout.writer(call);
    let written = 0;
    for (let i = 0; i < 5; i++) w.push({ bytes, onWritten: () => written++ });
    await until(() => written === 5, 'the healthy stream got all its writes');
    // Every stalled stream started exactly one write, and holds nothing more than that.
    assert.deepEqual(
      stalledCalls.map((c) => c.writes),
      Array<number>(10).fill(1),
    );
    await until(() => fanout.inFlight === 0, 'no shared slot is held by a stalled write');
    assert.equal(fanout.slowWrites, 10);
    // More for a stalled stream queues behind its own unfinished write (superseded by key), not in the shared budget.
    stalled[0]?.push({ bytes, key: 'cds' });
    stalled[0]?.push({ bytes, key: 'cds' });
    assert.equal(stalled[0]?.queued, 1);
    assert.equal(stalledCalls[0]?.writes, 1);
    for (const s of stalled) s.close();
    assert.equal(fanout.slowWrites, 0);
  },
);

test(
  'a write not drained within writeTimeoutMs reports the stream stalled once, and frees it',
  { timeout: 10_000 },
  async () => {
    const fanout = new Fanout({ limit: 4, slowWriteMs: 10, writeTimeoutMs: 50 });
    const reasons: StallReason[] = [];
    const w = fanout.writer(stuck(), (why) => reasons.push(why));
    w.push({ bytes });
    w.push({ bytes });
    await until(() => reasons.length === 1, 'stalled reported');
    assert.deepEqual(reasons, [{ kind: 'write-timeout', ms: 50 }]);
    assert.equal(w.queued, 0, 'queued writes dropped');
    assert.equal(fanout.inFlight, 0);
    assert.equal(fanout.slowWrites, 0);
    w.push({ bytes });
    assert.equal(w.queued, 0, 'a stalled writer takes nothing more');
  },
);

test('a stream whose queue outgrows maxQueued is reported stalled', { timeout: 10_000 }, () => {
  const fanout = new Fanout({ limit: 1, maxQueued: 3, writeTimeoutMs: 60_000 });
  const reasons: StallReason[] = [];
  const w = fanout.writer(stuck(), (why) => reasons.push(why));
  for (let i = 0; i < 5; i++) w.push({ bytes });
  assert.deepEqual(reasons, [{ kind: 'queue-full', queued: 4 }]);
  assert.equal(w.queued, 0);
  assert.equal(fanout.inFlight, 0);
});
