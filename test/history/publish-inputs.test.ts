/**
 * Where a history publish (`meshsnap compile`, the API) puts its stored inputs: a big publish (a
 * full build of more than LAYERED_MAX entries) carries them in its version's pack, one file, not one
 * loose key each; a small one writes them loose first. Either way every input the record names is
 * readable, and the version recompiles to its digest.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { publishCompiled } from '../../src/history/publish.js';
import { compileDocuments, compileTexts } from '../../src/pipeline.js';
import { isSpooled } from '../../src/snapshot/build/object-spool.js';
import { FileSpool } from '../../src/snapshot/store/file-spool.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { LAYERED_MAX } from '../../src/snapshot/store/put-tree.js';
import { readStoredInputsIndex } from '../../src/snapshot/stored-inputs/index.js';
import { PackedObjects } from '../../src/snapshot/stored-inputs/packed-objects.js';
import { generateMesh } from '../../bench/synthetic.js';
import { sample, STATE, tempStore } from './helpers.js';

/** Every file under `dir`, recursively. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));

async function assertInputsReadable(
  store: ReturnType<typeof tempStore>['store'],
  inputs: string,
  digests: Iterable<string>,
): Promise<void> {
  const index = await readStoredInputsIndex(store, inputs);
  const named = new Set([...index.config.values(), ...index.endpoints.values()]);
  for (const d of digests) {
    assert.ok(named.has(d), `the record's inputs name ${d}`);
    const bytes = await store.getObject(d);
    assert.ok(bytes, `input object ${d} is stored`);
    assert.equal(`sha256:${nodeSha256Hex(bytes)}`, d);
  }
}

test('a big publish carries its stored inputs in its pack: no loose input objects, every one readable', async () => {
  const { store, dir, cleanup } = tempStore();
  try {
    const mesh = generateMesh({ services: 60 });
    const r = compileDocuments(mesh.docs, { hasher: nodeSha256Hex });
    assert.ok(r.snapshot.objects.size + r.snapshot.documents.length > LAYERED_MAX, 'a big publish');
    const published = await publishCompiled(store, 'main', r, {}, '2026-11-25T00:00:00Z');
    assert.equal(published.status, 'published');
    if (published.status !== 'published') return;
    assert.equal(published.record.inputs, r.stored.digest);
    const inputDigests = [...r.stored.objects.keys()];
    for (const d of inputDigests) assert.equal(await store.hasObject(d), false, `${d} is not loose`);
    await assertInputsReadable(store, r.stored.digest, inputDigests);
    // The store holds a handful of files (packs, record, head, documents of the diagnostics), not one per input.
    assert.ok(filesUnder(dir).length < inputDigests.length / 10, `${filesUnder(dir).length} files`);
  } finally {
    cleanup();
  }
});

test('a small publish writes its stored inputs loose first', async () => {
  const { store, cleanup } = tempStore();
  try {
    const r = compileTexts([{ file: 'state.yaml', text: STATE }, sample('destination-rule-all.yaml')], {
      hasher: nodeSha256Hex,
    });
    assert.ok(r.snapshot.objects.size + r.snapshot.documents.length <= LAYERED_MAX, 'a small publish');
    const published = await publishCompiled(store, 'main', r, {}, '2026-11-25T00:00:00Z');
    assert.equal(published.status, 'published');
    const inputDigests = [...r.stored.objects.keys()];
    for (const d of inputDigests) assert.equal(await store.hasObject(d), true, `${d} is loose`);
    await assertInputsReadable(store, r.stored.digest, inputDigests);
  } finally {
    cleanup();
  }
});

test('a big publish from a spool (objects and stored inputs read back one at a time) stores what the in-memory publish stores', async () => {
  const memory = tempStore();
  const spooled = tempStore();
  const spool = FileSpool.open(join(spooled.dir, 'tmp'));
  try {
    const mesh = generateMesh({ services: 60 });
    const inMemory = compileDocuments(mesh.docs, { hasher: nodeSha256Hex });
    const built = compileDocuments(mesh.docs, { hasher: nodeSha256Hex, spool });
    // As `meshsnap compile` does (pipeline.ts validatedDocuments): the stored inputs' bytes spooled too.
    const fromSpool = {
      ...built,
      stored: { ...built.stored, objects: PackedObjects.spooledTo(built.stored.objects, spool) },
    };
    assert.ok(isSpooled(fromSpool.snapshot.objects), 'the snapshot objects are spooled');
    const a = await publishCompiled(memory.store, 'main', inMemory, {}, '2026-11-25T00:00:00Z');
    const b = await publishCompiled(spooled.store, 'main', fromSpool, {}, '2026-11-25T00:00:00Z');
    assert.equal(a.status, 'published');
    assert.equal(b.status, 'published');
    if (a.status !== 'published' || b.status !== 'published') return;
    // The same record (its checkpoint pack's digest included), and the same counts written.
    assert.deepEqual(b.record, a.record);
    assert.deepEqual(
      { objects: b.objectsWritten, documents: b.documentsWritten, bytes: b.bytesWritten },
      { objects: a.objectsWritten, documents: a.documentsWritten, bytes: a.bytesWritten },
    );
    assert.ok(b.objectsWritten >= fromSpool.snapshot.objects.size + fromSpool.stored.objects.size);
    await assertInputsReadable(spooled.store, fromSpool.stored.digest, fromSpool.stored.objects.keys());
  } finally {
    spool.close();
    memory.cleanup();
    spooled.cleanup();
  }
});
