/**
 * A watcher restarted over a store that already serves the same state publishes nothing and
 * touches nothing: no new file, no file written or freshened (the head's record names the same
 * stored inputs, so they are stored already).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { Watcher } from '../../src/watch/watcher.js';
import { baseMesh, pod, slice, handFedWatcher } from './watch-harness.js';

const feed = (w: Watcher, objects: readonly Record<string, unknown>[]): void => {
  for (const o of objects) w.receive(o, String(o['kind']));
};

/** Every file under `dir` with its mtime. */
async function files(dir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(path, (await stat(path)).mtimeMs);
  }
  return out;
}

test('a restart over the same state publishes nothing and writes or touches no file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'meshsnap-restart-'));
  try {
    const store = new LocalStore(dir);
    const objects = [...baseMesh(), pod('reviews-v1-2', 'reviews', 'v1', '10.244.0.13')];
    const first = handFedWatcher(store);
    feed(first, objects);
    const published = await first.compileNow();
    assert.equal(published.publish, 'published');

    // Every file an hour old: a freshen (utimes) would show.
    const old = new Date(Date.now() - 3_600_000);
    for (const path of (await files(dir)).keys()) await utimes(path, old, old);
    const before = await files(dir);

    const restarted = handFedWatcher(new LocalStore(dir));
    feed(restarted, [...objects].reverse()); // informers list in any order
    const round = await restarted.compileNow();
    assert.equal(round.publish, 'unchanged');
    assert.equal(round.version, published.version);
    assert.equal(round.digest, published.digest);
    assert.equal(round.bytesWritten, 0);
    assert.deepEqual(await files(dir), before);

    // And it goes on from there: the next change is published on top of the same head.
    restarted.receive(
      slice('reviews', [
        { ip: '10.244.0.11', pod: 'reviews-v1-1' },
        { ip: '10.244.0.13', pod: 'reviews-v1-2' },
      ]),
      'EndpointSlice',
    );
    const next = await restarted.compileNow();
    assert.equal(next.publish, 'published');
    assert.equal(next.version, published.version + 1);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
