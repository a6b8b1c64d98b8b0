/** The store follower: boot, switch on a new head, refuse corrupt or missing objects, keep serving the last good snapshot. */
import assert from 'node:assert/strict';
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SnapshotFollower } from '../../src/relay/follower.js';
import { loadServedSnapshot, SnapshotLoadError } from '../../src/relay/snapshot/load.js';
import type { LoadedSnapshot } from '../../src/relay/snapshot/served-snapshot.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { XDS_TYPES } from '../../src/xds/type-urls.js';
import { BOOKINFO_NODES, compileSet, corruptObject, newObjects, publishSet, tempDir } from './store-fixture.js';
import { packDigests } from '../../src/snapshot/store/packs.js';

const tmp = tempDir();
after(() => tmp.remove());
let n = 0;
const freshStore = (): LocalStore => new LocalStore(join(tmp.dir, `store-${++n}`));

function follower(store: LocalStore, switched: LoadedSnapshot[], errors: unknown[] = []): SnapshotFollower {
  // A long poll period: the tests drive polls with pollNow().
  return new SnapshotFollower({
    store,
    channel: 'main',
    pollMs: 60_000,
    watchHead: false,
    onSnapshot: (s) => switched.push(s),
    onError: (e) => errors.push(e),
  });
}

test(
  'loads a version: every class placed, resources served from the stored bytes, maps shared',
  { timeout: 30_000 },
  async () => {
    const store = freshStore();
    const head = await publishSet(store, 'base');
    const s = await loadServedSnapshot(store, 'main', head);
    assert.equal(s.version, 1);
    assert.equal(s.digest, head.digest);
    const built = compileSet('base').snapshot;
    assert.equal(s.objects.size, built.objects.size);

    const placed = s.classify(BOOKINFO_NODES.productpage);
    assert.ok(placed.ok, JSON.stringify(placed));
    for (const type of XDS_TYPES) {
      const res = s.resources(placed.classId, type);
      assert.ok(res && res.size > 0, type);
      for (const r of res.values())
        assert.deepEqual(Buffer.from(r.bytes), Buffer.from(built.objects.get(r.digest) ?? []));
      assert.match(s.typeVersion(placed.classId, type), /^[0-9a-f]{16}$/);
    }
    const grpc = s.classify(BOOKINFO_NODES.grpcClient);
    assert.ok(grpc.ok);
    assert.equal(grpc.classId, 'grpc/default');

    // The same (name, digest) is one object in every class that gets it.
    const other = s.classify(BOOKINFO_NODES.reviewsV2);
    assert.ok(other.ok);
    const a = s.resources(placed.classId, 'clusters');
    const b = s.resources(other.classId, 'clusters');
    const shared = [...(a?.keys() ?? [])].filter((k) => b?.has(k));
    assert.ok(shared.length > 0);
    for (const k of shared) if (a?.get(k)?.digest === b?.get(k)?.digest) assert.equal(a?.get(k), b?.get(k));

    const bad = s.classify({ id: 'nonsense', metadata: {} });
    assert.equal(bad.ok, false);
    assert.equal(!bad.ok && bad.code, 'invalid-argument');
    const unknownNs = s.classify({ id: 'sidecar~10.0.0.1~x.nowhere~nowhere.svc.cluster.local', metadata: {} });
    assert.equal(!unknownNs.ok && unknownNs.code, 'not-found');
  },
);

test(
  'boot on an empty channel: not ready with a reason; ready once a version is published',
  { timeout: 30_000 },
  async (t) => {
    const store = freshStore();
    const switched: LoadedSnapshot[] = [];
    const f = follower(store, switched);
    t.after(() => f.stop());
    await f.start();
    assert.equal(f.status().ready, false);
    assert.match(String(f.status().reason), /no versions yet/);

    await publishSet(store, 'base');
    await f.pollNow();
    const st = f.status();
    assert.equal(st.ready, true, JSON.stringify(st));
    assert.equal(st.serving?.version, 1);
    assert.equal(st.lastError, undefined);
    assert.equal(switched.length, 1);

    await f.pollNow(); // same head: nothing new
    assert.equal(switched.length, 1);
  },
);

