/**
 * The watcher reads (validates) each object once, on arrival (src/watch/object-cache.ts): the value
 * it keeps must be exactly what reading the object's stored bytes gives — the value the InputSet
 * held before, when it read every object a second time — for every document of the fixtures,
 * examples, golden cases and the synthetic mesh, and for objects as an API server sends them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { generateMesh } from '../../bench/synthetic.js';
import { buildInputSet } from '../../src/inputs/load.js';
import { parseDocuments, type RawDocument } from '../../src/inputs/parse.js';
import type { InputSet } from '../../src/model/inputs.js';
import { keyString } from '../../src/snapshot/stored-inputs/index.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { ObjectCache, type CachedObject } from '../../src/watch/object-cache.js';
import { allYamlInputs } from '../helpers/paths.js';
import { pod, service } from './watch-harness.js';

/** What reading the entry's stored bytes alone gives: its one value and the list it is in, and the diagnostics. */
function readFromBytes(o: CachedObject): { bucket?: string; value?: unknown; diagnostics: InputSet['diagnostics'] } {
  const inputs = buildInputSet([{ file: keyString(o.key), index: 0, object: o.object }]);
  for (const [bucket, list] of Object.entries(inputs))
    if (Array.isArray(list) && bucket !== 'diagnostics' && list.length > 0)
      return { bucket, value: list[0], diagnostics: inputs.diagnostics };
  return { diagnostics: inputs.diagnostics };
}

/** Every entry's arrival reading against its bytes' reading; how many entries kept one. */
function assertSameReading(docs: readonly RawDocument[], label: string): number {
  let kept = 0;
  for (const doc of docs) {
    const cache = new ObjectCache(nodeSha256Hex);
    cache.upsert(doc.object);
    for (const o of cache.values()) {
      const where = `${label} ${doc.file}#${doc.index} ${keyString(o.key)}`;
      if (!o.read) continue;
      kept++;
      const fromBytes = readFromBytes(o);
      assert.deepEqual(fromBytes.diagnostics, [], where);
      assert.equal(o.read.bucket, fromBytes.bucket, where);
      assert.deepEqual(o.read.value, fromBytes.value, where);
    }
  }
  return kept;
}

test('read on arrival: every document of the fixtures, examples and golden cases reads as its stored bytes do', () => {
  let kept = 0;
  for (const f of allYamlInputs()) kept += assertSameReading(parseDocuments(readFileSync(f, 'utf8'), f).docs, f);
  assert.ok(kept > 100, `only ${kept} values read on arrival`);
});

test('read on arrival: the synthetic mesh reads as its stored bytes do, and most of it is read once', () => {
  const { docs } = generateMesh({ services: 60 });
  const kept = assertSameReading(docs, 'synthetic');
  assert.ok(kept > docs.length / 2, `${kept} of ${docs.length}`);
});

test('read on arrival: server noise (resourceVersion, annotations, managedFields, other Pod conditions) is not in the value', () => {
  const noisy = (o: Record<string, unknown>): Record<string, unknown> => ({
    ...o,
    metadata: {
      ...(o.metadata as object),
      resourceVersion: '4711',
      uid: 'u-1',
      creationTimestamp: '2026-01-01T00:00:00Z',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}', team: 'a' },
      managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
    },
  });
  const p = pod('reviews-v1-1', 'reviews', 'v1', '10.244.0.7');
  const status = {
    ...(p.status as object),
    conditions: [
      { type: 'PodScheduled', status: 'True' },
      { type: 'Ready', status: 'True' },
    ],
  };
  const objects = [noisy(service('reviews')), { ...noisy(p), status }];
  const docs = objects.map((object, index) => ({ file: 'noisy.yaml', index, object }));
  assert.equal(assertSameReading(docs, 'noisy'), 2);
  const cache = new ObjectCache(nodeSha256Hex);
  for (const o of objects) cache.upsert(o);
  for (const o of cache.values()) {
    const meta = (o.read?.value as { meta: { annotations: object; resourceVersion?: string } }).meta;
    assert.deepEqual(meta.annotations, {});
    assert.equal(meta.resourceVersion, undefined);
    assert.deepEqual((o.read?.value as { origin: unknown }).origin, { file: keyString(o.key), index: 0 });
  }
});

test('read on arrival: an invalid object, or one read with diagnostics, keeps no value (its bytes are read again)', () => {
  const cache = new ObjectCache(nodeSha256Hex);
  const bad = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'bad', namespace: 'default' },
    spec: { ports: 'nope' },
  };
  cache.upsert(bad);
  const [entry] = [...cache.values()];
  assert.ok(entry);
  assert.equal(entry.read, undefined);
  assert.ok(readFromBytes(entry).diagnostics.some((d) => d.severity === 'error'));
});

test('read on arrival: an unchanged version (same stored bytes) keeps the value read first, one copy', () => {
  const cache = new ObjectCache(nodeSha256Hex);
  const svc = service('ratings');
  cache.upsert(svc);
  const first = cache.get('Service/default/ratings')?.read;
  assert.ok(first);
  assert.equal(cache.upsert({ ...svc, metadata: { ...svc.metadata, resourceVersion: '2' } }), undefined);
  assert.equal(cache.get('Service/default/ratings')?.read, first);
});
