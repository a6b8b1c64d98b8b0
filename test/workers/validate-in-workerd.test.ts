/**
 * The Envoy acceptance validator runs in workerd: its rule table is data, its RE2 is re2js (pure
 * JavaScript), and it reads `Any` contents with the static protobufjs code. A Worker bundled for
 * plain workerd (no Node built-ins) runs the cases of validate-cases.ts and must find exactly what
 * Node finds.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Miniflare } from 'miniflare';
import { REPO } from '../helpers/paths.js';
import { bundleWorker, findDynamicCode, type WorkerBundle } from './bundle.js';
import { runValidateCases } from './validate-cases.js';

let dir: string;
let bundle: WorkerBundle;
let mf: Miniflare | undefined;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meshsnap-validate-workerd-'));
  bundle = await bundleWorker(join(REPO, 'test', 'workers', 'validate-worker.ts'), dir, REPO);
  mf = new Miniflare({ modules: true, modulesRoot: dir, scriptPath: bundle.path, compatibilityDate: '2025-09-01' });
  await mf.ready;
});

after(async () => {
  await mf?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test(
  'the validator bundles without Node built-ins or dynamic code, its rule table included',
  { timeout: 30_000 },
  () => {
    assert.ok(bundle.inputs.includes('src/xds/gen/validate-rules.js'), 'the generated rule table is bundled');
    assert.ok(bundle.inputs.includes('src/xds/validate/walker.ts'));
    assert.deepEqual(
      bundle.inputs.filter((p) => p.startsWith('node:') || p.includes('(disabled)')),
      [],
    );
    assert.deepEqual(findDynamicCode(bundle.text), []);
  },
);

test('workerd finds the same violations as Node', { timeout: 60_000 }, async () => {
  assert.ok(mf);
  const res = await mf.dispatchFetch('http://worker.test/');
  assert.equal(res.status, 200);
  const inWorker = (await res.json()) as Record<string, string[]>;
  const inNode = runValidateCases();
  assert.deepEqual(inWorker, inNode);
  assert.deepEqual(inNode.good, []);
  assert.deepEqual(inNode.goodRoutes, []);
  assert.deepEqual(inNode.emptyName, ['name string.min_len']);
  assert.deepEqual(inNode.sniInAny, ['transport_socket.typed_config.sni string.max_bytes']);
  assert.deepEqual(inNode.weightsAndRe2, [
    'virtual_hosts[0].routes[0].match.safe_regex.regex envoy.re2',
    'virtual_hosts[0].routes[0].route.weighted_clusters.clusters envoy.weighted_clusters.sum',
  ]);
});
