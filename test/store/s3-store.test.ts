/**
 * The S3 backend over the real S3 protocol (s3rver on 127.0.0.1): the store contract, the
 * s3:// URL, and the layout's keys. s3rver ignores If-None-Match/If-Match, so the contract's
 * conditional-write assertions are skipped here (they are proven on the folder store and R2).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { digestOf } from '../../src/snapshot/digest.js';
import { BIN } from '../helpers/paths.js';
import { ObjectStore } from '../../src/snapshot/store/object-store.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { openStore } from '../../src/snapshot/store/open.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { parseS3Url, S3Backend } from '../../src/snapshot/store/s3.js';
import { runStoreContract } from './contract.js';
import { CREATED_AT, nthSnapshot } from './helpers.js';
import { startConditionalProxy, type ConditionalProxy } from './s3-conditional-proxy.js';
import { startS3rver, type RunningS3 } from './s3rver.js';

let s3: RunningS3;
let proxy: ConditionalProxy;
let prefixes = 0;
const backends: S3Backend[] = [];

before(async () => {
  s3 = await startS3rver();
  proxy = await startConditionalProxy(s3);
});
after(async () => {
  for (const b of backends) b.destroy();
  await proxy.close();
  await s3.close();
});

const url = (prefix: string): string =>
  `s3://${s3.bucket}/${prefix}?endpoint=${encodeURIComponent(s3.endpoint)}&region=us-east-1&forcePathStyle=true&conditional=false`;
/** Through the proxy that enforces If-None-Match / If-Match (s3-conditional-proxy.ts). */
const conditionalUrl = (prefix: string): string =>
  `s3://${s3.bucket}/${prefix}?endpoint=${encodeURIComponent(proxy.endpoint)}&region=us-east-1&forcePathStyle=true`;

function backend(prefix: string, spec = url(prefix)): S3Backend {
  const b = new S3Backend(parseS3Url(spec), { credentials: s3.credentials, retry: { baseMs: 5 } });
  backends.push(b);
  return b;
}

const rawPutter =
  (prefix: string) =>
  async (key: string, bytes: Uint8Array): Promise<void> => {
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: s3.credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    await client.send(
      new PutObjectCommand({
        Bucket: s3.bucket,
        Key: `${prefix}/${key}`,
        Body: bytes,
        ContentLength: bytes.byteLength,
      }),
    );
    client.destroy();
  };

runStoreContract({
  name: 's3 (s3rver)',
  conditional: false,
  // s3rver answers each request in tens of milliseconds: a smaller history keeps the packs test
  // (checkpoints and deltas) well inside its time bound on a loaded 2-core machine.
  scale: { services: 60, versions: 16 },
  // AWS S3 gives a copy (onto itself too) a new LastModified; s3rver keeps the file's old time. The
  // touch request itself is checked below ('a reuse touches …'); its effect on the time only on AWS.
  touchKeepsTime: 's3rver keeps LastModified on a copy onto itself (AWS S3 gives the copy a new one)',
  open: async (opts = {}) => {
    const prefix = `t${++prefixes}/store`;
    const b = backend(prefix);
    return { store: new ObjectStore(b, { hasher: nodeSha256Hex, ...opts }), rawPut: rawPutter(prefix) };
  },
});

// The same contract with conditional writes enforced (AWS's semantics, by the proxy): the backend
// writes without its existence pre-check and must read S3's 412/404 answers right; concurrent
// writers on one channel run here.
runStoreContract({
  name: 's3 (s3rver + conditional writes)',
  conditional: true,
  scale: { services: 60, versions: 16 },
  touchKeepsTime: 's3rver keeps LastModified on a copy onto itself (AWS S3 gives the copy a new one)',
  open: async (opts = {}) => {
    const prefix = `c${++prefixes}/store`;
    return {
      store: new ObjectStore(backend(prefix, conditionalUrl(prefix)), { hasher: nodeSha256Hex, ...opts }),
      rawPut: rawPutter(prefix),
    };
  },
});

test(
  's3 conditional writes: a taken key answers 412 (exists), a stale or missing ETag is a conflict',
  { timeout: 30_000 },
  async () => {
    const a = backend('cas', conditionalUrl('cas'));
    const b = backend('cas', conditionalUrl('cas'));
    assert.equal(a.conditional, true);
    const refusedBefore = proxy.refused();
    const bytes = (t: string): Uint8Array => new TextEncoder().encode(t);
    assert.equal(await a.putIfAbsent('k', bytes('1')), 'created');
    assert.equal(await b.putIfAbsent('k', bytes('2')), 'exists');
    const first = await a.get('k');
    assert.deepEqual(first && new TextDecoder().decode(first.bytes), '1', 'the first write stays');
    assert.ok(first);
    assert.equal(await a.putIfMatch('k', bytes('3'), first.etag), 'ok');
    assert.equal(await b.putIfMatch('k', bytes('4'), first.etag), 'conflict', 'a stale ETag loses');
    assert.equal(await b.putIfMatch('absent', bytes('5'), first.etag), 'conflict', 'no key: 404, a conflict');
    assert.equal(new TextDecoder().decode((await a.get('k'))?.bytes), '3');
    assert.equal(
      proxy.refused() - refusedBefore,
      3,
      'three writes were refused by the server, none pre-checked by the client',
    );
  },
);

