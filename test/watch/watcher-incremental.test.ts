import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storedObject } from '../../src/snapshot/stored-inputs/index.js';
import { compileDocuments } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { baseMesh, meshConfigMap, pod, recompileStored, slice, startHarness } from './watch-harness.js';

test(
  'endpoint events: each round is a snapshot delta and an inputs tree update, and the published digest equals a full compile and build',
  { timeout: 60_000 },
  async () => {
    const h = await startHarness();
    try {
      const first = (await h.head())!;
      assert.equal(h.watcher.rounds[0]?.mode, 'full');
      assert.equal(first.inputs, first.inputsDigest, 'the version record names the snapshot inputs');
      const firstBytes = h.watcher.rounds[0]!.bytesWritten;

      type Obj = ReturnType<typeof pod>;
      const key = (o: Obj): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
      const objects = new Map(baseMesh().map((o) => [key(o), o]));
      const events: Obj[] = [
        slice('reviews', [{ ip: '10.244.0.11', pod: 'reviews-v1-1' }]),
        slice('reviews', [
          { ip: '10.244.0.11', pod: 'reviews-v1-1' },
          { ip: '10.244.0.13', pod: 'reviews-v2-1' },
        ]),
        slice('productpage', [{ ip: '10.244.0.21', pod: 'productpage-v1-1' }]),
        // A pod update that keeps its labels: still the endpoint layer.
        pod('reviews-v2-1', 'reviews', 'v2', '10.244.0.13'),
      ];
      for (const e of events) {
        h.server.apply(e);
        objects.set(key(e), e);
        await h.settle(1);
        const round = h.watcher.rounds.at(-1)!;
        assert.equal(round.mode, 'incremental');
        assert.equal(round.publish, 'published');
        assert.ok(round.bytesWritten < firstBytes / 3, `${round.bytesWritten} of ${firstBytes} bytes`);

        const head = (await h.head())!;
        // A full compile + full build of the same objects (in another order, with server noise).
        const docs = [...objects.values()].reverse().map((object, index) => ({
          file: 'all.yaml',
          index,
          object: { ...object, metadata: { ...object.metadata, uid: 'x', resourceVersion: '1' } },
        }));
        const full = compileDocuments(docs, { hasher: nodeSha256Hex });
        assert.equal(head.digest, full.snapshot.digest);
        assert.equal(head.inputs, full.stored.digest);
        assert.equal(head.inputsDigest, full.stored.digest);
        assert.equal(await recompileStored(h.store, head), head.digest);
        // The object is stored under its canonical digest (in the version's pack: not loose).
        const stored = storedObject(e, nodeSha256Hex)!.digest;
        assert.ok(await h.store.getObject(stored));
        assert.equal(await h.store.hasObject(stored), false, 'a round writes its inputs into its pack, not loose');
      }
    } finally {
      await h.close();
    }
  },
);

test(
  'a failed publish is repaired: the next round writes every inputs document and a complete snapshot',
  { timeout: 30_000 },
  async () => {
    const h = await startHarness();
    try {
      const before = (await h.head())!;
      // The store refuses every write during one round: the round fails after its delta was
      // computed (its pack is retried as a new checkpoint, refused too).
      let fail = true;
      const refuse =
        <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
        async (...args: A): Promise<R> => {
          if (fail) throw new Error('disk full');
          return write(...args);
        };
      h.store.putDocuments = refuse(h.store.putDocuments.bind(h.store));
      h.store.putLayered = refuse(h.store.putLayered.bind(h.store));
      h.store.putObject = refuse(h.store.putObject.bind(h.store));
      h.server.apply(slice('reviews', [{ ip: '10.244.0.11', pod: 'reviews-v1-1' }]));
      await assert.rejects(h.settle(1), /disk full/);
      fail = false;
      h.logs.length = 0;
      assert.equal((await h.head())!.version, before.version);

      h.server.apply(slice('productpage', [{ ip: '10.244.0.22', pod: 'productpage-v1-1' }]));
      await h.settle(1);
      const head = (await h.head())!;
      assert.equal(head.version, before.version + 1);
      assert.equal(h.watcher.rounds.at(-1)?.mode, 'full');
      assert.equal(await recompileStored(h.store, head), head.digest);
      assert.ok(await h.store.getSnapshot(head.digest));
    } finally {
      await h.close();
    }
  },
);

test(
  'a full round after the first is stored as a delta of the head: it, and the delta after it, equal a full compile and build, and every object is readable',
  { timeout: 60_000 },
  async () => {
    const h = await startHarness();
    try {
      const firstBytes = h.watcher.rounds[0]!.bytesWritten;
      type Obj = ReturnType<typeof pod>;
      const key = (o: Obj): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
      const objects = new Map(baseMesh().map((o) => [key(o), o]));
      const events: [Obj, string][] = [
        // A new pod: compiled in full, handed on as a delta (classes may change).
        [pod('reviews-v3-1', 'reviews', 'v3', '10.244.0.31'), 'incremental'],
        // A mesh config change (an ingress class, and no Ingress): a full round, stored as a delta of the head.
        [
          {
            ...meshConfigMap('ALLOW_ANY'),
            data: { mesh: 'outboundTrafficPolicy: {mode: ALLOW_ANY}\ningressClass: other\n' },
          },
          'full',
        ],
        [
          slice('reviews', [
            { ip: '10.244.0.11', pod: 'reviews-v1-1' },
            { ip: '10.244.0.31', pod: 'reviews-v3-1' },
          ]),
          'incremental',
        ],
        [pod('ratings-v2-1', 'ratings', 'v2', '10.244.0.41'), 'incremental'],
        [meshConfigMap('ALLOW_ANY'), 'full'],
      ];
      for (const [e, mode] of events) {
        h.server.apply(e);
        objects.set(key(e), e);
        await h.settle(1);
        const round = h.watcher.rounds.at(-1)!;
        assert.equal(round.mode, mode);
        assert.equal(round.publish, 'published');
        assert.ok(round.bytesWritten < firstBytes / 3, `${round.bytesWritten} of ${firstBytes} bytes`);
        const head = (await h.head())!;
        const docs = [...objects.values()].map((object, index) => ({ file: 'all.yaml', index, object }));
        const full = compileDocuments(docs, { hasher: nodeSha256Hex });
        assert.equal(head.digest, full.snapshot.digest);
        assert.equal(await recompileStored(h.store, head), head.digest);
        const content = await h.store.getSnapshot(head.digest);
        assert.deepEqual(content, full.snapshot.content);
        for (const digest of full.snapshot.objects.keys()) assert.ok(await h.store.getObject(digest), digest);
      }
    } finally {
      await h.close();
    }
  },
);
