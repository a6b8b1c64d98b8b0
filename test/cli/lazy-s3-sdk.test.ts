/**
 * The AWS SDK is loaded only by a process that talks to S3 (src/snapshot/store/s3.ts): loading it
 * costs ~25 MB of memory and ~150 ms, which `meshsnap compile` on a folder store, whose peak at 10k
 * services is held under 512 MB, does not pay.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, test } from 'node:test';
import { BIN, BOOKINFO_STATE } from '../helpers/paths.js';

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-lazy-sdk-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs the CLI with a resolve hook that lists every package the process imports. */
function packagesImportedBy(args: readonly string[]): { status: number | null; packages: Set<string> } {
  const log = join(tmp, `packages-${Math.random().toString(36).slice(2)}.txt`);
  const hooks = join(tmp, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function resolve(spec, ctx, next) {
  const r = await next(spec, ctx);
  const m = /node_modules\\/((@[^/]+\\/)?[^/]+)/.exec(r.url);
  if (m) appendFileSync(${JSON.stringify(log)}, m[1] + '\\n');
  return r;
}`,
  );
  const register = join(tmp, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(register).href, BIN, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    // Credentials of its own: the SDK's default chain would otherwise ask an instance metadata service.
    env: { ...process.env, AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' },
  });
  assert.equal(r.error, undefined);
  return { status: r.status, packages: new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean)) };
}

test('meshsnap compile on a folder store never loads the AWS SDK; an s3:// store does', () => {
  const local = packagesImportedBy(['compile', BOOKINFO_STATE, '--store', join(tmp, 'store'), '--quiet']);
  assert.equal(local.status, 0);
  // The hook sees the process's imports: the compiler's own packages are there, the SDK is not.
  assert.ok(local.packages.has('protobufjs'), [...local.packages].join(' '));
  assert.ok(!local.packages.has('@aws-sdk/client-s3'), [...local.packages].join(' '));

  // Nothing listens on this port: the command fails, after loading the SDK for its first request.
  const s3 = packagesImportedBy([
    'log',
    '--store',
    's3://bucket?endpoint=http%3A%2F%2F127.0.0.1%3A9&forcePathStyle=true&region=us-east-1',
  ]);
  assert.notEqual(s3.status, 0);
  assert.ok(s3.packages.has('@aws-sdk/client-s3'), [...s3.packages].join(' '));
});