test(
  'a corrupt object in a new version: refused, the last good one stays, a later good version is taken',
  { timeout: 30_000 },
  async (t) => {
    const store = freshStore();
    const switched: LoadedSnapshot[] = [];
    const errors: unknown[] = [];
    const f = follower(store, switched, errors);
    t.after(() => f.stop());
    await publishSet(store, 'base');
    await f.start();
    assert.equal(f.snapshot?.version, 1);

    const fresh = newObjects('base', 'reviews50');
    assert.ok(fresh.length > 0);
    await publishSet(store, 'reviews50');
    corruptObject(store, fresh[0] as string);
    await f.pollNow();
    let st = f.status();
    assert.equal(st.ready, true);
    assert.equal(st.serving?.version, 1, 'still serving the last good version');
    assert.equal(st.head?.version, 2);
    assert.equal(st.lastError?.version, 2);
    assert.match(String(st.lastError?.message), /corrupt object/);
    assert.match(String(st.reason), /head version 2 refused/);
    assert.equal(st.consecutiveFailures, 1);
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof SnapshotLoadError);
    assert.equal(switched.length, 1);

    // Retried (still bad): failures grow, the served version does not move.
    await f.pollNow();
    assert.equal(f.status().consecutiveFailures, 2);
    assert.equal(f.snapshot?.version, 1);

    // A good version 3 (objects not shared with the corrupt one) is loaded and served.
    await publishSet(store, 'reviewsV3');
    assert.ok(newObjects('reviewsV3', 'reviews50').includes(fresh[0] as string), 'v3 must not use the corrupt object');
    await f.pollNow();
    st = f.status();
    assert.equal(st.serving?.version, 3, JSON.stringify(st));
    assert.equal(st.consecutiveFailures, 0);
    assert.equal(st.lastError, undefined);
    assert.equal(switched.length, 2);

    // Unchanged resources keep their version string (nothing to push for them).
    const [v1, v3] = switched as [LoadedSnapshot, LoadedSnapshot];
    const placed = v1.classify(BOOKINFO_NODES.grpcClient);
    assert.ok(placed.ok);
    assert.equal(v3.typeVersion(placed.classId, 'endpoints'), v1.typeVersion(placed.classId, 'endpoints'));
  },
);

test(
  'a missing object refuses the version; nothing is served at boot until a complete version exists',
  { timeout: 30_000 },
  async (t) => {
    const store = freshStore();
    const head = await publishSet(store, 'base');
    const digest = [...compileSet('base').snapshot.objects.keys()][0] as string;
    unlinkSync(store.objectPath(digest));
    // The version's packs hold a copy of every object (a cold start reads those): remove them too.
    for (const pack of packDigests((await store.getVersion('main', head.version)) ?? {}))
      unlinkSync(store.objectPath(pack));
    await assert.rejects(loadServedSnapshot(store, 'main', head), /missing from the store/);

    const switched: LoadedSnapshot[] = [];
    const f = follower(store, switched);
    t.after(() => f.stop());
    await f.start();
    assert.equal(f.status().ready, false);
    assert.match(String(f.status().reason), /missing/);
    assert.equal(switched.length, 0);
  },
);

test('store errors back off exponentially, capped', { timeout: 30_000 }, async (t) => {
  let calls = 0;
  const broken = {
    readChannel: async () => {
      calls++;
      throw new Error('store unreachable');
    },
  } as unknown as LocalStore;
  const f = new SnapshotFollower({
    store: broken,
    channel: 'main',
    pollMs: 20,
    maxBackoffMs: 80,
    onSnapshot: () => undefined,
  });
  t.after(() => f.stop());
  await f.start();
  assert.match(String(f.status().reason), /unreachable/);
  await new Promise((r) => setTimeout(r, 500));
  // 20 + 40 + 80 + 80 + … ms: about 7 attempts in 0.5 s, not 25.
  assert.ok(calls >= 3 && calls <= 10, `calls ${calls}`);
  const st = f.status();
  assert.ok(st.consecutiveFailures >= 3);
  assert.ok(st.nextAttemptAt && Date.parse(st.nextAttemptAt) - Date.now() <= 80);
});
