/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers of the API are read loosely */
/**
 * The relay's HTTP side under the hardening issue: /debug/proxies is paged (bounded whatever the
 * number of proxies); losing the store shows on /readyz and /metrics while the last good snapshot
 * stays served; the hono app keeps the old routes' methods.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { silentLogger } from '../../src/relay/log.js';
import { startRelay, type Relay, type RelayOptions } from '../../src/relay/relay.js';
import { ADS_SERVICE } from '../../src/relay/xds/services.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { XDS_TYPE_URL } from '../../src/xds/type-urls.js';
import { NODE, TestStream } from './protocol-client.js';
import { eventually, publishSet, tempDir } from './store-fixture.js';

const tmp = tempDir('meshsnap-http-hard-');
after(() => tmp.remove());
const T = { timeout: 30_000 };

async function get(
  port: number,
  path: string,
  method = 'GET',
): Promise<{ status: number; text: string; json: () => any }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, signal: AbortSignal.timeout(5000) });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) };
}

async function relayOn(
  store: LocalStore,
  t: { after(fn: () => Promise<void>): void },
  over: Partial<RelayOptions> = {},
): Promise<Relay> {
  const relay = await startRelay({
    store,
    host: '127.0.0.1',
    port: 0,
    httpPort: 0,
    pollMs: 50,
    maxBackoffMs: 100,
    auditFlushMs: 100,
    relayId: 'hard',
    drainTimeoutMs: 500,
    log: silentLogger,
    ...over,
  });
  t.after(() => relay.close());
  return relay;
}

function openStreams(relay: Relay, n: number, t: { after(fn: () => void): void }): TestStream[] {
  const client = new grpc.Client(`127.0.0.1:${relay.port}`, grpc.credentials.createInsecure());
  const streams = Array.from(
    { length: n },
    () => new TestStream(client, `/${ADS_SERVICE}/StreamAggregatedResources`, false),
  );
  t.after(() => {
    for (const s of streams) s.close();
    client.close();
  });
  return streams;
}

test(
  '/debug/proxies pages with ?limit= and ?cursor=: every proxy once, in order; bad parameters are 400',
  T,
  async (t) => {
    const store = new LocalStore(join(tmp.dir, 'paging'));
    await publishSet(store, 'base');
    const relay = await relayOn(store, t);
    const streams = openStreams(relay, 5, t);
    for (const [i, s] of streams.entries())
      s.send({
        node: { ...NODE.productpage, id: NODE.productpage.id.replace('abcde', `p${i}`) },
        type_url: XDS_TYPE_URL.clusters,
      });
    await Promise.all(streams.map((s) => s.next(5000)));

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const body = (await get(relay.httpPort, `/debug/proxies?limit=2${cursor ? `&cursor=${cursor}` : ''}`)).json();
      assert.equal(body.total, 5);
      assert.ok(body.proxies.length <= 2);
      seen.push(...body.proxies.map((p: { nodeId: string }) => p.nodeId));
      cursor = body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    assert.equal(pages, 3);
    assert.deepEqual(seen, [...seen].sort());
    assert.equal(new Set(seen).size, 5);
    assert.equal(
      (await get(relay.httpPort, '/debug/proxies')).json().proxies.length,
      5,
      'default limit (100) covers them',
    );
    for (const bad of ['limit=0', 'limit=1001', 'limit=x', 'cursor=not-a-cursor'])
      assert.equal((await get(relay.httpPort, `/debug/proxies?${bad}`)).status, 400, bad);
  },
);

test(
  'store deleted under a running relay: /readyz and /metrics say so, the last good snapshot stays served',
  T,
  async (t) => {
    const dir = join(tmp.dir, 'lost');
    const store = new LocalStore(dir);
    await publishSet(store, 'base');
    const relay = await relayOn(store, t);
    const before = (await get(relay.httpPort, '/readyz')).json();
    assert.deepEqual(before.store, { ok: true, consecutiveFailures: 0 });

    rmSync(dir, { recursive: true, force: true });
    const ready = await eventually(
      async () => {
        const r = await get(relay.httpPort, '/readyz');
        return r.json().store?.ok === false ? r : undefined;
      },
      10_000,
      'the store loss on /readyz',
    );
    assert.equal(ready.status, 200, 'still serving: no relay is pulled out of service for a store outage by default');
    assert.equal(ready.json().version, 1);
    assert.ok(ready.json().store.consecutiveFailures >= 1);
    assert.match(ready.json().store.lastError.message, /head is gone from the store/);
    const m = (await get(relay.httpPort, '/metrics')).text;
    assert.match(m, /^meshsnap_relay_store_ok 0$/m);
    assert.match(m, /^meshsnap_relay_store_consecutive_failures [1-9]\d*$/m);

    const [s] = openStreams(relay, 1, t);
    s?.send({ node: NODE.productpage, type_url: XDS_TYPE_URL.clusters });
    assert.ok(((await s?.next(5000))?.resources.length ?? 0) > 0, 'a proxy still gets the last good snapshot');
  },
);

test('unreadyAfterStoreFailures: /readyz turns 503 after that many failures in a row', T, async (t) => {
  const dir = join(tmp.dir, 'lost-unready');
  const store = new LocalStore(dir);
  await publishSet(store, 'base');
  const relay = await relayOn(store, t, { unreadyAfterStoreFailures: 2 });
  assert.equal((await get(relay.httpPort, '/readyz')).status, 200);
  rmSync(dir, { recursive: true, force: true });
  const r = await eventually(
    async () => {
      const x = await get(relay.httpPort, '/readyz');
      return x.status === 503 ? x : undefined;
    },
    10_000,
    'readyz 503',
  );
  assert.match(r.json().reason, /store failed \d+ times in a row/);
  assert.equal(r.json().version, 1, 'says what it still serves');
});

test(
  'the hono app: HEAD works on GET routes, other methods are 405, unknown paths 404 with the route list',
  T,
  async (t) => {
    const store = new LocalStore(join(tmp.dir, 'methods'));
    await publishSet(store, 'base');
    const relay = await relayOn(store, t);
    assert.equal((await get(relay.httpPort, '/healthz', 'HEAD')).status, 200);
    assert.equal((await get(relay.httpPort, '/readyz', 'POST')).status, 405);
    const nf = await get(relay.httpPort, '/nope');
    assert.equal(nf.status, 404);
    assert.deepEqual(nf.json().routes, [
      '/healthz',
      '/readyz',
      '/debug/proxies',
      '/debug/snapshot',
      '/metrics',
      'POST /notify',
    ]);
    const m = await fetch(`http://127.0.0.1:${relay.httpPort}/metrics`, { signal: AbortSignal.timeout(5000) });
    assert.match(m.headers.get('content-type') ?? '', /^text\/plain/);
    await m.text();
  },
);
