/**
 * Push, not poll: a relay reads a new head as soon as it hears of it. The folder store's
 * file-system watch, a publisher's POST /notify, and the watcher's --notify client. Every follower
 * here polls once an hour, so a switch within the test's bound can only come from a hint.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SnapshotFollower } from '../../src/relay/follower.js';
import { startRelay } from '../../src/relay/relay.js';
import type { LoadedSnapshot } from '../../src/relay/snapshot/served-snapshot.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import type { RelayStore } from '../../src/snapshot/store/store.js';
import { parseNotifyTarget, relayNotifier } from '../../src/watch/relay-notify.js';
import { eventually, publishSet, tempDir } from './store-fixture.js';

const tmp = tempDir();
after(() => tmp.remove());
let n = 0;
const freshStore = (): LocalStore => new LocalStore(join(tmp.dir, `store-${++n}`));
const HOUR = 3_600_000;

/** The store without its head watch: what a relay over S3 or R2 sees. */
function withoutHeadWatch(store: LocalStore): RelayStore {
  return new Proxy(store, {
    get: (target, prop, receiver) => (prop === 'watchHead' ? undefined : Reflect.get(target, prop, receiver)),
  });
}

test(
  'folder store: a published head reaches the follower through the file-system watch',
  { timeout: 30_000 },
  async () => {
    const store = freshStore();
    await publishSet(store, 'base');
    const switched: LoadedSnapshot[] = [];
    const follower = new SnapshotFollower({
      store,
      channel: 'main',
      pollMs: HOUR,
      onSnapshot: (s) => switched.push(s),
    });
    await follower.start();
    try {
      assert.deepEqual(
        switched.map((s) => s.version),
        [1],
      );
      const v2 = await publishSet(store, 'reviews50');
      await eventually(() => switched.length === 2, 10_000);
      assert.equal(switched[1]?.version, v2.version);
      assert.equal(switched[1]?.digest, v2.digest);
    } finally {
      await follower.stop();
    }
  },
);

test(
  'folder store: the watch starts once the channel exists (a relay started before any publish)',
  { timeout: 30_000 },
  async () => {
    const store = freshStore();
    const switched: LoadedSnapshot[] = [];
    const follower = new SnapshotFollower({ store, channel: 'main', pollMs: 50, onSnapshot: (s) => switched.push(s) });
    await follower.start();
    try {
      assert.equal(switched.length, 0);
      await publishSet(store, 'base'); // the channel's folder appears; the 50 ms poll finds v1 and sets up the watch
      await eventually(() => switched.length === 1, 10_000);
    } finally {
      await follower.stop();
    }
  },
);

test(
  'relay: POST /notify makes it read the head now; other channels 404, bad names 400, GET 405',
  { timeout: 60_000 },
  async () => {
    const local = freshStore();
    await publishSet(local, 'base');
    const relay = await startRelay({
      store: withoutHeadWatch(local),
      port: 0,
      httpPort: 0,
      host: '127.0.0.1',
      pollMs: HOUR,
    });
    try {
      assert.equal(relay.follower.snapshot?.version, 1);
      const v2 = await publishSet(local, 'reviews50');
      const base = `http://127.0.0.1:${relay.httpPort}`;
      const res = await fetch(`${base}/notify?channel=main`, { method: 'POST' });
      assert.equal(res.status, 202);
      await eventually(() => relay.follower.snapshot?.version === v2.version, 10_000);

      assert.equal((await fetch(`${base}/notify?channel=other`, { method: 'POST' })).status, 404);
      assert.equal((await fetch(`${base}/notify?channel=..%2Fx`, { method: 'POST' })).status, 400);
      assert.equal((await fetch(`${base}/notify`, { method: 'GET' })).status, 405);
      assert.equal((await fetch(`${base}/readyz`, { method: 'POST' })).status, 405);
      // Without a channel the relay's own is meant.
      const v3 = await publishSet(local, 'reviewsV3');
      assert.equal((await fetch(`${base}/notify`, { method: 'POST' })).status, 202);
      await eventually(() => relay.follower.snapshot?.version === v3.version, 10_000);
    } finally {
      await relay.close();
    }
  },
);

test(
  'a burst of hints coalesces: one read after the one in progress, not one per hint',
  { timeout: 30_000 },
  async () => {
    const local = freshStore();
    await publishSet(local, 'base');
    let reads = 0;
    const counting = new Proxy(withoutHeadWatch(local), {
      get: (target, prop, receiver) => {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop === 'readChannel' && typeof v === 'function')
          return (...args: unknown[]) => {
            reads++;
            return (v as (...a: unknown[]) => unknown).apply(local, args);
          };
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(local) : v;
      },
    }) as RelayStore;
    const follower = new SnapshotFollower({
      store: counting,
      channel: 'main',
      pollMs: HOUR,
      onSnapshot: () => undefined,
    });
    await follower.start();
    try {
      const before = reads;
      for (let i = 0; i < 100; i++) follower.hint();
      await eventually(async () => {
        await new Promise((r) => setTimeout(r, 50));
        return reads > before;
      }, 10_000);
      await new Promise((r) => setTimeout(r, 200));
      assert.ok(reads - before <= 2, `100 hints caused ${reads - before} head reads`);
    } finally {
      await follower.stop();
    }
  },
);

test(
  'watch --notify client: one POST per relay, dns+ targets reach every resolved address',
  { timeout: 30_000 },
  async () => {
    const seen: { url: string; local: string; method: string }[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      seen.push({ url: req.url ?? '', local: req.socket.localAddress ?? '', method: req.method ?? '' });
      res.writeHead(202).end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '0.0.0.0', r));
    const port = (server.address() as AddressInfo).port;
    const warnings: string[] = [];
    try {
      const notifier = relayNotifier([`http://127.0.0.1:${port}`, `dns+http://relays.meshsnap.invalid:${port}`], {
        resolve: async () => ['127.0.0.2', '127.0.0.3', '127.0.0.2'],
        log: (_level, event) => warnings.push(event),
      });
      await notifier.notify('main');
      assert.deepEqual(seen.map((s) => [s.method, s.url, s.local]).sort(), [
        ['POST', '/notify?channel=main', '127.0.0.1'],
        ['POST', '/notify?channel=main', '127.0.0.2'],
        ['POST', '/notify?channel=main', '127.0.0.3'],
      ]);
      assert.equal(warnings.length, 0, warnings.join());

      // A relay that is down: warned once, not on every publish; publishing is never held up by it.
      const down = relayNotifier(['http://127.0.0.1:1'], {
        log: (_level, event) => warnings.push(event),
        timeoutMs: 500,
      });
      await down.notify('main');
      await down.notify('main');
      assert.deepEqual(warnings, ['watch.notify_failed']);
    } finally {
      server.close();
    }
    assert.throws(() => parseNotifyTarget('ftp://x'), /use http\(s\):\/\/ or dns\+http\(s\):\/\//);
    assert.throws(() => parseNotifyTarget('not a url'), /not a URL/);
  },
);
