/**
 * Safe publishing through the CLI: the publish guard (an empty or unreadable input never replaces
 * the mesh), rollback refusing clusters emptied of endpoints, pin and tag semantics an operator
 * can predict. Each test starts from the input that used to go wrong.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { main } from '../../src/cli/main.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const DR = join(NET, 'destination-rule-all.yaml');
const V3 = join(NET, 'virtual-service-reviews-v3.yaml');
const V50 = join(NET, 'virtual-service-reviews-50-v3.yaml');
const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-cli-safety-'));
const actorBefore = process.env.MESHSNAP_ACTOR;
process.env.MESHSNAP_ACTOR = 'ci-bot';
after(() => {
  rmSync(tmp, { recursive: true, force: true });
  if (actorBefore === undefined) delete process.env.MESHSNAP_ACTOR;
  else process.env.MESHSNAP_ACTOR = actorBefore;
});

type Ran = { code: number; stdout: string; stderr: string; lines: Record<string, unknown>[] };

/** The CLI in process (a process per command costs seconds on a busy machine), its output captured. */
async function runAt(storeDir: string, ...args: string[]): Promise<Ran> {
  const out: string[] = [];
  const err: string[] = [];
  const { stdout, stderr } = process;
  const writeOut = stdout.write;
  const writeErr = stderr.write;
  // The CLI writes strings; the test runner's own reports (binary) pass through.
  const capture = (sink: string[], write: typeof stdout.write, stream: NodeJS.WriteStream) =>
    ((chunk: unknown, ...rest: unknown[]) =>
      typeof chunk === 'string'
        ? sink.push(chunk) > 0
        : (write as (...a: unknown[]) => boolean).call(stream, chunk, ...rest)) as typeof stdout.write;
  stdout.write = capture(out, writeOut, stdout);
  stderr.write = capture(err, writeErr, stderr);
  let code: number;
  try {
    code = await main([...args, '--store', storeDir]);
  } finally {
    stdout.write = writeOut;
    stderr.write = writeErr;
  }
  const text = out.join('');
  const lines = text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code, stdout: text, stderr: err.join(''), lines };
}
const storeRunner =
  (name: string) =>
  (...args: string[]): Promise<Ran> =>
    runAt(join(tmp, name), ...args);

/** The bookinfo cluster state without the objects (Service, Pods, EndpointSlice) of these apps. */
function bookinfoWithout(apps: readonly string[]): string {
  const docs = readFileSync(BOOKINFO_STATE, 'utf8').split(/^---$/m);
  const kept = docs.filter((d) => !apps.some((app) => new RegExp(`^  name: ${app}(-|$)`, 'm').test(d)));
  assert.ok(
    kept.length <= docs.length - 3 * apps.length,
    'at least a Service, a Pod and an EndpointSlice per app removed',
  );
  const path = join(tmp, `bookinfo-without-${apps.join('-')}.yaml`);
  writeFileSync(path, kept.join('---'));
  return path;
}

const versions = async (run: (...a: string[]) => Promise<Ran>): Promise<unknown[]> =>
  (await run('log')).lines.map((l) => l.version);

test('an empty folder or a YAML typo is refused, not served; recorded as a candidate; --allow-shrink serves it', async () => {
  const run = storeRunner('empty');
  assert.equal((await run('compile', BOOKINFO_STATE, DR, V3)).code, 0);

  const emptyDir = join(tmp, 'empty-inputs');
  mkdirSync(emptyDir);
  const empty = await run('compile', emptyDir);
  assert.equal(empty.code, 1, empty.stderr);
  assert.equal(empty.lines[0]?.status, 'refused');
  assert.equal(empty.lines[0]?.classes, 0);
  assert.equal(empty.lines[0]?.candidate, 1);
  assert.equal(empty.lines[0]?.version, 1, 'version 1 is still served');
  assert.match(empty.stderr, /publish guard: not served on channel main.*no proxy classes/);
  assert.match(empty.stderr, /promote candidate:1/);
  assert.deepEqual(empty.lines[0]?.lostNamespaces, ['default', 'istio-system']);

  const typo = join(tmp, 'typo.yaml');
  writeFileSync(typo, 'apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: reviews\nspec: {}\n');
  const bad = await run('compile', typo);
  assert.equal(bad.code, 1, bad.stderr);
  assert.equal(bad.lines[0]?.status, 'refused');
  assert.equal(bad.lines[0]?.candidate, 1, 'the same empty snapshot: the same candidate');
  assert.deepEqual(await versions(run), [1], 'nothing new served');

  const audit = await run('audit', '--json');
  assert.equal(audit.lines.filter((l) => l.kind === 'guard').length, 2);
  assert.equal(audit.lines.filter((l) => l.kind === 'candidate').length, 1);

  const forced = await run('compile', emptyDir, '--allow-shrink', '--reason', 'decommission');
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(forced.lines[0]?.status, 'published');
  assert.deepEqual(await versions(run), [2, 1]);
});

