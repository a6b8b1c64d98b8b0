/**
 * The R2 backend over a real workerd R2 binding (a Worker's fetch handler drives workerd's own R2
 * implementation for Node: test/workers/r2-over-worker.ts): the store contract with conditional writes enforced, and the
 * compare-and-swap primitives themselves.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Miniflare } from 'miniflare';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { R2Backend, r2Store, type R2BucketLike } from '../../src/snapshot/store/r2.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { runStoreContract } from '../store/contract.js';
import { CREATED_AT, nthSnapshot } from '../store/helpers.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../helpers/paths.js';
import { bundleWorker } from './bundle.js';
import { r2OverWorker, R2_WORKER_SCRIPT } from './r2-over-worker.js';

let mf: Miniflare;
let bucket: R2BucketLike;
let prefixes = 0;

before(async () => {
  mf = new Miniflare({
    modules: true,
    script: R2_WORKER_SCRIPT,
    r2Buckets: ['SNAPSHOTS'],
    compatibilityDate: '2025-09-01',
  });
  bucket = r2OverWorker(mf);
});
after(async () => {
  await mf?.dispose();
});

runStoreContract({
  name: 'r2 (workerd)',
  conditional: true,
  scale: { services: 24, versions: 12 },
  open: async (opts = {}) => {
    const prefix = `t${++prefixes}`;
    return {
      store: r2Store(bucket, { prefix, hasher: nodeSha256Hex, ...opts }),
      rawPut: async (key, bytes) => {
        await bucket.put(`${prefix}/${key}`, bytes);
      },
    };
  },
});

test('r2: create-only and compare-and-swap writes are enforced', { timeout: 30_000 }, async () => {
  const b = new R2Backend(bucket, { prefix: 'cas' });
  const one = new TextEncoder().encode('1');
  assert.equal(await b.putIfAbsent('k', one), 'created');
  assert.equal(await b.putIfAbsent('k', new TextEncoder().encode('2')), 'exists');
  const got = await b.get('k');
  assert.deepEqual(got?.bytes, one, 'the first write stays');
  assert.ok(got);
  assert.equal(await b.putIfMatch('k', new TextEncoder().encode('3'), got.etag), 'ok');
  assert.equal(await b.putIfMatch('k', new TextEncoder().encode('4'), got.etag), 'conflict', 'a stale ETag loses');
  assert.deepEqual((await b.get('k'))?.bytes, new TextEncoder().encode('3'));
});

test('r2: racing publishers never move the head backwards', { timeout: 30_000 }, async () => {
  const store = r2Store(bucket, { prefix: 'heads', hasher: nodeSha256Hex });
  await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      publishSnapshot(store, 'main', nthSnapshot(500 + i), { createdAt: CREATED_AT }),
    ),
  );
  const head = await bucket.get('heads/channels/main/head.json');
  assert.ok(head);
  const json = JSON.parse(new TextDecoder().decode(await head.arrayBuffer())) as { version: number };
  assert.equal(json.version, 6, 'the head.json written by compare-and-swap is the newest version');
});

test(
  'the R2 store, publishing and packs bundle for plain workerd: no Node built-ins',
  { timeout: 30_000 },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'meshsnap-r2-bundle-'));
    try {
      for (const entry of ['r2.ts', 'publish.ts', 'packs.ts']) {
        const bundle = await bundleWorker(join(REPO, 'src', 'snapshot', 'store', entry), dir, REPO);
        assert.ok(bundle.inputs.includes(`src/snapshot/store/${entry}`));
        assert.deepEqual(
          bundle.inputs.filter((p) => p.startsWith('node:') || p.includes('(disabled)')),
          [],
        );
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);
