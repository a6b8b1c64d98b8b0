/**
 * The status writer's queue and rate bound, over an in-memory client and a ManualClock (no
 * sleeping, no timed assertions): requests never exceed the token bucket, one pending status per
 * object, 409 → read again → retry (bounded), 404 ignored, 422 not retried, other failures retried
 * with backoff.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GATEWAY_CONTROLLER_NAME, type RouteStatus } from '../../../src/model/object-status.js';
import { ManualClock } from '../../../src/watch/clock.js';
import type { ComputedStatus } from '../../../src/watch/status/desired.js';
import type { Json } from '../../../src/watch/status/merge.js';
import { StatusWriter, type StatusClient, type StatusWriteResult } from '../../../src/watch/status/writer.js';

class MemoryClient implements StatusClient {
  readonly objects = new Map<string, Json>();
  readonly requests: string[] = [];
  /** Status codes to answer the next PUTs with, in order. */
  readonly failPuts: number[] = [];
  private rv = 1;

  add(name: string): Json {
    const o: Json = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name, namespace: 'default', resourceVersion: String(++this.rv), generation: 1 },
      spec: {},
    };
    this.objects.set(`/r/${name}`, o);
    return o;
  }

  async get(path: string): Promise<Json | undefined> {
    this.requests.push(`GET ${path}`);
    return this.objects.get(path);
  }

  async replaceStatus(path: string, object: Json): Promise<Json> {
    this.requests.push(`PUT ${path}`);
    const fail = this.failPuts.shift();
    if (fail !== undefined) throw Object.assign(new Error(`injected ${fail}`), { statusCode: fail });
    const current = this.objects.get(path);
    if (!current) throw Object.assign(new Error('not found'), { statusCode: 404 });
    const meta = current.metadata as Json;
    if ((object.metadata as Json).resourceVersion !== meta.resourceVersion)
      throw Object.assign(new Error('conflict'), { statusCode: 409 });
    const stored = { ...current, metadata: { ...meta, resourceVersion: String(++this.rv) }, status: object.status };
    this.objects.set(path, stored);
    return stored;
  }
}

const routeStatus = (message: string): RouteStatus => ({
  parents: [
    {
      parentRef: { name: 'gw' },
      controllerName: GATEWAY_CONTROLLER_NAME,
      conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', message }],
    },
  ],
});
const computed = (name: string, message = 'Route was valid'): ComputedStatus => ({
  key: `HTTPRoute/default/${name}`,
  kind: 'HTTPRoute',
  namespace: 'default',
  name,
  status: routeStatus(message),
});

function writer(
  client: MemoryClient,
  clock: ManualClock,
  opts: { qps?: number; burst?: number; maxAttempts?: number } = {},
) {
  const counts: StatusWriteResult[] = [];
  const logs: string[] = [];
  const w = new StatusWriter({
    client,
    pathOf: (_kind, _apiVersion, _ns, name) => `/r/${name}`,
    clock,
    now: () => new Date('2026-06-01T00:00:00Z'),
    retryInitialMs: 1000,
    ...opts,
    count: (r) => counts.push(r),
    log: (level, event) => logs.push(`${level} ${event}`),
  });
  return { w, counts, logs };
}

/** Lets the writer's promise chain run (in-memory client: no I/O). */
const flush = () => new Promise((r) => setImmediate(r));

test('rate bound: burst requests at once, then qps per second as the clock moves; nothing more is sent meanwhile', async () => {
  const client = new MemoryClient();
  const clock = new ManualClock(0);
  const { w } = writer(client, clock, { qps: 2, burst: 3 });
  for (let i = 0; i < 10; i++) w.observe(client.add(`r${i}`));
  assert.equal(w.sync(Array.from({ length: 10 }, (_, i) => computed(`r${i}`))), 10);
  for (let i = 0; i < 5; i++) await flush();
  assert.equal(client.requests.length, 3, 'the burst');
  clock.advance(499);
  for (let i = 0; i < 5; i++) await flush();
  assert.equal(client.requests.length, 3, 'no token yet');
  clock.advance(1);
  for (let i = 0; i < 5; i++) await flush();
  assert.equal(client.requests.length, 4, 'one more after 1/qps');
  clock.advance(2000);
  for (let i = 0; i < 5; i++) await flush();
  // From 500 ms to 2500 ms the bucket refilled 4 tokens, capped at the burst (3).
  assert.equal(client.requests.length, 7, 'refilled up to the burst, no more');
  // A newer round's status replaces the pending one: never more than one per object queued.
  const before = w.pending;
  assert.equal(w.sync(Array.from({ length: 10 }, (_, i) => computed(`r${i}`, 'newer'))), 10);
  assert.ok(w.pending <= 10 && w.pending >= before);
  await w.stop();
});

