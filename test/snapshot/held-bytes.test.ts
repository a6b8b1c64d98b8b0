/**
 * The SnapshotBuilder keeps digests between builds, not object bytes (src/snapshot/build/held-bytes.ts):
 * once its snapshot is published and the next one built, the bytes are garbage; a later full
 * build still lists every object, encoding again those it did not encode itself.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { CompileOutput } from '../../src/compile/types.js';
import { buildSnapshot, SnapshotBuilder } from '../../src/snapshot/build.js';
import { A, cla, INFO, sampleOutput } from './sample-output.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Weak references to the bytes of every object of a full build (the snapshot itself is not kept). */
function builtBytes(builder: SnapshotBuilder, out: CompileOutput): WeakRef<Uint8Array>[] {
  const snapshot = builder.build(out);
  assert.ok(snapshot.objects.size > 5);
  return [...snapshot.objects.values()].map((b) => new WeakRef(b));
}

test('a builder keeps no object bytes: after the next build they are garbage, and a later full build lists every object again as a fresh build does', async () => {
  const builder = new SnapshotBuilder(INFO);
  const out = sampleOutput();
  const weak = builtBytes(builder, out);
  const moved = cla(A, ['10.9.9.9']);
  const delta = builder.applyDelta({ endpoints: { endpoints: { upserts: new Map([[A, moved]]) } } });
  assert.equal(delta.objects.size, 1, 'a delta lists only its new object');
  await new Promise((resolve) => setImmediate(resolve)); // weak references made in a job hold until it ends
  gc();
  assert.deepEqual(weak.filter((w) => w.deref() !== undefined).length, 0, 'no bytes of the first build are alive');

  // The same message objects again, but the moved endpoint: nothing to encode for the diff, every object to list.
  out.groups.get('endpoints')?.endpoints.set(A, moved);
  const full = builder.build(out);
  assert.equal(full.digest, delta.digest);
  const fresh = sampleOutput();
  fresh.groups.get('endpoints')?.endpoints.set(A, moved);
  const expected = buildSnapshot(fresh, INFO);
  assert.equal(full.digest, expected.digest);
  assert.deepEqual([...full.objects.keys()], [...expected.objects.keys()]);
  for (const [digest, bytes] of expected.objects) assert.deepEqual(full.objects.get(digest), bytes, digest);
  assert.deepEqual(full.documents, expected.documents);
  assert.deepEqual(full.counts, expected.counts);
});

test('keepObjects false: the builder remembers the last snapshot without its bytes, and its deltas are the same', async () => {
  const lean = new SnapshotBuilder(INFO, { keepObjects: false });
  const keeping = new SnapshotBuilder(INFO);
  const weak = builtBytes(lean, sampleOutput());
  const kept = keeping.build(sampleOutput());
  assert.equal(lean.snapshot?.digest, kept.digest);
  assert.deepEqual(lean.snapshot?.content, kept.content);
  assert.deepEqual(lean.snapshot?.counts, kept.counts);
  assert.equal(lean.snapshot?.objects.size, 0);
  assert.deepEqual(lean.snapshot?.documents, []);
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  assert.equal(weak.filter((w) => w.deref() !== undefined).length, 0, 'no bytes of the published build are alive');

  const delta = { endpoints: { endpoints: { upserts: new Map([[A, cla(A, ['10.9.9.9'])]]) } } };
  const a = lean.applyDelta(delta);
  const b = keeping.applyDelta(delta);
  assert.equal(a.digest, b.digest);
  assert.deepEqual([...a.objects], [...b.objects]);
  assert.deepEqual(a.documents, b.documents);
  assert.deepEqual(a.content, b.content);
  assert.equal(lean.snapshot?.base, kept.digest);
  assert.equal(lean.snapshot?.objects.size, 0);
  assert.deepEqual(lean.snapshot?.content, b.content);
});
