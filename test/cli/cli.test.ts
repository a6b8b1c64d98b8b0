/**
 * The `meshsnap` CLI contract, exercised through the real binary (bin/meshsnap.js) on a temp store.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BOOKINFO_NODES } from '../helpers/mesh.js';
import { BIN, BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-cli-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function run(...args: string[]): { code: number; stdout: string; stderr: string; lines: Record<string, unknown>[] } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, lines };
}

test('compile publishes version 1, then says unchanged and stores nothing for the same inputs', () => {
  const store = join(tmp, 'store-a');
  const first = run('compile', BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml'), '--store', store);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.lines.length, 1);
  const line = first.lines[0] as Record<string, unknown>;
  assert.equal(line.version, 1);
  assert.match(String(line.digest), /^sha256:[0-9a-f]{64}$/);
  const resources = line.resources as Record<string, number>;
  for (const t of ['clusters', 'endpoints', 'listeners', 'routes']) assert.ok((resources[t] ?? 0) > 0, t);
  assert.deepEqual(line.diagnostics, { error: 0, warning: 4 });

  const objectsBefore = readdirSync(join(store, 'objects'), { recursive: true }).length;
  const again = run('compile', join(NET, 'destination-rule-all.yaml'), BOOKINFO_STATE, '--store', store);
  assert.equal(again.code, 0);
  assert.equal(again.lines[0]?.version, 1);
  assert.equal(again.lines[0]?.digest, line.digest);
  assert.equal(again.lines[0]?.status, 'unchanged');
  assert.match(again.stderr, /unchanged/);
  assert.equal(readdirSync(join(store, 'objects'), { recursive: true }).length, objectsBefore);

  const changed = run(
    'compile',
    BOOKINFO_STATE,
    join(NET, 'destination-rule-all.yaml'),
    join(NET, 'virtual-service-reviews-50-v3.yaml'),
    '--store',
    store,
  );
  assert.equal(changed.lines[0]?.version, 2);
  assert.notEqual(changed.lines[0]?.digest, line.digest);

  const log = run('log', '--store', store);
  assert.equal(log.code, 0);
  assert.deepEqual(
    log.lines.map((l) => l.version),
    [2, 1],
  );
  assert.equal(log.lines[0]?.parent, 1);
  assert.equal(log.lines[1]?.parent, null);
});

test('--dry-run stores nothing; --strict fails on error diagnostics and stores nothing', () => {
  const store = join(tmp, 'store-b');
  const dry = run('compile', BOOKINFO_STATE, '--store', store, '--dry-run');
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(dry.lines[0]?.status, 'dry-run');
  assert.equal(run('log', '--store', store).lines.length, 0);

  const bad = join(tmp, 'bad.yaml');
  writeFileSync(
    bad,
    'apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: w, namespace: default}\nspec:\n  hosts: [reviews]\n  http:\n  - route:\n    - destination: {host: reviews}\n      weight: 30\n    - destination: {host: ratings}\n      weight: 30\n',
  );
  const strict = run('compile', BOOKINFO_STATE, bad, '--store', store, '--strict');
  assert.equal(strict.code, 1);
  assert.equal((strict.lines[0]?.diagnostics as Record<string, number>).error, 1);
  assert.match(strict.stderr, /VirtualService default\/w spec\.http\[0\]\.route: weights .* add up to 60/);
  assert.equal(run('log', '--store', store).lines.length, 0);

  const lenient = run('compile', BOOKINFO_STATE, bad, '--store', store);
  assert.equal(lenient.code, 0);
  assert.equal(lenient.lines[0]?.version, 1);
  const diags = run('diagnostics', 'latest', '--store', store);
  assert.equal(diags.code, 0);
  const error = diags.lines.find((d) => d.severity === 'error');
  assert.equal(error?.kind, 'VirtualService');
  assert.equal(error?.name, 'w');
  assert.equal(error?.field, 'spec.http[0].route');
  assert.equal(error?.file, bad);
  assert.equal(error?.index, 0);
});

test('show prints config_dump JSON for a node, and a clear error for an unknown namespace', () => {
  const store = join(tmp, 'store-c');
  assert.equal(
    run(
      'compile',
      BOOKINFO_STATE,
      join(NET, 'destination-rule-all.yaml'),
      join(NET, 'virtual-service-reviews-80-20.yaml'),
      '--store',
      store,
    ).code,
    0,
  );
  const node = BOOKINFO_NODES.productpage;
  const shown = run(
    'show',
    'latest',
    '--node',
    node.id,
    '--metadata',
    JSON.stringify(node.metadata),
    '--type',
    'routes',
    '--store',
    store,
  );
  assert.equal(shown.code, 0, shown.stderr);
  const dump = shown.lines[0] as { configs: Record<string, unknown>[] };
  assert.equal(dump.configs.length, 1);
  assert.equal(dump.configs[0]?.['@type'], 'type.googleapis.com/envoy.admin.v3.RoutesConfigDump');
  assert.match(JSON.stringify(dump), /"name":"outbound\|9080\|v1\|reviews\.default\.svc\.cluster\.local","weight":80/);
  assert.match(JSON.stringify(dump), /"@type":"type\.googleapis\.com\/envoy\.config\.route\.v3\.RouteConfiguration"/);
  assert.match(shown.stderr, /class sidecar\/default\/productpage/);

  const all = run('show', '1', '--node', node.id, '--metadata', JSON.stringify(node.metadata), '--store', store);
  assert.deepEqual(
    (all.lines[0] as { configs: Record<string, unknown>[] }).configs.map((c) => String(c['@type']).split('.').pop()),
    ['ClustersConfigDump', 'EndpointsConfigDump', 'ListenersConfigDump', 'RoutesConfigDump'],
  );

  const unknown = run('show', '--node', 'sidecar~10.0.0.1~x.nowhere~nowhere.svc.cluster.local', '--store', store);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /namespace "nowhere"/);
});

test('usage errors exit 2', () => {
  assert.equal(run().code, 2);
  assert.equal(run('frobnicate').code, 2);
  assert.equal(run('compile').code, 2);
  assert.equal(run('show', '--store', join(tmp, 'x')).code, 2);
  assert.equal(run('show', 'tag:', '--node', 'a', '--store', join(tmp, 'x')).code, 2); // plain names are tags now (src/history/select.ts)
  assert.equal(run('log', '--bogus').code, 2);
  assert.equal(run('compile', BOOKINFO_STATE, '--channel', '../etc').code, 2);
});

test('a missing input path fails with a clear message (exit 1)', () => {
  const r = run('compile', join(tmp, 'does-not-exist.yaml'), '--store', join(tmp, 'store-d'));
  assert.equal(r.code, 1);
  assert.match(r.stderr, /does-not-exist\.yaml/);
});