test('written once; an unchanged round writes nothing; a changed message writes again with the time kept', async () => {
  const client = new MemoryClient();
  const clock = new ManualClock(0);
  const { w, counts } = writer(client, clock);
  w.observe(client.add('a'));
  w.sync([computed('a')]);
  await w.idle();
  assert.deepEqual(counts, ['written']);
  const stored = client.objects.get('/r/a')!;
  w.observe(stored); // the informer's echo of our write
  assert.equal(w.sync([computed('a')]), 0);
  await w.idle();
  assert.deepEqual(client.requests, ['PUT /r/a']);
  w.sync([computed('a', 'Route was valid, bound to 2 parents')]);
  await w.idle();
  assert.deepEqual(counts, ['written', 'written']);
  await w.stop();
});

test('409: read again, merge again, retry (at most maxAttempts PUTs); 404: skipped; 422: logged, not retried; 503: retried after backoff', async () => {
  const client = new MemoryClient();
  const clock = new ManualClock(0);
  const { w, counts, logs } = writer(client, clock, { maxAttempts: 3 });
  const a = client.add('a');
  w.observe(a);
  // Someone writes the object after the informer saw it: our PUT names a stale resourceVersion.
  client.objects.set('/r/a', { ...a, metadata: { ...(a.metadata as Json), resourceVersion: '999' } });
  w.sync([computed('a')]);
  await w.idle();
  assert.deepEqual(client.requests, ['PUT /r/a', 'GET /r/a', 'PUT /r/a']);
  assert.deepEqual(counts, ['conflict', 'written']);

  // Conflicts every time: bounded, then retried later with backoff.
  client.requests.length = 0;
  counts.length = 0;
  client.failPuts.push(409, 409, 409);
  w.sync([computed('a', 'changed')]);
  await w.idle();
  assert.deepEqual(client.requests, ['PUT /r/a', 'GET /r/a', 'PUT /r/a', 'GET /r/a', 'PUT /r/a']);
  assert.deepEqual(counts, ['conflict', 'conflict', 'error']);
  clock.advance(1000);
  await w.idle();
  assert.deepEqual(counts, ['conflict', 'conflict', 'error', 'written'], 'the retry after backoff');

  // Gone between the informer and the write.
  client.objects.delete('/r/a');
  counts.length = 0;
  w.sync([computed('a', 'again')]);
  await w.idle();
  assert.deepEqual(counts, ['gone']);

  // Refused by validation: not retried.
  const b = client.add('b');
  w.observe(b);
  counts.length = 0;
  client.failPuts.push(422);
  w.sync([computed('b')]);
  await w.idle();
  clock.advance(120_000);
  await w.idle();
  assert.deepEqual(counts, ['refused']);
  assert.ok(logs.includes('warn watch.status_refused'));

  // A 503: warned once, retried with backoff until it is written.
  counts.length = 0;
  client.failPuts.push(503, 503);
  w.sync([computed('b', 'other')]);
  await w.idle();
  clock.advance(1000);
  await w.idle();
  clock.advance(2000);
  await w.idle();
  assert.deepEqual(counts, ['error', 'error', 'written']);
  assert.deepEqual(
    logs.filter((l) => l.endsWith('status_write_failed')),
    ['warn watch.status_write_failed', 'warn watch.status_write_failed', 'debug watch.status_write_failed'],
    'the first failure of each object warns (a, then b), its retries log at debug',
  );
  await w.stop();
});

test('objects never observed, or forgotten (deleted), are not written; a route no longer computed loses only our parent entry', async () => {
  const client = new MemoryClient();
  const clock = new ManualClock(0);
  const { w } = writer(client, clock);
  assert.equal(w.sync([computed('nowhere')]), 0);
  const a = client.add('a');
  w.observe(a);
  w.forget(a);
  assert.equal(w.sync([computed('a')]), 0);

  const other = { parentRef: { name: 'x' }, controllerName: 'example.net/other', conditions: [] };
  const c = {
    ...client.add('c'),
    status: {
      parents: [other, { parentRef: { name: 'gw' }, controllerName: GATEWAY_CONTROLLER_NAME, conditions: [] }],
    },
  };
  client.objects.set('/r/c', c);
  w.observe(c);
  assert.equal(w.sync([]), 1);
  await w.idle();
  assert.deepEqual(client.objects.get('/r/c')!.status, { parents: [other] });
  assert.deepEqual(client.requests, ['PUT /r/c']);
  await w.stop();
});
