/**
 * The S3 backend over the real S3 protocol (s3rver on 127.0.0.1): the store contract, the
 * s3:// URL, and the layout's keys. s3rver ignores If-None-Match/If-Match, so the contract's
 * conditional-write assertions are skipped here (they are proven on the folder store and R2).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ObjectStore } from '../../src/snapshot/store/object-store.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { openStore } from '../../src/snapshot/store/open.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { parseS3Url, S3Backend } from '../../src/snapshot/store/s3.js';
import { runStoreContract } from './contract.js';
import { CREATED_AT, nthSnapshot } from './helpers.js';
import { startS3rver, type RunningS3 } from './s3rver.js';

let s3: RunningS3;
let prefixes = 0;
const backends: S3Backend[] = [];

before(async () => {
  s3 = await startS3rver();
});
after(async () => {
  for (const b of backends) b.destroy();
  await s3.close();
});

const url = (prefix: string): string => `s3://${s3.bucket}/${prefix}?endpoint=${encodeURIComponent(s3.endpoint)}&region=us-east-1&forcePathStyle=true&conditional=false`;

function backend(prefix: string): S3Backend {
  const b = new S3Backend(parseS3Url(url(prefix)), { credentials: s3.credentials, retry: { baseMs: 5 } });
  backends.push(b);
  return b;
}

runStoreContract({
  name: 's3 (s3rver)',
  conditional: false,
  // s3rver answers each request in tens of milliseconds: a smaller history keeps the packs test
  // (checkpoints and deltas) well inside its time bound on a loaded 2-core machine.
  scale: { services: 60, versions: 16 },
  open: async () => {
    const prefix = `t${++prefixes}/store`;
    const b = backend(prefix);
    return {
      store: new ObjectStore(b, { hasher: nodeSha256Hex }),
      rawPut: async (key, bytes) => {
        const client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: s3.credentials, requestChecksumCalculation: 'WHEN_REQUIRED' });
        await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${prefix}/${key}`, Body: bytes, ContentLength: bytes.byteLength }));
        client.destroy();
      },
    };
  },
});

test('s3:// URLs parse into bucket, prefix and client options', () => {
  assert.deepEqual(parseS3Url('s3://bkt/a/b/?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-west-1&forcePathStyle=true'), {
    bucket: 'bkt',
    prefix: 'a/b',
    endpoint: 'http://127.0.0.1:9000',
    region: 'eu-west-1',
    forcePathStyle: true,
  });
  assert.deepEqual(parseS3Url('s3://bkt'), { bucket: 'bkt', prefix: '' });
  assert.throws(() => parseS3Url('http://x/y'), TypeError);
});

test('openStore(s3://…) publishes and reads back, with keys in the documented layout', { timeout: 30_000 }, async () => {
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
});
