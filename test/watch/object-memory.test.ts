/**
 * One representation per object in the watcher: the object cache keeps canonical bytes and a
 * digest (the canonical object is parsed per read, never kept), and the informers' ListWatch copies
 * are cut to the identity client-node reads; a full compile's documents parse each object when it
 * is read, so the parsed copies are not all alive at once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deleteItems, addOrUpdateObject, type KubernetesObject } from '@kubernetes/client-node';
import { keyString, storedObject } from '../../src/snapshot/stored-inputs/index.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { buildInputSet } from '../../src/inputs/load.js';
import { documentsOf, LocalCompiler, type CompileRequest } from '../../src/watch/compiler.js';
import { IncrementalLocalCompiler } from '../../src/watch/incremental-compiler.js';
import { keepIdentityOnly } from '../../src/watch/informers.js';
import { ObjectCache, type CachedObject } from '../../src/watch/object-cache.js';
import { baseMesh, destinationRule, slice } from './watch-harness.js';

const pod = (resourceVersion: string, ip: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'p',
    namespace: 'a',
    uid: 'u',
    resourceVersion,
    generation: 3,
    managedFields: [{ manager: 'kubelet', time: '2026-01-01T00:00:00Z' }],
    labels: { app: 'p' },
  },
  spec: { containers: [{ name: 'c', ports: [{ containerPort: 8080 }] }] },
  status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: 'True' }] },
});

test('object cache: bytes and digest kept, the canonical object parsed on each read and equal to the stored form', () => {
  const cache = new ObjectCache();
  const raw = pod('1', '10.0.0.1');
  assert.equal(cache.upsert(raw)?.change, 'added');
  const cached = cache.get('Pod/a/p');
  assert.ok(cached);
  const stored = storedObject(raw);
  assert.equal(cached.digest, stored?.digest);
  assert.deepEqual(cached.bytes, stored?.bytes);
  assert.equal(cached.layer, 'endpoints');
  assert.equal(cached.resourceVersion, '1');
  assert.equal(cached.generation, 3);
  // A fresh parse per read: nothing parsed is held by the cache.
  const a = cached.object;
  const b = cached.object;
  assert.notEqual(a, b);
  assert.deepEqual(a, b);
  assert.deepEqual(a, JSON.parse(new TextDecoder().decode(cached.bytes)));
  assert.deepEqual(a, stored?.object);
  // Only what the compiler reads counts: a new resourceVersion alone is no change, a new IP is one.
  assert.equal(cache.upsert(pod('2', '10.0.0.1')), undefined);
  assert.equal(cache.get('Pod/a/p')?.resourceVersion, '2');
  assert.deepEqual(cache.upsert(pod('3', '10.0.0.2')), {
    key: { kind: 'Pod', namespace: 'a', name: 'p' },
    change: 'modified',
    resourceVersion: '3',
    manager: 'kubelet',
  });
});

test('object cache: a delete is found by its key alone (the informer hands over its identity-only copy)', () => {
  const cache = new ObjectCache();
  cache.upsert(pod('1', '10.0.0.1'));
  const identity = { kind: 'Pod', apiVersion: 'v1', metadata: { name: 'p', namespace: 'a', resourceVersion: '4' } };
  assert.deepEqual(cache.remove(identity), {
    key: { kind: 'Pod', namespace: 'a', name: 'p' },
    change: 'deleted',
    resourceVersion: '4',
  });
  assert.equal(cache.size, 0);
  assert.equal(cache.remove(identity), undefined);
  assert.equal(cache.remove({ kind: 'Pod', metadata: {} }), undefined);
});

test("informer copies: cut to name, namespace and resourceVersion, which is all client-node's ListWatch cache reads", () => {
  const o = pod('7', '10.0.0.1') as unknown as KubernetesObject;
  const handlersCopy = { ...(o as Record<string, unknown>) };
  keepIdentityOnly(o);
  assert.deepEqual(o, { metadata: { name: 'p', namespace: 'a', resourceVersion: '7' } });
  // The handlers' shallow copy keeps every member (the status writer reads it).
  assert.equal((handlersCopy.metadata as { uid?: string }).uid, 'u');
  assert.deepEqual(handlersCopy.status, pod('7', '10.0.0.1').status);

  // Without a resourceVersion a relist could not tell it unchanged: kept whole.
  const noVersion = { ...pod('', '10.0.0.1'), metadata: { name: 'q', namespace: 'a' } } as unknown as KubernetesObject;
  keepIdentityOnly(noVersion);
  assert.deepEqual(noVersion, { ...pod('', '10.0.0.1'), metadata: { name: 'q', namespace: 'a' } });

  // client-node's cache with identity-only copies: the same version is no update, a new one is,
  // and a relist that no longer lists an object deletes it.
  const objects = new Map<string, Map<string, KubernetesObject>>();
  const events: string[] = [];
  const add = [(x: KubernetesObject) => events.push(`add ${x.metadata?.name}`)];
  const update = [(x: KubernetesObject) => events.push(`update ${x.metadata?.name}`)];
  addOrUpdateObject(objects, o, add, update);
  addOrUpdateObject(objects, pod('7', '10.0.0.1') as unknown as KubernetesObject, add, update);
  addOrUpdateObject(objects, pod('8', '10.0.0.9') as unknown as KubernetesObject, add, update);
  deleteItems(objects, [], [(x: KubernetesObject) => events.push(`delete ${x.metadata?.name}`)]);
  assert.deepEqual(events, ['add p', 'update p', 'delete p']);
});

test('incremental compiler: per-object diagnostics from the full round’s one validation pass give the diagnostics a full compile gives', async () => {
  const cache = new ObjectCache(nodeSha256Hex);
  const badRule = {
    ...destinationRule('reviews'),
    metadata: { name: 'bad', namespace: 'default' },
    spec: { host: 'ratings', trafficPolicy: { loadBalancer: { simple: 'NOT_A_POLICY' } } },
  };
  const unknownKind = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' } };
  for (const o of [...baseMesh(), badRule, unknownKind]) cache.upsert(o);
  const request = (changed: ReadonlySet<string>): CompileRequest => ({
    objects: [...cache.values()].sort((a, b) => (keyString(a.key) < keyString(b.key) ? -1 : 1)),
    changed,
    get: (key) => cache.get(key),
  });
  const incremental = new IncrementalLocalCompiler(nodeSha256Hex);
  const full = new LocalCompiler(nodeSha256Hex);
  const first = await incremental.compile(request(new Set()));
  assert.equal(first.mode, 'full');
  assert.ok(first.diagnostics.some((d) => d.name === 'bad' && d.severity === 'error'));
  assert.deepEqual(first.diagnostics, (await full.compile(request(new Set()))).diagnostics);

  // An endpoint change (incremental), then the bad rule fixed: the kept diagnostics follow.
  cache.upsert(slice('reviews', [{ ip: '10.244.0.99', pod: 'reviews-v1-1' }]));
  const second = await incremental.compile(request(new Set(['EndpointSlice/default/reviews-abc'])));
  assert.equal(second.mode, 'incremental');
  assert.deepEqual(second.diagnostics, (await full.compile(request(new Set()))).diagnostics);
  cache.upsert({ ...badRule, spec: { host: 'ratings' } });
  const third = await incremental.compile(request(new Set(['DestinationRule/default/bad'])));
  assert.ok(!third.diagnostics.some((d) => d.name === 'bad' && d.severity === 'error'));
  assert.deepEqual(third.diagnostics, (await full.compile(request(new Set()))).diagnostics);
  assert.equal(third.snapshot.digest, (await full.compile(request(new Set()))).snapshot.digest);
});

test('compile documents: each cached object is parsed when the inputs layer reads it, once (never when it was read on arrival), and not held by the list', () => {
  const cache = new ObjectCache(nodeSha256Hex);
  for (const o of baseMesh()) cache.upsert(o);
  const reads = new Map<string, number>();
  // The cache's entries, counting reads of `object` (each read is a parse of the entry's bytes).
  const counted = [...cache.values()].map((o) =>
    Object.create(o, {
      object: {
        get: () => {
          reads.set(keyString(o.key), (reads.get(keyString(o.key)) ?? 0) + 1);
          return o.object;
        },
      },
    }),
  ) as CachedObject[];
  const docs = documentsOf(counted);
  assert.equal(reads.size, 0, 'nothing is parsed before it is read');
  assert.deepEqual(
    docs.map((d) => d.file),
    counted.map((o) => keyString(o.key)),
  );
  const inputs = buildInputSet(docs);
  assert.deepEqual(inputs, buildInputSet(counted.map((o) => ({ file: keyString(o.key), index: 0, object: o.object }))));
  assert.equal(reads.size, counted.length);
  const readOnArrival = new Set(counted.filter((o) => o.read).map((o) => keyString(o.key)));
  assert.ok(readOnArrival.size > 0 && readOnArrival.size < counted.length, 'both kinds of entry are here');
  assert.ok(
    [...reads].every(([k, n]) => n === (readOnArrival.has(k) ? 1 : 2)),
    'one read by the inputs layer, none for a value read on arrival (and one by the eager reference above)',
  );
  assert.notEqual(docs[0]?.object, docs[0]?.object, 'a fresh parse per read: the list holds no parsed object');
});
