/** The history commands through the CLI of this build, on a temp store. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-cli-hist-'));
const store = join(tmp, 'store');
after(() => rmSync(tmp, { recursive: true, force: true }));

type Ran = { code: number; stdout: string; stderr: string; lines: Record<string, unknown>[] };
const run = (...args: string[]): Ran => runAt(store, ...args);

function runAt(storeDir: string, ...args: string[]): Ran {
  const script = `const { main } = await import(${JSON.stringify(MAIN)}); process.exitCode = await main(${JSON.stringify([...args, '--store', storeDir])});`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, MESHSNAP_ACTOR: 'ci-bot' },
  });
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, lines };
}

test('compile twice, diff, tag, rollback, verify, audit, gc, pin/unpin', () => {
  const dr = join(NET, 'destination-rule-all.yaml');
  assert.equal(run('compile', BOOKINFO_STATE, dr, join(NET, 'virtual-service-reviews-v3.yaml')).code, 0);
  assert.equal(run('compile', BOOKINFO_STATE, dr, join(NET, 'virtual-service-reviews-50-v3.yaml')).code, 0);

  const text = run('diff', '1', '2');
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /routes ~ 9080/);
  assert.match(text.stdout, /weighted_clusters/);
  const json = run(
    'diff',
    '1',
    'latest',
    '--json',
    '--type',
    'routes',
    '--node',
    'sidecar~10.244.0.11~productpage-v1-123.default~default.svc.cluster.local',
    '--metadata',
    '{"NAMESPACE":"default","LABELS":{"app":"productpage","version":"v1"}}',
  );
  assert.equal(json.code, 0, json.stderr);
  const d = json.lines[0] as {
    classes: { classA: string; types: { routes: { changed: { name: string }[] } } }[];
    inputs: { kind: string }[];
  };
  assert.equal(d.classes.length, 1);
  assert.equal(d.classes[0]?.classA, 'sidecar/default/productpage');
  assert.deepEqual(
    d.classes[0]?.types.routes.changed.map((c) => c.name),
    ['9080'],
  );
  assert.deepEqual(
    d.inputs.map((i) => i.kind),
    ['VirtualService'],
  );

  assert.equal(run('tag', '1', 'v1.0').code, 0);
  assert.equal(
    run(
      'show',
      'v1.0',
      '--node',
      'sidecar~10.244.0.11~productpage-v1-123.default~default.svc.cluster.local',
      '--type',
      'routes',
    ).code,
    0,
  );
  assert.equal(run('diagnostics', 'tag:v1.0').code, 0);
  assert.equal(run('diagnostics', 'no-such-tag').code, 1);

  const rb = run('rollback', 'v1.0', '--reason', 'canary broke');
  assert.equal(rb.code, 0, rb.stderr);
  assert.equal(rb.lines[0]?.version, 3);
  assert.equal(rb.lines[0]?.pinned, 3);
  assert.equal(rb.lines[0]?.actor, 'ci-bot');

  const verify = run('verify', '--all');
  assert.equal(verify.code, 0, verify.stderr);
  assert.deepEqual(
    verify.lines.map((l) => l.ok),
    [true, true, true],
  );

  const audit = run('audit', '--json', '--since', '1h');
  assert.equal(audit.code, 0, audit.stderr);
  const kinds = audit.lines.map((l) => l.kind);
  for (const k of ['publish', 'tag', 'rollback']) assert.ok(kinds.includes(k), kinds.join());
  assert.equal(audit.lines.find((l) => l.kind === 'rollback')?.reason, 'canary broke');
  assert.match(run('audit').stdout, /rollback .*by ci-bot — canary broke/);

  assert.equal(run('unpin').lines[0]?.unpinned !== null, true);
  // Version 2's config is not the served one: pin refuses it (rollback serves it) and pins nothing.
  const older = run('pin', '2', '--actor', 'carol', '--reason', 'freeze');
  assert.equal(older.code, 1);
  assert.match(older.stderr, /meshsnap rollback 2/);
  assert.equal(run('pin', '--actor', 'carol', '--reason', 'freeze').lines[0]?.pinned !== undefined, true);
  const gc = run('gc', '--keep', '1', '--dry-run');
  assert.equal(gc.code, 0, gc.stderr);
  assert.deepEqual((gc.lines[0]?.keptVersions as Record<string, number[]>).main, [3, 1], 'head and pinned 3, tagged 1');

  assert.equal(run('diff', '1').code, 2);
  assert.equal(run('gc', '--keep', 'x').code, 2);
  assert.equal(run('promote', 'candidate:1', '--reason', 'try').code, 1);
});

// After the test above (its store has versions 1 and 2): the same diff as --json, streamed.
test('diff --jsonl: one line per changed resource and input object, after a {node, from, to} line', () => {
  const args = [
    '1',
    '2',
    '--type',
    'routes',
    '--node',
    'sidecar~10.244.0.11~productpage-v1-123.default~default.svc.cluster.local',
    '--metadata',
    '{"NAMESPACE":"default","LABELS":{"app":"productpage","version":"v1"}}',
  ];
  const json = run('diff', ...args, '--json');
  assert.equal(json.code, 0, json.stderr);
  const d = json.lines[0] as {
    node: unknown;
    from: unknown;
    to: unknown;
    classes: { types: { routes: { changed: { fields: unknown }[] } } }[];
  };
  const jsonl = run('diff', ...args, '--jsonl');
  assert.equal(jsonl.code, 0, jsonl.stderr);
  assert.deepEqual(jsonl.lines[0], { node: d.node, from: d.from, to: d.to });
  const routeLines = jsonl.lines.filter((l) => l.type === 'routes');
  assert.deepEqual(
    routeLines.map((l) => [l.classA, l.change, l.name]),
    [['sidecar/default/productpage', 'changed', '9080']],
  );
  assert.ok(d.classes[0]?.types.routes.changed[0]?.fields);
  assert.deepEqual(routeLines[0]?.fields, d.classes[0]?.types.routes.changed[0]?.fields);
  assert.deepEqual(
    jsonl.lines.filter((l) => 'input' in l).map((l) => (l.input as { kind: string }).kind),
    ['VirtualService'],
  );
  assert.equal(run('diff', '1', '2', '--json', '--jsonl').code, 2);
});

test('compile on a pinned channel: the config becomes a candidate, the channel keeps the pinned config with the new endpoints; who and why are recorded', () => {
  const at = (...args: string[]): Ran => runAt(join(tmp, 'pinned'), ...args);
  const dr = join(NET, 'destination-rule-all.yaml');
  const movedState = join(tmp, 'moved-state.yaml');
  writeFileSync(movedState, readFileSync(BOOKINFO_STATE, 'utf8').replaceAll('10.244.0.', '10.77.0.'));
  const first = at('compile', BOOKINFO_STATE, dr, join(NET, 'virtual-service-reviews-v3.yaml'), '--reason', 'initial');
  assert.equal(first.code, 0, first.stderr);
  assert.equal(at('pin', '--reason', 'freeze').code, 0);

  const c = at(
    'compile',
    movedState,
    dr,
    join(NET, 'virtual-service-reviews-50-v3.yaml'),
    '--actor',
    'dave',
    '--reason',
    'try 50/50',
  );
  assert.equal(c.code, 0, c.stderr);
  assert.deepEqual(
    [c.lines[0]?.status, c.lines[0]?.version, c.lines[0]?.candidate, c.lines[0]?.pinned],
    ['candidate', 2, 1, 1],
  );
  assert.match(c.stderr, /pinned to version 1/);

  // Served: version 1's routes (all traffic to reviews v3) with the moved endpoints.
  const served = at('diff', '1', '2', '--json');
  assert.equal(served.code, 0, served.stderr);
  const changedTypes = new Set(
    (
      served.lines[0] as {
        classes: { types: Record<string, { added: unknown[]; removed: unknown[]; changed: unknown[] }> }[];
      }
    ).classes.flatMap((k) =>
      Object.entries(k.types)
        .filter(([, t]) => t.added.length + t.removed.length + t.changed.length > 0)
        .map(([type]) => type),
    ),
  );
  assert.deepEqual([...changedTypes], ['endpoints'], 'only endpoints moved on the served channel');
  const candidate = at('diff', '2', 'candidate:1', '--type', 'routes');
  assert.match(candidate.stdout, /weighted_clusters/, 'the candidate holds the 50/50 split');

  const log = at('log');
  const v2 = log.lines.find((l) => l.version === 2);
  assert.deepEqual([v2?.actor, v2?.reason], ['dave', 'try 50/50']);
  const audit = at('audit', '--json');
  const cand = audit.lines.find((l) => l.kind === 'candidate');
  assert.deepEqual([cand?.actor, cand?.reason], ['dave', 'try 50/50']);

  const promoted = at('promote', 'candidate:1', '--reason', 'ok');
  assert.equal(promoted.code, 0, promoted.stderr);
  assert.equal(
    at('verify', '--all').lines.every((l) => l.ok === true),
    true,
  );
});
