/**
 * A big round's stored inputs (a first round, a restart's differences) ride in the version's pack,
 * not one loose file per object: every reader finds them there (history's verify recompiles from
 * them), a restart over the same state writes nothing, and a restart over other state adds only
 * what the served version's inputs lack.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { generateMesh, withMovedEndpoint } from '../../bench/synthetic.js';
import type { RawDocument } from '../../src/inputs/parse.js';
import { verifyVersion } from '../../src/history/verify.js';
import type { VersionRecord } from '../../src/snapshot/manifest.js';
import { handFedWatcher } from './watch-harness.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { decodePack, packDigests } from '../../src/snapshot/store/packs.js';
import { loadStoredInputs, storedInputsOfDocuments } from '../../src/snapshot/stored-inputs/index.js';
import { Watcher } from '../../src/watch/watcher.js';

const feed = (w: Watcher, docs: readonly RawDocument[]): void => {
  for (const d of docs) w.receive(d.object, String(d.object['kind']));
};

async function looseObjects(store: LocalStore): Promise<string[]> {
  const out: string[] = [];
  for await (const e of store.listObjects()) out.push(e.digest);
  return out.sort();
}

async function packEntries(store: LocalStore, record: VersionRecord): Promise<Set<string>> {
  const out = new Set<string>();
  for (const p of packDigests(record)) {
    const bytes = await store.getObject(p);
    assert.ok(bytes, `pack ${p} is stored`);
    for (const d of decodePack(bytes, nodeSha256Hex).keys()) out.add(d);
  }
  return out;
}

test('a big round stores its inputs in its pack: read back whole, a restart adds only what changed', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'meshsnap-packed-inputs-'));
  try {
    const docs = generateMesh({ services: 120 }).docs; // ~650 objects: more than a loose batch
    const expected = storedInputsOfDocuments(docs, nodeSha256Hex);
    const first = handFedWatcher(new LocalStore(dir));
    feed(first, docs);
    const v1 = await first.compileNow();
    assert.equal(v1.publish, 'published');
    const store = new LocalStore(dir); // a reader that did not write
    const record1 = await store.getVersion('main', v1.version);
    assert.ok(record1);
    assert.equal(record1.inputs, expected.digest);
    assert.deepEqual(await looseObjects(store), packDigests(record1).sort(), 'no loose input object: only the pack');
    const held = await packEntries(store, record1);
    for (const d of expected.objects.keys()) assert.ok(held.has(d), `input object ${d} is in the pack`);
    const loaded = await loadStoredInputs(store, expected.digest);
    assert.equal(loaded.length, expected.count);
    const verified = await verifyVersion(store, record1, nodeSha256Hex);
    assert.deepEqual([verified.ok, verified.reasons], [true, []], 'history recompiles it from its stored inputs');

    // A restart over the same state: nothing published, nothing written.
    const same = handFedWatcher(new LocalStore(dir));
    feed(same, [...docs].reverse());
    const again = await same.compileNow();
    assert.deepEqual([again.publish, again.version, again.bytesWritten], ['unchanged', v1.version, 0]);

    // A restart over other state (one endpoint moved meanwhile): its pack adds no input the served version holds.
    const moved = withMovedEndpoint(docs, 3, '10.99.0.1').docs;
    const restarted = handFedWatcher(new LocalStore(dir));
    feed(restarted, moved);
    const v2 = await restarted.compileNow();
    assert.equal(v2.publish, 'published');
    const record2 = await store.getVersion('main', v2.version);
    assert.ok(record2?.packs);
    const newPack = record2.packs.deltas.at(-1);
    assert.ok(newPack, 'a delta over the served checkpoint');
    const added = await store.getObject(newPack.digest);
    assert.ok(added);
    const movedInputs = storedInputsOfDocuments(moved, nodeSha256Hex);
    const addedInputs = [...decodePack(added, nodeSha256Hex).keys()].filter((d) => movedInputs.objects.has(d));
    assert.equal(addedInputs.length, 1, 'only the moved EndpointSlice is new');
    assert.ok(!held.has(addedInputs[0] as string));
    assert.deepEqual(
      await looseObjects(store),
      [...new Set([...packDigests(record1), ...packDigests(record2)])].sort(),
    );
    const verified2 = await verifyVersion(store, record2, nodeSha256Hex);
    assert.deepEqual([verified2.ok, verified2.reasons], [true, []]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