test('the guard on bookinfo: one service removed is served, all but one refused (naming them); the threshold is per channel', async () => {
  const run = storeRunner('shrink');
  assert.equal((await run('compile', BOOKINFO_STATE, DR, V3)).code, 0);

  const oneLess = await run('compile', bookinfoWithout(['details']), DR, V3);
  assert.equal(oneLess.code, 0, oneLess.stderr);
  assert.equal(oneLess.lines[0]?.status, 'published');

  assert.equal((await run('compile', BOOKINFO_STATE, DR, V3)).code, 0);
  const onlyOne = await run('compile', bookinfoWithout(['details', 'ratings', 'reviews']), DR, V3);
  assert.equal(onlyOne.code, 1, onlyOne.stderr);
  assert.equal(onlyOne.lines[0]?.status, 'refused');
  assert.deepEqual(onlyOne.lines[0]?.lostServices, [
    'details.default.svc.cluster.local',
    'ratings.default.svc.cluster.local',
    'reviews.default.svc.cluster.local',
  ]);
  assert.match(onlyOne.stderr, /loses 3 of 5 services \(more than 50 %\)/);

  assert.deepEqual((await run('guard')).lines[0]?.guard, { maxShrinkPercent: 50 });
  assert.equal((await run('guard', '--max-shrink', 'lots')).code, 2);
  assert.deepEqual((await run('guard', '--max-shrink', '80')).lines[0]?.guard, { maxShrinkPercent: 80 });
  const allowed = await run('compile', bookinfoWithout(['details', 'ratings', 'reviews']), DR, V3);
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.equal(allowed.lines[0]?.status, 'published');
});

