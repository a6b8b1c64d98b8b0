/**
 * The AWS Lambda handlers (functions/aws) invoked as Lambda invokes them — API Gateway HTTP API
 * (payload 2.0) events and S3 ObjectCreated notifications, shaped as AWS documents them — over an
 * S3 store on s3rver (the S3 protocol, 127.0.0.1, port 0). The environment is set as the function's
 * would be (MESHSNAP_STORE, the write token, AWS credentials), and the exported `handler`s are used.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { InputText } from '../../src/pipeline.js';
import { startS3rver, type RunningS3 } from '../store/s3rver.js';
import { BASE_PATHS, nodeDigest, readInputs, REVIEWS_50_V3, REVIEWS_V3 } from './bookinfo.js';
import { httpEvent, lambdaContext, s3Event, type Json } from './lambda-events.js';

const TOKEN = 'lambda-write-token';

let s3: RunningS3;
let client: S3Client;
let v3: InputText[];
let fifty: InputText[];
let api: (event: Json, context: Json) => Promise<Json>;
let onUpload: (event: Json) => Promise<Json>;

before(async () => {
  s3 = await startS3rver('meshsnap-test');
  v3 = await readInputs([...BASE_PATHS, REVIEWS_V3]);
  fifty = await readInputs([...BASE_PATHS, REVIEWS_50_V3]);
  // As the Lambda's configuration and runtime would set them. s3rver ignores conditional writes.
  Object.assign(process.env, {
    MESHSNAP_STORE: `s3://${s3.bucket}/store?endpoint=${encodeURIComponent(s3.endpoint)}&forcePathStyle=true&conditional=false&region=eu-west-1`,
    MESHSNAP_WRITE_TOKEN: TOKEN,
    AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    AWS_REGION: 'eu-west-1',
  });
  client = new S3Client({
    region: 'eu-west-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: s3.credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  api = (await import('../../functions/aws/api.js')).handler as never;
  onUpload = (await import('../../functions/aws/s3-inputs.js')).handler as never;
});

after(async () => {
  client?.destroy();
  await s3?.close();
});

const body = (res: Json): Json => {
  assert.equal(res.isBase64Encoded, false, 'JSON answers are text');
  return JSON.parse(res.body as string);
};

const upload = (key: string, text: string) =>
  client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: text, ContentType: 'application/json' }));

test('API Gateway events: list, compile with the token, bad input', { timeout: 60_000 }, async () => {
  const empty = await api(httpEvent('GET', '/api/v1/channels/main/snapshots?limit=5'), lambdaContext);
  assert.equal(empty.statusCode, 200);
  assert.deepEqual(body(empty).snapshots, []);

  const anonymous = await api(
    httpEvent('POST', '/api/v1/channels/main/compile', { body: { files: v3 } }),
    lambdaContext,
  );
  assert.equal(anonymous.statusCode, 401);
  assert.equal(body(anonymous).error.code, 'unauthorized');

  const compiled = await api(
    httpEvent('POST', '/api/v1/channels/main/compile', { token: TOKEN, body: { files: v3, reason: 'first' } }),
    lambdaContext,
  );
  assert.equal(compiled.statusCode, 201, compiled.body?.slice(0, 300));
  const c = body(compiled);
  assert.equal(c.version, 1);
  assert.equal(c.digest, nodeDigest(v3), 'the Lambda compiles bookinfo to the Node digest');
  assert.match(String(compiled.headers['content-type']), /application\/json/);

  const notJson = await api(
    httpEvent('POST', '/api/v1/channels/main/compile', { token: TOKEN, body: '{"files": [' }),
    lambdaContext,
  );
  assert.equal(notJson.statusCode, 400);
  assert.equal(body(notJson).error.code, 'bad_request');

  const list = await api(httpEvent('GET', '/api/v1/channels/main/snapshots?limit=5'), lambdaContext);
  assert.deepEqual(
    body(list).snapshots.map((s: Json) => s.version),
    [1],
  );

  // The audit page, as text (not base64) through the adapter.
  const page = await api(httpEvent('GET', '/'), lambdaContext);
  assert.equal(page.statusCode, 200);
  assert.equal(page.isBase64Encoded, false);
  assert.match(String(page.headers['content-type']), /text\/html/);

  // The watcher's compile function is there too.
  const wire = await api(
    httpEvent('POST', '/compile', { body: { schema: 'meshsnap.compile-request/v1', objects: [] } }),
    lambdaContext,
  );
  assert.equal(wire.statusCode, 200);
  assert.equal(body(wire).schema, 'meshsnap.compile-response/v1');
});

test('an inputs upload and its S3 event publish a new version', { timeout: 60_000 }, async () => {
  // A bundle in one object, under a key with a space (S3 sends it as `+`).
  await upload('inputs/main/bookinfo bundle.json', JSON.stringify({ files: fifty }));
  const out = await onUpload(s3Event(s3.bucket, 'inputs/main/bookinfo+bundle.json'));
  assert.equal(out.results.length, 1, JSON.stringify(out));
  const [r] = out.results;
  assert.equal(r.status, 'published', JSON.stringify(r));
  assert.equal(r.channel, 'main');
  assert.equal(r.version, 2);
  assert.equal(r.digest, nodeDigest(fifty));

  const list = await api(httpEvent('GET', '/api/v1/channels/main/snapshots?limit=5'), lambdaContext);
  const snaps = body(list).snapshots;
  assert.deepEqual(
    snaps.map((s: Json) => s.version),
    [2, 1],
    'the new version is listed first',
  );
  assert.equal(snaps[0].status.current, true);

  const audit = body(await api(httpEvent('GET', '/api/v1/audit?channel=main'), lambdaContext));
  const text = JSON.stringify(audit.entries);
  assert.match(text, /s3:AWS:AIDAEXAMPLEWATCHER/, 'the uploader is recorded');
  assert.match(text, /inputs\/main\/bookinfo bundle\.json/, 'the key is the reason');

  // The same event again (S3 delivers at least once): nothing new.
  const again = await onUpload(s3Event(s3.bucket, 'inputs/main/bookinfo+bundle.json'));
  assert.equal(again.results[0].status, 'unchanged');
});

test('a folder of YAML files compiles as `meshsnap compile DIR` would', { timeout: 60_000 }, async () => {
  for (const f of v3) await upload(`inputs/staging/${f.file}`, f.text);
  await upload('inputs/staging/README.txt', 'not an input');
  const out = await onUpload(s3Event(s3.bucket, `inputs/staging/${encodeURIComponent(v3[0]?.file ?? '')}`));
  assert.equal(out.results[0].status, 'published', JSON.stringify(out));
  assert.equal(out.results[0].digest, nodeDigest(v3));
  const channels = body(await api(httpEvent('GET', '/api/v1/channels'), lambdaContext)).channels.map(
    (c: Json) => c.name,
  );
  assert.deepEqual(channels, ['main', 'staging']);
});

test('keys outside inputs/<channel>/ are skipped, not compiled', { timeout: 30_000 }, async () => {
  const out = await onUpload(s3Event(s3.bucket, 'store/channels/main/head.json'));
  assert.deepEqual(out.results, []);
  assert.equal(out.skipped.length, 1);
  const noChannel = await onUpload(s3Event(s3.bucket, 'inputs/loose.yaml'));
  assert.deepEqual(noChannel.results, []);
});
