/**
 * WorkerLane with stand-in workers: one job at a time, a bounded queue (beyond it 503 `busy` with
 * Retry-After, through the app's error handler), a dying worker fails its job with
 * `worker_failed` and the next job gets a new worker.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { after, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { BusyError } from '../../src/api/errors.js';
import { errorCodeOf, MeshsnapError } from '../../src/errors.js';
import type { CompileJobResult, OffloadRunner } from '../../src/api/offload.js';
import { WorkerLane } from '../../src/api/worker-lane.js';
import { LocalStore } from '../../src/snapshot/store/local.js';

/** Answers every message with `{ ok: true, value: <the message> }`, or exits with code 3 on 'die'. */
const ECHO = `const { parentPort } = require('node:worker_threads');
parentPort.on('message', (m) => (m === 'die' ? process.exit(3) : m === 'hang' ? undefined : parentPort.postMessage({ ok: true, value: m })));`;
/** Throws inside its job: the error comes back by name, message and code. */
const THROWS = `const { parentPort } = require('node:worker_threads');
parentPort.on('message', () => parentPort.postMessage({ ok: false, error: { name: 'HistoryError', message: 'no stored inputs', code: 'conflict' } }));`;

const lanes: WorkerLane[] = [];
const laneOf = (code: string, maxQueue: number, spawned = { n: 0 }) => {
  const lane = new WorkerLane({
    name: 'test',
    spawn: () => {
      spawned.n++;
      return new Worker(code, { eval: true });
    },
    maxQueue,
    retryAfter: 3,
  });
  lanes.push(lane);
  return lane;
};
after(async () => {
  for (const l of lanes) await l.close();
});

test('jobs run one at a time in order; results come back', { timeout: 30_000 }, async () => {
  const lane = laneOf(ECHO, 4);
  assert.deepEqual(await Promise.all([lane.run('a'), lane.run('b'), lane.run('c')]), ['a', 'b', 'c']);
});

test('beyond the queue bound a job is refused with busy (503) and a Retry-After', { timeout: 30_000 }, async () => {
  const lane = laneOf(ECHO, 1);
  const running = lane.run('hang');
  const waiting = lane.run('x');
  await assert.rejects(
    lane.run('y'),
    (e: unknown) => e instanceof BusyError && e.code === 'busy' && e.status === 503 && e.retryAfter === 3,
  );

  // Through the app: the same error is a 503 JSON answer with Retry-After.
  const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-lane-'));
  try {
    const offload: OffloadRunner = {
      compile: (files) => lane.run(files) as Promise<CompileJobResult>,
      diff: () => Promise.reject(new Error('unused')),
    };
    const app = createApp({ store: new LocalStore(tmp), auth: { writeToken: 't' }, offload });
    const res = await app.request('/api/v1/channels/main/compile', {
      method: 'POST',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ files: [{ text: 'x' }] }),
    });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '3');
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'busy');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const refused = Promise.all(
    [running, waiting].map((p) => assert.rejects(p, (e: unknown) => e instanceof BusyError && e.code === 'busy')),
  );
  await lane.close();
  await refused;
});

test(
  'a worker that dies fails its job with worker_failed; the next job gets a new worker',
  { timeout: 30_000 },
  async () => {
    const spawned = { n: 0 };
    const lane = laneOf(ECHO, 4, spawned);
    const dying = lane.run('die');
    const next = lane.run('after');
    await assert.rejects(
      dying,
      (e: unknown) =>
        e instanceof MeshsnapError &&
        e.code === 'worker_failed' &&
        e.status === 500 &&
        /exited with code 3/.test(e.message),
    );
    assert.equal(await next, 'after');
    assert.equal(spawned.n, 2);
  },
);

test(
  'an error thrown inside a job keeps its name and code (so the API maps it as if thrown inline)',
  { timeout: 30_000 },
  async () => {
    const lane = laneOf(THROWS, 4);
    await assert.rejects(
      lane.run('x'),
      (e: unknown) =>
        e instanceof Error &&
        !(e instanceof MeshsnapError) &&
        e.name === 'HistoryError' &&
        e.message === 'no stored inputs' &&
        errorCodeOf(e) === 'conflict',
    );
  },
);
