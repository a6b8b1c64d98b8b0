/** Hostile names and stores through the CLI of this build: prototype names, reserved channels, terminal escapes, corrupt objects. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-cli-hard-'));
const store = join(tmp, 'store');
after(() => rmSync(tmp, { recursive: true, force: true }));

function run(...args: string[]): { code: number; stdout: string; stderr: string } {
  const script = `const { main } = await import(${JSON.stringify(MAIN)}); process.exitCode = await main(${JSON.stringify([...args, '--store', store])});`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) =>
    statSync(join(dir, n)).isDirectory() ? filesUnder(join(dir, n)) : [join(dir, n)],
  );
}

test('prototype names, reserved channels, terminal escapes and a corrupt object through the CLI', () => {
  const input = join(tmp, 'in.yaml');
  writeFileSync(
    input,
    'apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: "evil\\e[2Jname", namespace: default}\nspec: {hosts: [a], http: [{route: [{destination: {host: a}}]}]}\n',
  );
  const compiled = run('compile', input);
  assert.equal(compiled.code, 0, compiled.stderr);
  assert.ok(!compiled.stderr.includes('\u001b'), 'no raw escape character reaches the terminal');
  assert.match(compiled.stderr, /\\x1b\[2J/);

  assert.equal(run('compile', input, '--channel', 'main.candidates').code, 2);

  const untag = run('tag', '--delete', 'toString');
  assert.equal(untag.code, 1);
  assert.deepEqual(JSON.parse(untag.stdout), { tag: 'toString', deleted: false, version: null });
  const show = run('show', 'hasOwnProperty', '--node', 'sidecar~10.0.0.1~a-1.default~default.svc.cluster.local');
  assert.equal(show.code, 1);
  assert.match(show.stderr, /no tag "hasOwnProperty"/);
  assert.ok(!show.stdout.includes('function'));
  const audit = run('audit', '--json');
  assert.equal(audit.code, 0, audit.stderr);
  assert.ok(!audit.stdout.includes('function'));

  const victim = filesUnder(join(store, 'objects')).sort()[0] as string;
  writeFileSync(victim, 'corrupt');
  const verify = run('verify');
  assert.equal(verify.code, 1);
  assert.match(verify.stderr, /corrupt/);
});