test('s3:// URLs parse into bucket, prefix and client options', () => {
  assert.deepEqual(
    parseS3Url('s3://bkt/a/b/?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-west-1&forcePathStyle=true'),
    {
      bucket: 'bkt',
      prefix: 'a/b',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
    },
  );
  assert.deepEqual(parseS3Url('s3://bkt'), { bucket: 'bkt', prefix: '' });
  assert.throws(() => parseS3Url('http://x/y'), TypeError);
});

test(
  'openStore(s3://…) publishes and reads back, with keys in the documented layout',
  { timeout: 30_000 },
  async () => {
    process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
    const store = openStore(url('opened'));
    const snap = nthSnapshot(7);
    const res = await publishSnapshot(store, 'main', snap, { createdAt: CREATED_AT });
    assert.equal(res.status, 'published');
    assert.deepEqual(await store.readChannel('main'), { version: 1, digest: snap.digest });
    const keys: string[] = [];
    for await (const { key } of backend('opened').list('')) keys.push(key);
    assert.ok(keys.includes('channels/main/versions/1.json'));
    assert.ok(keys.includes('channels/main/head.json'));
    assert.ok(keys.some((k) => /^documents\/sha256\/[0-9a-f]{2}\/[0-9a-f]{64}\.json$/.test(k)));
    assert.ok(keys.some((k) => /^objects\/sha256\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(k)));
    ((store as ObjectStore).backend as S3Backend).destroy();
  },
);

test(
  'a reuse touches an S3 object older than freshenAfterMs: a copy onto itself, bytes and ETag unchanged',
  { timeout: 30_000 },
  async () => {
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: s3.credentials,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    const headOf = (prefix: string, digest: string) =>
      client.send(
        new HeadObjectCommand({
          Bucket: s3.bucket,
          Key: `${prefix}/objects/sha256/${digest.slice(7, 9)}/${digest.slice(7)}`,
        }),
      );
    try {
      const bytes = new TextEncoder().encode('touch me');
      const digest = digestOf(bytes);
      const lazy = new ObjectStore(backend('touch-lazy'), { hasher: nodeSha256Hex }); // default: touch after 10 min
      await lazy.putObject(digest, bytes);
      assert.equal(await lazy.hasObject(digest), true);
      assert.equal(
        (await headOf('touch-lazy', digest)).Metadata?.['meshsnap-touched'],
        undefined,
        'a fresh object is not touched',
      );

      const eager = new ObjectStore(backend('touch-eager'), { hasher: nodeSha256Hex, freshenAfterMs: 0 });
      await eager.putObject(digest, bytes);
      const before = await headOf('touch-eager', digest);
      assert.equal(await eager.hasObject(digest), true);
      const after = await headOf('touch-eager', digest);
      const touched = after.Metadata?.['meshsnap-touched'];
      assert.ok(touched && Date.parse(touched) >= Date.now() - 10_000, `touched at ${touched}`);
      assert.equal(after.ETag, before.ETag);
      assert.deepEqual(new Uint8Array((await eager.getObject(digest)) as Uint8Array), bytes);
    } finally {
      client.destroy();
    }
  },
);

test(
  'meshsnap gc --store s3://… collects over S3; a grace shorter than the freshen interval is refused',
  { timeout: 60_000 },
  async () => {
    const env = {
      ...process.env,
      AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
    };
    const store = new ObjectStore(backend('cli-gc'), { hasher: nodeSha256Hex });
    for (const n of [1, 2, 3]) await publishSnapshot(store, 'main', nthSnapshot(n), { createdAt: CREATED_AT });
    const refused = await cli(['gc', '--store', url('cli-gc'), '--grace-minutes', '0'], env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /grace period in minutes 0 is shorter than the store's freshen interval of 10 min/);
    assert.deepEqual(await store.listVersions('main'), [3, 2, 1], 'nothing was deleted');

    await new Promise((r) => setTimeout(r, 1_100)); // S3 times are whole seconds
    const ran = await cli(
      ['gc', '--store', `${url('cli-gc')}&freshenMinutes=0`, '--grace-minutes', '0', '--keep', '1'],
      env,
    );
    assert.equal(ran.code, 0, ran.stderr);
    const result = JSON.parse(ran.stdout) as {
      deletedVersions: { main: number[] };
      deletedObjects: number;
      deletedDocuments: number;
    };
    assert.deepEqual(result.deletedVersions.main, [2, 1]);
    assert.ok(result.deletedObjects > 0 && result.deletedDocuments > 0);
    assert.deepEqual(await store.listVersions('main'), [3]);
    assert.deepEqual(await store.getSnapshot(nthSnapshot(3).digest), nthSnapshot(3).content);
    for (const [d] of nthSnapshot(1).objects)
      if (!nthSnapshot(3).objects.has(d)) assert.equal(await store.getObject(d), null);
  },
);

/** The CLI in a child process, asynchronously: s3rver runs in this process and must keep answering. */
function cli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 45_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
