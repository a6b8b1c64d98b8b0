/**
 * The watcher's full collections (WatcherOptions.collect): a round that compiles and publishes
 * everything (the first, a restart's first) collects after its stored inputs, the build's
 * consistency check and the build (not after the compile: the check's collection frees both; not
 * after the publish: that freed little, and the first endpoint change after it took ~50 ms
 * instead of ~10 at 5k services); a mesh config change (compiled from scratch) after its check and build; an endpoint change or a config change compiled as
 * a difference never. The snapshots are those of a watcher that does not collect.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LocalStore } from '../../src/snapshot/store/local.js';
import type { Watcher } from '../../src/watch/watcher.js';
import {
  baseMesh,
  destinationRule,
  handFedWatcher,
  meshConfigMap,
  pod,
  service,
  slice,
  virtualService,
} from './watch-harness.js';

type Obj = Record<string, unknown>;

const EPOCH = (): Date => new Date(0);

/** A hand-fed watcher that counts its collections. */
const countingWatcher = (store: LocalStore, counts: { n: number }): Watcher =>
  handFedWatcher(store, EPOCH, () => counts.n++);

const plainWatcher = (store: LocalStore): Watcher => handFedWatcher(store, EPOCH);

const feed = (w: Watcher, objects: readonly Obj[]): void => {
  for (const o of objects) w.receive(o, String(o['kind']));
};

const movedEndpoint = slice('reviews', [
  { ip: '10.244.0.11', pod: 'reviews-v1-1' },
  { ip: '10.244.0.13', pod: 'reviews-v1-2' },
]);

/** The rounds after the first: each is a list of objects received, then one round. */
const ROUNDS: readonly { readonly name: string; readonly objects: readonly Obj[]; readonly collections: number }[] = [
  {
    name: 'endpoint change',
    objects: [movedEndpoint],
    collections: 0,
  },
  { name: 'config change', objects: [virtualService('reviews', [80, 20])], collections: 0 },
  { name: 'new service', objects: [service('ratings')], collections: 0 },
  { name: 'mesh config change', objects: [meshConfigMap('REGISTRY_ONLY')], collections: 2 },
];

test('the watcher collects in full rounds only, and publishes what a watcher that does not collect publishes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'meshsnap-collect-'));
  try {
    const counts = { n: 0 };
    const collecting = countingWatcher(new LocalStore(join(dir, 'a')), counts);
    const plain = plainWatcher(new LocalStore(join(dir, 'b')));
    const first = [
      ...baseMesh(),
      pod('reviews-v1-2', 'reviews', 'v1', '10.244.0.13'),
      destinationRule('reviews'),
      virtualService('reviews', [50, 50]),
    ];
    feed(collecting, first);
    feed(plain, first);
    const round = await collecting.compileNow();
    assert.equal(round.mode, 'full');
    assert.equal(counts.n, 3, 'first round: stored inputs, check, build');
    assert.equal(round.digest, (await plain.compileNow()).digest);

    for (const step of ROUNDS) {
      counts.n = 0;
      feed(collecting, step.objects);
      feed(plain, step.objects);
      const r = await collecting.compileNow();
      assert.equal(r.publish, 'published', step.name);
      assert.equal(counts.n, step.collections, step.name);
      assert.equal(r.digest, (await plain.compileNow()).digest, step.name);
    }
    assert.deepEqual(
      collecting.rounds.map((r) => r.mode),
      ['full', 'incremental', 'incremental', 'incremental', 'full'],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a restarted watcher collects in its first round and publishes nothing', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'meshsnap-collect-restart-'));
  try {
    const objects = [...baseMesh(), pod('reviews-v1-2', 'reviews', 'v1', '10.244.0.13')];
    const first = countingWatcher(new LocalStore(dir), { n: 0 });
    feed(first, objects);
    const published = await first.compileNow();
    assert.equal(published.publish, 'published');

    const counts = { n: 0 };
    const restarted = countingWatcher(new LocalStore(dir), counts);
    feed(restarted, [...objects].reverse());
    const round = await restarted.compileNow();
    assert.equal(round.publish, 'unchanged');
    assert.equal(round.digest, published.digest);
    assert.equal(round.bytesWritten, 0);
    assert.equal(counts.n, 3);

    counts.n = 0;
    restarted.receive(movedEndpoint, 'EndpointSlice');
    assert.equal((await restarted.compileNow()).mode, 'incremental');
    assert.equal(counts.n, 0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
