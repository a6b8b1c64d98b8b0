/**
 * One representation per object in the watcher: the object cache keeps canonical bytes and a
 * digest (the canonical object is parsed per read, never kept), and the informers' ListWatch copies
 * are cut to the identity client-node reads.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deleteItems, addOrUpdateObject, type KubernetesObject } from '@kubernetes/client-node';
import { storedObject } from '../../src/snapshot/stored-inputs/index.js';
import { keepIdentityOnly } from '../../src/watch/informers.js';
import { ObjectCache } from '../../src/watch/object-cache.js';

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
