/**
 * The Cloudflare Worker (functions/cloudflare/worker.ts) in real workerd through Miniflare, over an
 * R2 bucket binding: compile bookinfo through the API with the bearer token, list, diff, roll back,
 * and read the audit log — the digests equal the Node build's for the same files.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import type { InputText } from '../../src/pipeline.js';
import type { R2BucketLike } from '../../src/snapshot/store/r2.js';
import { BASE_PATHS, nodeDigest, readInputs, REVIEWS_50_V3, REVIEWS_V3 } from '../functions/bookinfo.js';
import { REPO } from '../helpers/paths.js';
import { bundleWorker } from './bundle.js';

const TOKEN = 'w0rker-write-token';
const COMPATIBILITY_DATE = '2025-09-01'; // wrangler.toml's

let dir: string;
let mf: Miniflare | undefined;
let v3: InputText[];
let fifty: InputText[];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meshsnap-worker-api-'));
  const bundle = await bundleWorker(join(REPO, 'functions', 'cloudflare', 'worker.ts'), dir, REPO);
  v3 = await readInputs([...BASE_PATHS, REVIEWS_V3]);
  fifty = await readInputs([...BASE_PATHS, REVIEWS_50_V3]);
  mf = new Miniflare({
    modules: true,
    modulesRoot: dir,
    scriptPath: bundle.path,
    compatibilityDate: COMPATIBILITY_DATE,
    r2Buckets: ['MESHSNAP_BUCKET'],
    bindings: { MESHSNAP_WRITE_TOKEN: TOKEN, MESHSNAP_PREFIX: 'store' },
  });
  await mf.ready;
});

after(async () => {
  await mf?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function call(
  method: string,
  path: string,
  body?: unknown,
  token: string | null = TOKEN,
): Promise<{ status: number; json: Record<string, unknown> }> {
  assert.ok(mf, 'miniflare did not start');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await mf.dispatchFetch(`http://worker.test${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

test('compile, list, diff and roll back over R2 in workerd', { timeout: 120_000 }, async () => {
  // Writes need the token.
  const anonymous = await call('POST', '/api/v1/channels/main/compile', { files: v3 }, null);
  assert.equal(anonymous.status, 401);
  assert.equal((anonymous.json.error as { code: string }).code, 'unauthorized');
  const wrong = await call('POST', '/api/v1/channels/main/compile', { files: v3 }, 'nope');
  assert.equal(wrong.status, 401);

  const first = await call('POST', '/api/v1/channels/main/compile', {
    files: [...v3].reverse(),
    reason: 'reviews to v3',
  });
  assert.equal(first.status, 201, JSON.stringify(first.json).slice(0, 500));
  assert.equal(first.json.version, 1);
  assert.equal(first.json.digest, nodeDigest(v3), 'workerd and Node compile bookinfo to the same digest');

  const second = await call('POST', '/api/v1/channels/main/compile', { files: fifty, reason: 'reviews 50/50 v3' });
  assert.equal(second.status, 201);
  assert.equal(second.json.version, 2);
  assert.equal(second.json.digest, nodeDigest(fifty));

  const again = await call('POST', '/api/v1/channels/main/compile', { files: fifty });
  assert.equal(again.status, 200);
  assert.equal(again.json.status, 'unchanged');

  const list = await call('GET', '/api/v1/channels/main/snapshots', undefined, null);
  assert.equal(list.status, 200);
  const snaps = list.json.snapshots as { version: number; digest: string; status: { current: boolean } }[];
  assert.deepEqual(
    snaps.map((s) => s.version),
    [2, 1],
    'newest first',
  );
  assert.equal(snaps[0]?.status.current, true);
  assert.equal(snaps[1]?.digest, first.json.digest);

  const diff = await call('GET', '/api/v1/channels/main/diff?from=1&to=2', undefined, null);
  assert.equal(diff.status, 200, JSON.stringify(diff.json).slice(0, 500));
  assert.equal(diff.json.from, 1);
  assert.equal(diff.json.to, 2);
  assert.match(JSON.stringify(diff.json.diff), /reviews/, 'the diff names the reviews routes');

  const rollback = await call('POST', '/api/v1/channels/main/rollback', { version: 1, reason: 'undo the 50/50 split' });
  assert.equal(rollback.status, 200, JSON.stringify(rollback.json).slice(0, 500));
  assert.equal(rollback.json.version, 3);
  assert.equal(rollback.json.digest, first.json.digest, 'a rollback serves the old snapshot again');

  const latest = await call('GET', '/api/v1/channels/main/snapshots/latest', undefined, null);
  assert.equal(latest.json.version, 3);
  assert.equal(latest.json.digest, nodeDigest(v3));

  const audit = await call('GET', '/api/v1/audit?channel=main', undefined, null);
  assert.equal(audit.status, 200);
  const entries = audit.json.entries as Record<string, unknown>[];
  assert.ok(
    entries.some((e) => JSON.stringify(e).includes('undo the 50/50 split')),
    'the rollback is in the audit log with its reason',
  );
  assert.ok(
    entries.every((e) => !('actor' in e) || e.actor === 'api'),
    'writes are recorded as the token name',
  );

  // The data is in the bucket, under the configured prefix.
  assert.ok(mf);
  const bucket = (await mf.getR2Bucket('MESHSNAP_BUCKET')) as unknown as R2BucketLike;
  const head = await bucket.get('store/channels/main/head.json');
  assert.ok(head, 'head.json is in R2 under store/');
  assert.equal((JSON.parse(new TextDecoder().decode(await head.arrayBuffer())) as { version: number }).version, 3);
});

test('bad input is a 400 with a stable code, never a 500', { timeout: 60_000 }, async () => {
  const notJson = await call('POST', '/api/v1/channels/main/compile', undefined);
  assert.equal(notJson.status, 400);
  const garbage = await call('POST', '/api/v1/channels/main/compile', {
    files: [{ file: 'x.yaml', text: ': : :\n\t- [' }],
    strict: true,
  });
  assert.equal(garbage.status, 400);
  assert.equal((garbage.json.error as { code: string }).code, 'invalid_inputs');
  assert.ok(Array.isArray((garbage.json.error as { diagnostics?: unknown[] }).diagnostics));
  const missing = await call('GET', '/api/v1/channels/main/snapshots/99', undefined, null);
  assert.equal(missing.status, 404);
  const nowhere = await call('GET', '/nowhere', undefined, null);
  assert.equal(nowhere.status, 404);
});

test('the audit page and its assets are served by the Worker', { timeout: 30_000 }, async () => {
  assert.ok(mf);
  const page = await mf.dispatchFetch('http://worker.test/');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  assert.match(await page.text(), /ui\/app\.js/);
  const js = await mf.dispatchFetch('http://worker.test/ui/app.js');
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type') ?? '', /javascript/);
  await js.arrayBuffer();
});

test('the OpenAPI document is served', { timeout: 30_000 }, async () => {
  const doc = await call('GET', '/api/openapi.json', undefined, null);
  assert.equal(doc.status, 200);
  assert.match(String(doc.json.openapi), /^3\./);
});
