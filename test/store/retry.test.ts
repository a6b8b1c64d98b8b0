/**
 * Retries: the backoff itself (with an injected sleep), and the S3 backend through a faulty
 * endpoint — a node:http proxy in front of s3rver that answers 503 SlowDown, 500 and 429 a few
 * times, or stalls a request past the timeout, before letting requests through.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ObjectStore } from '../../src/snapshot/store/object-store.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { backoffDelay, RetriesExhaustedError, TransientStoreError, withRetry } from '../../src/snapshot/store/retry.js';
import { parseS3Url, S3Backend } from '../../src/snapshot/store/s3.js';
import { CREATED_AT, nthSnapshot } from './helpers.js';
import { startS3rver, type RunningS3 } from './s3rver.js';

const transient = (e: unknown): boolean => e instanceof TransientStoreError;

test('transient failures are retried with capped exponential backoff, then succeed', async () => {
  const sleeps: number[] = [];
  let calls = 0;
  const out = await withRetry(
    async () => {
      if (++calls < 4) throw new TransientStoreError('503 SlowDown', 503);
      return 'ok';
    },
    transient,
    { sleep: async (ms) => void sleeps.push(ms), random: () => 0.999, baseMs: 100, maxMs: 300 },
  );
  assert.equal(out, 'ok');
  assert.equal(calls, 4);
  assert.deepEqual(sleeps, [99, 199, 299], 'full jitter under 100, 200, then the 300 cap');
});

test('a permanent error is thrown at once; exhausted retries say how many attempts', async () => {
  let calls = 0;
  await assert.rejects(
    withRetry(
      async () => {
        calls++;
        throw new Error('403');
      },
      transient,
      { sleep: async () => undefined },
    ),
    /403/,
  );
  assert.equal(calls, 1);
  await assert.rejects(
    withRetry(
      async () => {
        throw new TransientStoreError('500', 500);
      },
      transient,
      { attempts: 3, sleep: async () => undefined },
    ),
    (e: unknown) => e instanceof RetriesExhaustedError && e.attempts === 3,
  );
  assert.ok(backoffDelay(30, { baseMs: 100, maxMs: 5000 }, () => 0.5) <= 2500);
});

let s3: RunningS3;
let proxy: Server;
let faults: (() => 'slowdown' | 'error' | 'throttle' | 'stall' | null)[] = [];
const served: string[] = [];

before(async () => {
  s3 = await startS3rver();
  const target = new URL(s3.endpoint);
  proxy = createServer((req, res) => {
    const fault = faults.shift()?.() ?? null;
    if (fault) served.push(fault);
    if (fault === 'stall') {
      req.resume();
      return; // never answers: the client's timeout must fire
    }
    if (fault) {
      req.resume();
      req.on('end', () => {
        const [status, code] =
          fault === 'slowdown'
            ? [503, 'SlowDown']
            : fault === 'throttle'
              ? [429, 'TooManyRequests']
              : [500, 'InternalError'];
        res.writeHead(status, { 'content-type': 'application/xml' });
        res.end(
          `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>injected</Message><RequestId>t</RequestId></Error>`,
        );
      });
      return;
    }
    const up = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
});

after(async () => {
  proxy.closeAllConnections();
  await new Promise((r) => proxy.close(r));
  await s3.close();
});

function faultyStore(prefix: string): { store: ObjectStore; backend: S3Backend; retries: number[] } {
  const port = (proxy.address() as AddressInfo).port;
  const retries: number[] = [];
  const backend = new S3Backend(
    parseS3Url(
      `s3://${s3.bucket}/${prefix}?endpoint=http://127.0.0.1:${port}&region=us-east-1&forcePathStyle=true&conditional=false`,
    ),
    {
      credentials: s3.credentials,
      requestTimeoutMs: 300,
      retry: { baseMs: 1, maxMs: 5, onRetry: (_e, attempt) => retries.push(attempt) },
    },
  );
  return { store: new ObjectStore(backend, { hasher: nodeSha256Hex }), backend, retries };
}

test(
  'S3 through 503 SlowDown, 500, 429 and a stalled request: the publish succeeds and reads back',
  { timeout: 30_000 },
  async () => {
    const { store, backend, retries } = faultyStore('faulty');
    try {
      // Faults sprinkled over the first requests of the publish.
      faults = [
        () => 'slowdown',
        () => 'slowdown',
        () => null,
        () => 'error',
        () => null,
        () => 'throttle',
        () => 'stall',
        () => null,
        () => 'slowdown',
      ];
      const snap = nthSnapshot(1);
      const res = await publishSnapshot(store, 'main', snap, { createdAt: CREATED_AT });
      assert.equal(res.status, 'published');
      assert.deepEqual(served.sort(), ['error', 'slowdown', 'slowdown', 'slowdown', 'stall', 'throttle']);
      assert.ok(retries.length >= 6, `retried ${retries.length} times`);
      assert.deepEqual(await store.readChannel('main'), { version: 1, digest: snap.digest });
      assert.deepEqual(await store.getSnapshot(snap.digest), snap.content);
    } finally {
      backend.destroy();
    }
  },
);

test(
  'S3 failing beyond the retry budget reports the failure and publishes nothing visible',
  { timeout: 30_000 },
  async () => {
    const { store, backend } = faultyStore('down');
    try {
      faults = Array.from({ length: 200 }, () => () => 'error' as const);
      await assert.rejects(
        publishSnapshot(store, 'main', nthSnapshot(2), { createdAt: CREATED_AT }),
        RetriesExhaustedError,
      );
      faults = [];
      assert.equal(await store.readChannel('main'), null, 'no version became visible');
    } finally {
      faults = [];
      backend.destroy();
    }
  },
);
