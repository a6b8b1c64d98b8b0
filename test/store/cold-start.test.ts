/** A relay cold start reads the head, the version record and ≤ MAX_PACKS packs, whatever the mesh size. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadServedSnapshot } from '../../src/relay/snapshot/load.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { MAX_PACKS } from '../../src/snapshot/store/packs.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import type { SnapshotStore } from '../../src/snapshot/store/store.js';
import { CREATED_AT, meshSnapshot, tempStoreDir } from './helpers.js';

/** The store with every call counted by method name. */
function counting(store: SnapshotStore): { store: SnapshotStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(prop), (calls.get(String(prop)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls };
}

for (const services of [50, 1000]) {
  test(
    `cold start at ${services} services after 25 versions: only the record and ≤ ${MAX_PACKS} packs are read`,
    { timeout: 60_000 },
    async () => {
      const root = tempStoreDir();
      const writer = new LocalStore(root);
      for (let rev = 1; rev <= 25; rev++)
        await publishSnapshot(writer, 'main', meshSnapshot(services, rev, rev % 8 === 0 ? 20 : 2), {
          createdAt: CREATED_AT,
          hasher: nodeSha256Hex,
        });
      const { store, calls } = counting(new LocalStore(root));
      const head = await store.readChannel('main');
      assert.ok(head);
      calls.clear();
      const loaded = await loadServedSnapshot(store, 'main', head);
      assert.equal(loaded.digest, head.digest);
      assert.equal(calls.get('getVersion'), 1);
      assert.ok((calls.get('getObject') ?? 0) <= MAX_PACKS, `packs read: ${calls.get('getObject')}`);
      assert.equal(calls.get('getDocument') ?? 0, 0);
      assert.equal(calls.get('getSnapshot') ?? 0, 0);
      assert.equal(
        [...calls.values()].reduce((a, b) => a + b, 0),
        1 + (calls.get('getObject') ?? 0),
      );
      assert.deepEqual(loaded.content, await writer.getSnapshot(head.digest));
    },
  );
}
