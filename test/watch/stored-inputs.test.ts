import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { canonicalJson } from '../../src/canonical-json.js';
import {
  buildStoredInputs,
  keyString,
  loadStoredInputs,
  putStoredInputs,
  readStoredInputsIndex,
  storedDocument,
  storedInputsOfDocuments,
  storedObject,
  StoredInputsTree,
  STORED_INPUTS_SCHEMA_V1,
  UNKEYED_KIND,
  type StoredObject,
} from '../../src/snapshot/stored-inputs/index.js';
import { digestOf, utf8Bytes } from '../../src/snapshot/digest.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { pod, slice } from './watch-harness.js';

const h = nodeSha256Hex;
const obj = (raw: Record<string, unknown>): StoredObject => storedObject(raw, h)!;

/** Enough objects for a trie several levels deep (> 32 · 16 entries in the endpoints layer). */
function objects(n: number, tag = ''): StoredObject[] {
  const out: StoredObject[] = [];
  for (let i = 0; i < n; i++) {
    out.push(obj(pod(`p-${i}`, `app-${i % 50}`, `v${tag}`, `10.1.${Math.floor(i / 250)}.${i % 250}`)));
    if (i % 3 === 0)
      out.push(
        obj({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: `s-${i}`, namespace: 'default' },
          spec: { ports: [{ port: 80 }] },
        }),
      );
  }
  return out;
}

test('stored inputs tree: updated object by object it gives the documents and root a build from scratch gives', () => {
  const base = objects(700);
  const tree = new StoredInputsTree(h);
  for (const o of base) tree.set(o);
  const first = tree.commit();
  const scratch = buildStoredInputs(base, h);
  assert.equal(first.digest, scratch.digest);
  // Every object, in digest order (string order of the digests).
  const digests = [...first.objects.keys()];
  assert.equal(digests.length, new Set(base.map((o) => o.digest)).size);
  assert.deepEqual(digests, [...digests].sort());
  assert.deepEqual(
    first.documents.map((d) => d.digest),
    scratch.documents.map((d) => d.digest),
  );

  // Changes: a few replaced, one deleted, one added.
  const next = [...base];
  const changedPod = obj(pod('p-5', 'app-5', 'v', '10.9.9.9'));
  const added = obj(slice('reviews', [{ ip: '10.9.9.9', pod: 'p-5' }]));
  next[next.findIndex((o) => keyString(o.key) === keyString(changedPod.key))] = changedPod;
  const gone = next.splice(10, 1)[0]!;
  next.push(added);
  tree.set(changedPod);
  tree.delete(keyString(gone.key));
  tree.set(added);
  const delta = tree.commit();
  const scratch2 = buildStoredInputs([...next].reverse(), h);
  assert.equal(delta.digest, scratch2.digest);
  assert.notEqual(delta.digest, first.digest);
  // Only the rewritten leaves and paths, and only the new objects.
  assert.ok(delta.documents.length <= 12, `${delta.documents.length} documents`);
  assert.deepEqual([...delta.objects.keys()].sort(), [changedPod.digest, added.digest].sort());
  const all = new Set(scratch2.documents.map((d) => d.digest));
  for (const d of delta.documents) assert.ok(all.has(d.digest));
  assert.deepEqual(
    tree.complete().documents.map((d) => d.digest),
    scratch2.documents.map((d) => d.digest),
  );

  // Nothing changed: no documents.
  assert.equal(tree.commit().documents.length, 0);
});

test('stored inputs: no origin, any order; duplicates keep the smaller digest; invalid documents are stored redacted, unkeyed ones not at all', () => {
  const a = pod('a', 'x', 'v1', '10.0.0.1');
  const b = { ...pod('a', 'x', 'v2', '10.0.0.2') };
  const unnamed = { apiVersion: 'v1', kind: 'Service', metadata: {}, spec: { ports: 'nope' } };
  const invalid = {
    apiVersion: 'networking.istio.io/v1',
    kind: 'VirtualService',
    metadata: { name: 'bad', namespace: 'default' },
    spec: { http: 7 },
  };
  const docs = [a, b, unnamed, invalid].map((object, i) => ({ file: `f${i}.yaml`, index: i, object }));
  const one = storedInputsOfDocuments(docs, h);
  const two = storedInputsOfDocuments(
    [...docs].reverse().map((d, i) => ({ ...d, file: 'other.json', index: i })),
    h,
  );
  assert.equal(one.digest, two.digest);
  assert.equal(one.count, 2);
  const kept = [obj(a), obj(b)].sort((x, y) => (x.digest < y.digest ? -1 : 1))[0]!;
  assert.ok(one.objects.has(kept.digest));
  assert.equal(storedDocument(unnamed, h), undefined);
  const bad = obj(invalid);
  assert.ok(one.objects.has(bad.digest));
  assert.deepEqual(bad.key, { kind: 'VirtualService', namespace: 'default', name: 'bad' });
  assert.equal(bad.object.spec, undefined, 'a rejected object keeps no content');
  assert.equal(UNKEYED_KIND, '~');
  // Non-JSON numbers never throw.
  assert.doesNotThrow(() =>
    storedDocument({ kind: 'VirtualService', metadata: { name: 'n' }, spec: { x: Number.NaN, y: Infinity } }, h),
  );
});

test('stored inputs: written with putDocuments, read back as documents; v1 manifests still read', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'meshsnap-inputs-'));
  try {
    const store = new LocalStore(dir);
    const docs = objects(100).map((o, i) => ({ file: 'x', index: i, object: o.object }));
    const built = storedInputsOfDocuments(docs, h);
    const wrote = await putStoredInputs(store, built);
    assert.equal(wrote.documentsWritten, built.documents.length);
    assert.equal(wrote.objectsWritten, built.objects.size);
    assert.ok(await store.hasDocument(built.digest));
    assert.equal((await putStoredInputs(store, built)).bytesWritten, 0);
    const loaded = await loadStoredInputs(store, built.digest);
    assert.equal(loaded.length, built.count);
    assert.equal(storedInputsOfDocuments(loaded, h).digest, built.digest);

    // A v1 manifest: one flat object.
    const o = obj(pod('old', 'x', 'v1', '10.0.0.9'));
    await store.putObject(o.digest, o.bytes);
    const v1 = utf8Bytes(
      canonicalJson({
        schema: STORED_INPUTS_SCHEMA_V1,
        layers: { config: {}, endpoints: { [keyString(o.key)]: o.digest } },
      }),
    );
    const v1Digest = digestOf(v1, h);
    await store.putObject(v1Digest, v1);
    const index = await readStoredInputsIndex(store, v1Digest);
    assert.deepEqual([...index.endpoints], [[keyString(o.key), o.digest]]);
    assert.equal((await loadStoredInputs(store, v1Digest))[0]?.file, keyString(o.key));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
