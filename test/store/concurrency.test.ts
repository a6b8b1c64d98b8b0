import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { CREATED_AT, nthSnapshot, tempStoreDir } from './helpers.js';

const run = promisify(execFile);
const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

test('20 parallel publishes get distinct, gap-free versions and readers never see partial records', async () => {
  const root = tempStoreDir();
  const store = new LocalStore(root);
  const snaps = range(20).map(nthSnapshot);
  let publishing = true;
  // A reader polling while publishers write: every record it can list must parse.
  const reader = (async () => {
    const readerStore = new LocalStore(root);
    while (publishing) {
      for (const v of await readerStore.listVersions('c')) {
        assert.ok(await readerStore.getVersion('c', v));
      }
      await readerStore.readChannel('c');
      await new Promise((r) => setImmediate(r));
    }
  })();
  const results = await Promise.all(snaps.map((s) => publishSnapshot(store, 'c', s, { createdAt: CREATED_AT })));
  publishing = false;
  await reader;
  const versions = results.map((r) => (r.status === 'published' ? r.record.version : -1)).sort((a, b) => a - b);
  assert.deepEqual(versions, range(20));
  assert.deepEqual(await store.listVersions('c'), range(20).reverse());
  for (const v of range(20)) {
    const rec = await store.getVersion('c', v);
    assert.equal(rec?.parent, v === 1 ? null : v - 1);
  }
  const head = await store.readChannel('c');
  assert.equal(head?.version, 20);
  assert.deepEqual(readdirSync(join(root, 'tmp')), []);
});

test('two processes publishing at once never get the same version', async () => {
  const root = tempStoreDir();
  const worker = join(fileURLToPath(new URL('.', import.meta.url)), 'publish-worker.js');
  const [a, b] = await Promise.all([
    run(process.execPath, [worker, root, 'shared', '100', '10']),
    run(process.execPath, [worker, root, 'shared', '200', '10']),
  ]);
  const got = [...(JSON.parse(a.stdout) as number[]), ...(JSON.parse(b.stdout) as number[])].sort((x, y) => x - y);
  assert.deepEqual(got, range(20));
  const store = new LocalStore(root);
  assert.deepEqual(await store.listVersions('shared'), range(20).reverse());
  const digests = new Set<string>();
  for (const v of range(20)) {
    const rec = await store.getVersion('shared', v);
    assert.ok(rec);
    digests.add(rec.digest);
    assert.ok(await store.getSnapshot(rec.digest), 'every published version points at a stored snapshot');
  }
  assert.equal(digests.size, 20);
  assert.equal((await store.readChannel('shared'))?.version, 20);
  assert.deepEqual(readdirSync(join(root, 'tmp')), []);
});
