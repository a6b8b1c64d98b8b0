/**
 * `explain` in real workerd (the Cloudflare Worker through Miniflare, over R2): the same question
 * answered by the Worker's API as by Node — the pure matcher and the store side need no Node built-in.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Miniflare } from 'miniflare';
import { BASE_PATHS, readInputs, REVIEWS_50_V3, REVIEWS_V3 } from '../functions/bookinfo.js';
import { REPO } from '../helpers/paths.js';
import { bundleWorker } from './bundle.js';

const TOKEN = 'w0rker-write-token';
let dir: string;
let mf: Miniflare | undefined;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meshsnap-worker-explain-'));
  const bundle = await bundleWorker(join(REPO, 'functions', 'cloudflare', 'worker.ts'), dir, REPO);
  mf = new Miniflare({
    modules: true,
    modulesRoot: dir,
    scriptPath: bundle.path,
    compatibilityDate: '2025-09-01',
    r2Buckets: ['MESHSNAP_BUCKET'],
    bindings: { MESHSNAP_WRITE_TOKEN: TOKEN, MESHSNAP_PREFIX: 'store' },
  });
  await mf.ready;
});

after(async () => {
  await mf?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; json: Record<string, unknown> }> {
  assert.ok(mf, 'miniflare did not start');
  const res = await mf.dispatchFetch(`http://worker.test${path}`);
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

test(
  'GET …/explain in workerd: the pod’s request, its clusters and VirtualService, across versions',
  { timeout: 120_000 },
  async () => {
    assert.ok(mf);
    for (const set of [REVIEWS_V3, REVIEWS_50_V3]) {
      const res = await mf.dispatchFetch('http://worker.test/api/v1/channels/main/compile', {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ files: await readInputs([...BASE_PATHS, set]) }),
      });
      assert.equal(res.status, 201, await res.text());
    }
    const q = 'pod=default/productpage-v1-5f6d7c8b9-abcde&to=reviews:9080&path=/reviews/0';
    const one = await get(`/api/v1/channels/main/snapshots/2/explain?${q}`);
    assert.equal(one.status, 200, JSON.stringify(one.json).slice(0, 500));
    assert.equal(one.json.outcome, 'routed');
    assert.deepEqual(
      (one.json.clusters as { name: string; weight: number }[]).map((c) => [c.name, c.weight]),
      [
        ['outbound|9080|v1|reviews.default.svc.cluster.local', 50],
        ['outbound|9080|v3|reviews.default.svc.cluster.local', 50],
      ],
    );
    assert.match(JSON.stringify(one.json.provenance), /virtual-service\/reviews/);
    const across = await get(`/api/v1/channels/main/snapshots/latest/explain?${q}&across=1..2`);
    assert.equal(across.status, 200, JSON.stringify(across.json).slice(0, 500));
    assert.deepEqual(
      (across.json.changes as { from: string; to: string }[]).map((c) => [c.from, c.to]),
      [['1', '2']],
    );
  },
);