test('rollback to a good version after an empty one refuses clusters left without endpoints, naming the services; --force serves it', async () => {
  const run = storeRunner('rollback');
  assert.equal((await run('compile', BOOKINFO_STATE, DR, V3)).code, 0);
  const noEndpoints = join(tmp, 'services-only.yaml');
  writeFileSync(
    noEndpoints,
    readFileSync(BOOKINFO_STATE, 'utf8')
      .split(/^---$/m)
      .filter((d) => !/^kind: (Pod|EndpointSlice)$/m.test(d))
      .join('---'),
  );
  const empty = await run('compile', noEndpoints, DR, V3);
  assert.equal(empty.lines[0]?.status, 'refused', 'every endpoint gone: refused');
  assert.equal((await run('compile', noEndpoints, DR, V50, '--allow-shrink')).code, 0);

  const rb = await run('rollback', '1', '--reason', 'undo');
  assert.equal(rb.code, 1, rb.stderr);
  assert.match(
    rb.stderr,
    /rollback of 1 refused: .*cluster\(s\) that had endpoints in 1 would have none \(services: .*reviews\.default\.svc\.cluster\.local/,
  );
  assert.match(rb.stderr, /--force/);
  assert.deepEqual(await versions(run), [2, 1]);

  const forced = await run('rollback', '1', '--force', '--reason', 'undo anyway');
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(forced.lines[0]?.version, 3);
});

test('pin keeps what is served: pin N of another config is refused naming rollback; moving a pin or a tag needs --force; the candidate is always named', async () => {
  const run = storeRunner('pin');
  const moved = join(tmp, 'moved-state.yaml');
  writeFileSync(moved, readFileSync(BOOKINFO_STATE, 'utf8').replaceAll('10.244.0.', '10.77.0.'));
  assert.equal((await run('compile', BOOKINFO_STATE, DR, V3)).code, 0); // 1
  assert.equal((await run('compile', BOOKINFO_STATE, DR, V50)).code, 0); // 2
  assert.equal((await run('compile', moved, DR, V50)).code, 0); // 3: 2's config, other endpoints

  const older = await run('pin', '1', '--reason', 'freeze');
  assert.equal(older.code, 1);
  assert.match(older.stderr, /version 1's config is not the one served \(version 3\).*meshsnap rollback 1/);
  assert.equal((await run('log')).lines.length, 3, 'pin 1 changed nothing');

  const same = await run('pin', '2', '--reason', 'freeze');
  assert.equal(same.code, 0, same.stderr);
  assert.equal((same.lines[0]?.pinned as { version: number }).version, 2);
  const move = await run('pin', '--reason', 'freeze');
  assert.equal(move.code, 1);
  assert.match(move.stderr, /already pinned to version 2.*--force/);
  const forced = await run('pin', '--force', '--reason', 'freeze');
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal((forced.lines[0]?.pinned as { version: number }).version, 3);

  // Compiling version 1's inputs on the pinned channel: a candidate, named every time.
  const first = await run('compile', moved, DR, V3);
  assert.deepEqual([first.lines[0]?.status, first.lines[0]?.candidate], ['candidate', 1]);
  const again = await run('compile', moved, DR, V3);
  assert.deepEqual([again.lines[0]?.status, again.lines[0]?.candidate], ['candidate', 1]);
  assert.match(again.stderr, /already candidate 1 \(meshsnap promote candidate:1 serves it\)/);

  assert.equal((await run('tag', '1', 'good')).code, 0);
  assert.equal((await run('tag', '1', 'good')).code, 0, 'the same tag again is fine');
  const retag = await run('tag', '2', 'good');
  assert.equal(retag.code, 1);
  assert.match(retag.stderr, /tag good already names version 1.*--force/);
  assert.equal((await run('tag', '2', 'good', '--force')).code, 0);
  assert.deepEqual((await run('tag')).lines, [{ tag: 'good', version: 2 }]);
});

test('the GitOps revision: the inputs folder’s git commit by default, --source-revision otherwise; shown by log and audit, selectable as rev:PREFIX', async () => {
  const run = storeRunner('rev');
  const repo = join(tmp, 'gitops');
  mkdirSync(repo);
  writeFileSync(join(repo, 'state.yaml'), readFileSync(BOOKINFO_STATE, 'utf8'));
  writeFileSync(join(repo, 'dr.yaml'), readFileSync(DR, 'utf8'));
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
      encoding: 'utf8',
    }).trim();
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'bookinfo');
  const head = git('rev-parse', 'HEAD');

  assert.equal((await run('compile', repo)).code, 0);
  assert.deepEqual((await run('log')).lines[0]?.source, { revision: head });
  writeFileSync(join(repo, 'vs.yaml'), readFileSync(V50, 'utf8'));
  assert.equal((await run('compile', repo)).code, 0);
  assert.deepEqual((await run('log')).lines[0]?.source, { revision: head, dirty: true });
  assert.equal(
    (
      await run(
        'compile',
        BOOKINFO_STATE,
        DR,
        V3,
        '--source-revision',
        'abcdef0123456789',
        '--source-url',
        'https://git.example.com/mesh',
      )
    ).code,
    0,
  );
  assert.deepEqual((await run('log')).lines[0]?.source, {
    revision: 'abcdef0123456789',
    url: 'https://git.example.com/mesh',
  });
  assert.match((await run('audit')).stdout, /rev abcdef012345/);

  const diff = await run('diff', `rev:${head.slice(0, 7)}`, 'rev:abcdef0', '--json');
  assert.equal(diff.code, 0, diff.stderr);
  const d = diff.lines[0] as { from: { version: string }; to: { version: string } };
  assert.deepEqual([d.from.version, d.to.version], ['2', '3'], 'the newest version of that revision');
  assert.equal((await run('compile', BOOKINFO_STATE, DR, V50, '--source-revision', 'abcdef0999')).code, 0);
  const ambiguous = await run('diagnostics', 'rev:abcdef0');
  assert.equal(ambiguous.code, 2);
  assert.match(ambiguous.stderr, /ambiguous/);
  assert.equal((await run('diagnostics', 'rev:abcdef01')).code, 0);
  assert.equal((await run('diagnostics', 'rev:0000000')).code, 1, 'no such revision');
  assert.equal((await run('diagnostics', 'rev:abc')).code, 2, 'fewer than 7 digits is not a selector');
});

test('compile on a pinned channel whose inputs lost every EndpointSlice is refused (exit 1, the pin named); --allow-shrink serves it', async () => {
  const run = storeRunner('pinned-guard');
  const noEndpoints = join(tmp, 'no-endpoint-slices.yaml');
  writeFileSync(
    noEndpoints,
    readFileSync(BOOKINFO_STATE, 'utf8')
      .split(/^---$/m)
      .filter((d) => !/^kind: EndpointSlice$/m.test(d))
      .join('---'),
  );
  assert.equal((await run('compile', BOOKINFO_STATE, DR, V3)).code, 0); // 1
  assert.equal((await run('pin', '--reason', 'freeze')).code, 0);

  const refused = await run('compile', noEndpoints, DR, V50);
  assert.equal(refused.code, 1, refused.stderr);
  assert.equal(refused.lines[0]?.status, 'refused');
  assert.equal(refused.lines[0]?.version, 1);
  assert.equal(refused.lines[0]?.pinned, 1);
  assert.equal(refused.lines[0]?.candidate, 1, 'the config change is still candidate 1');
  assert.ok((refused.lines[0]?.problems as string[]).some((p) => /serves 0 endpoints/.test(p)));
  assert.match(refused.stderr, /pinned to version 1 and keeps serving version 1.*--allow-shrink/);
  assert.equal((await run('log')).lines.length, 1, 'nothing new served');

  const forced = await run('compile', noEndpoints, DR, V50, '--allow-shrink');
  assert.equal(forced.code, 0, forced.stderr);
  assert.deepEqual([forced.lines[0]?.status, forced.lines[0]?.version], ['candidate', 2]);
});
