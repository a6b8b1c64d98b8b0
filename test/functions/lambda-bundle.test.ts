/**
 * What gets deployed is the esbuild bundle (scripts/bundle-lambda.mjs), not the tsc output: bundle
 * both handlers, import them as the nodejs20.x runtime would (`index.handler` of an .mjs file) and
 * answer an API Gateway event over s3rver.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { REPO } from '../helpers/paths.js';
import { startS3rver, type RunningS3 } from '../store/s3rver.js';
import { httpEvent, lambdaContext, type Json } from './lambda-events.js';

let dir: string;
let s3: RunningS3;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meshsnap-lambda-bundle-'));
  s3 = await startS3rver('bundle-test');
  await promisify(execFile)(process.execPath, [join(REPO, 'scripts', 'bundle-lambda.mjs'), '--outdir', dir], {
    cwd: REPO,
    timeout: 90_000,
  });
});

after(async () => {
  await s3?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the bundled handlers load and the API answers an API Gateway event', { timeout: 120_000 }, async () => {
  for (const name of ['api', 's3-inputs'])
    assert.ok((await stat(join(dir, name, 'index.mjs'))).size > 0, `${name}/index.mjs`);
  Object.assign(process.env, {
    MESHSNAP_STORE: `s3://${s3.bucket}/store?endpoint=${encodeURIComponent(s3.endpoint)}&forcePathStyle=true&conditional=false`,
    MESHSNAP_WRITE_TOKEN: 'bundle-token',
    AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    AWS_REGION: 'eu-west-1',
  });
  const inputs = await import(pathToFileURL(join(dir, 's3-inputs', 'index.mjs')).href);
  assert.equal(typeof inputs.handler, 'function');
  const { handler } = (await import(pathToFileURL(join(dir, 'api', 'index.mjs')).href)) as {
    handler: (e: Json, c: Json) => Promise<Json>;
  };
  const res = await handler(httpEvent('GET', '/api/v1/channels/main/snapshots?limit=5'), lambdaContext);
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(JSON.parse(res.body).snapshots, []);
  const denied = await handler(
    httpEvent('POST', '/api/v1/channels/main/pin', { body: { reason: 'x' } }),
    lambdaContext,
  );
  assert.equal(denied.statusCode, 401);
});
