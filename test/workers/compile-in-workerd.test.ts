/**
 * The compile core runs unchanged in Cloudflare workerd: the Worker entry is bundled for plain
 * workerd (no nodejs_compat), run in real workerd through Miniflare, fed the bookinfo fixtures,
 * and must produce the very snapshot digest Node computes for the same files.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare } from 'miniflare';
import { compileFiles, type CompileSummary, type InputFile } from '../../functions/cloudflare/compile-core.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES, REPO } from '../helpers/paths.js';
import { bundleWorker, findDynamicCode, type WorkerBundle } from './bundle.js';

const FIXTURE_PATHS = [
  join(ISTIO_SAMPLES, 'bookinfo', 'platform', 'kube', 'bookinfo.yaml'),
  BOOKINFO_STATE,
  join(ISTIO_SAMPLES, 'bookinfo', 'networking', 'virtual-service-reviews-50-v3.yaml'),
  join(ISTIO_SAMPLES, 'bookinfo', 'networking', 'destination-rule-all.yaml'),
];
// What wrangler.toml says; the test runs the Worker under the same date.
const COMPATIBILITY_DATE = '2025-09-01';

let dir: string;
let bundle: WorkerBundle;
let mf: Miniflare | undefined;
let files: InputFile[];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meshsnap-workerd-'));
  bundle = await bundleWorker(join(REPO, 'functions', 'cloudflare', 'compile-core.ts'), dir, REPO);
  files = await Promise.all(FIXTURE_PATHS.map(async (p) => ({ file: p.slice(p.lastIndexOf('/') + 1), text: await readFile(p, 'utf8') })));
  // modulesRoot: module names are paths relative to it, and workerd refuses names with '..'.
  mf = new Miniflare({ modules: true, modulesRoot: dir, scriptPath: bundle.path, compatibilityDate: COMPATIBILITY_DATE });
  await mf.ready;
});

after(async () => {
  await mf?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function postToWorker(body: unknown): Promise<{ status: number; json: unknown }> {
  assert.ok(mf, 'miniflare did not start');
  const res = await mf.dispatchFetch('http://worker.test/', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
  return { status: res.status, json: await res.json() };
}

test('the bundle pulls in our core and third-party code only, no Node built-ins', { timeout: 30_000 }, () => {
  assert.ok(bundle.inputs.includes('src/compile/index.ts'), 'compiler is bundled');
  assert.ok(bundle.inputs.includes('src/snapshot/build.ts'), 'snapshot builder is bundled');
  assert.deepEqual(bundle.inputs.filter((p) => p.startsWith('node:') || p.includes('(disabled)')), []);
});

test('no new Function or eval anywhere in the bundle', { timeout: 30_000 }, () => {
  // protobufjs 8's minimal runtime reads globalThis.Buffer directly; older ones reached Node modules
  // through @protobufjs/inquire's guarded `eval("require")`, which would be listed here.
  assert.deepEqual(findDynamicCode(bundle.text), []);
  assert.ok(!/\bFunction\s*\(\s*["'`]/.test(bundle.text), 'no Function("…") constructor calls');
});

test('workerd compiles bookinfo to the same snapshot digest as Node', { timeout: 60_000 }, async () => {
  const nodeHasher = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
  const inNode: CompileSummary = compileFiles(files, nodeHasher);
  // Posted in reverse order: the result must not depend on it.
  const { status, json } = await postToWorker([...files].reverse());
  assert.equal(status, 200, JSON.stringify(json));
  const inWorker = json as CompileSummary;
  assert.match(inWorker.digest, /^sha256:[0-9a-f]{64}$/);
  assert.equal(inWorker.digest, inNode.digest);
  assert.deepEqual(inWorker.counts, inNode.counts);
  assert.deepEqual(inWorker.diagnostics, inNode.diagnostics);
  for (const type of ['clusters', 'endpoints', 'listeners', 'routes', 'classes', 'objects'] as const) {
    assert.ok(inWorker.counts[type] > 0, `${type} count is ${inWorker.counts[type]}`);
  }
});

test('dropping the DestinationRules in workerd drops their subset clusters', { timeout: 60_000 }, async () => {
  const withoutRules = files.filter((f) => f.file !== 'destination-rule-all.yaml');
  assert.equal(withoutRules.length, files.length - 1);
  const fewer = await postToWorker(withoutRules);
  const all = await postToWorker(files);
  assert.equal(fewer.status, 200, JSON.stringify(fewer.json));
  const [a, b] = [(fewer.json as CompileSummary).counts, (all.json as CompileSummary).counts];
  assert.ok(a.clusters < b.clusters, `clusters without rules ${a.clusters}, with ${b.clusters}`);
  assert.deepEqual(fewer.json, compileFiles(withoutRules));
});

test('the Worker rejects a body that is not a list of files', { timeout: 30_000 }, async () => {
  const res = await postToWorker({ file: 'x.yaml' });
  assert.equal(res.status, 400);
});
