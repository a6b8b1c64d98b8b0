import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { digestOf, utf8Bytes } from '../../src/snapshot/digest.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { CorruptObjectError, DigestMismatchError, InvalidDigestError } from '../../src/snapshot/store/store.js';
import { InvalidChannelError } from '../../src/snapshot/manifest.js';
import { CREATED_AT, nthSnapshot, tempStoreDir } from './helpers.js';
import { decodePack, encodePack } from '../../src/snapshot/store/packs.js';
import { encodePackParts } from '../../src/snapshot/store/pack-format.js';

const bytes = utf8Bytes('hello objects');
const digest = digestOf(bytes);

test('objects are stored under sha256/<aa>/<hex> and read back verified', async () => {
  const root = tempStoreDir();
  const store = new LocalStore(root);
  assert.equal(await store.hasObject(digest), false);
  assert.equal(await store.getObject(digest), null);
  assert.equal(await store.putObject(digest, bytes), 'created');
  assert.equal(await store.putObject(digest, bytes), 'exists');
  const hex = digest.slice('sha256:'.length);
  assert.ok(existsSync(join(root, 'objects', 'sha256', hex.slice(0, 2), hex)));
  assert.ok(await store.hasObject(digest));
  assert.deepEqual(await store.getObject(digest), bytes);
});

test('a pack written from its parts (more than one writev batch) is the pack encodePack gives, stored once', async () => {
  const root = tempStoreDir();
  const store = new LocalStore(root);
  const entries = new Map<string, Uint8Array>();
  for (let i = 0; i < 3000; i++) {
    const b = utf8Bytes(`entry ${i}`);
    entries.set(digestOf(b), b);
  }
  const whole = encodePack(entries);
  const put = await store.putObjectParts(encodePackParts(entries));
  assert.deepEqual(put, { digest: digestOf(whole), status: 'created' });
  assert.deepEqual(await store.getObject(put.digest), whole);
  assert.equal(decodePack(whole).size, 3000);
  assert.deepEqual(await store.putObjectParts(encodePackParts(entries)), { digest: put.digest, status: 'exists' });
  assert.deepEqual(readdirSync(join(root, 'tmp')), [], 'no temp file left');
});

test('a pack of small and big entries (gathered into buffers, and passed whole) is the pack encodePack gives', async () => {
  const root = tempStoreDir();
  const store = new LocalStore(root);
  const entries = new Map<string, Uint8Array>();
  // Small entries filling several 1 MiB buffers, with big ones (16 KiB and more) in between, and empty ones.
  for (let i = 0; i < 4000; i++) {
    const size = i % 97 === 0 ? 16_384 + ((i * 13) % 200_000) : i % 50 === 0 ? 0 : 100 + ((i * 37) % 900);
    const b = new Uint8Array(size).fill(i & 255);
    if (size > 0) b[0] = i >> 8;
    entries.set(digestOf(b), b);
  }
  const whole = encodePack(entries);
  assert.ok(whole.byteLength > 3 << 20);
  const put = await store.putObjectParts(encodePackParts(entries));
  assert.deepEqual(put, { digest: digestOf(whole), status: 'created' });
  assert.deepEqual(await store.getObject(put.digest), whole);
  assert.deepEqual(readdirSync(join(root, 'tmp')), [], 'no temp file left');
});

test('bytes that do not match the digest are refused and an existing object is never overwritten', async () => {
  const root = tempStoreDir();
  const store = new LocalStore(root);
  await store.putObject(digest, bytes);
  await assert.rejects(store.putObject(digest, utf8Bytes('other bytes')), DigestMismatchError);
  assert.deepEqual(await store.getObject(digest), bytes);
  await assert.rejects(store.putObject('sha256:nothex', bytes), InvalidDigestError);
  await assert.rejects(store.getObject('../../etc/passwd'), InvalidDigestError);
});

test('a corrupted object is detected on read and on put, and left alone', async () => {
  const root = tempStoreDir();
  const store = new LocalStore(root);
  await store.putObject(digest, bytes);
  const path = store.objectPath(digest);
  writeFileSync(path, 'bit rot');
  await assert.rejects(store.getObject(digest), (e: unknown) => e instanceof CorruptObjectError && e.digest === digest);
  await assert.rejects(store.putObject(digest, bytes), CorruptObjectError);
  assert.equal(readFileSync(path, 'utf8'), 'bit rot');
});

test('snapshot documents round-trip and are verified', async () => {
  const root = tempStoreDir();
  const store = new LocalStore(root);
  const snap = nthSnapshot(1);
  const docs = new Map(snap.documents.map((d) => [d.digest, d.bytes]));
  assert.deepEqual(await store.putDocuments(docs), [...docs.keys()].sort());
  assert.deepEqual(await store.putDocuments(docs), [], 'stored once');
  assert.deepEqual(await store.getSnapshot(snap.digest), snap.content);
  assert.equal(await store.getSnapshot(nthSnapshot(2).digest), null);
  await assert.rejects(store.putDocuments(new Map([[snap.digest, utf8Bytes('{}')]])), DigestMismatchError);
  writeFileSync(store.documentPath(snap.digest), '{}');
  await assert.rejects(new LocalStore(root).getSnapshot(snap.digest), CorruptObjectError);
});

test('publishSnapshot stores objects, document, record and head; an unchanged digest is not republished', async () => {
  const root = tempStoreDir();
  const store = new LocalStore(root);
  assert.equal(await store.readChannel('prod'), null);
  assert.deepEqual(await store.listVersions('prod'), []);

  const one = nthSnapshot(1);
  const first = await publishSnapshot(store, 'prod', one, {
    createdAt: CREATED_AT,
    diagnostics: [{ severity: 'warning', code: 'w', message: 'careful' }],
  });
  assert.equal(first.status, 'published');
  assert.ok(first.status === 'published');
  assert.equal(first.objectsWritten, one.objects.size);
  assert.equal(first.record.version, 1);
  assert.equal(first.record.parent, null);
  assert.equal(first.record.digest, one.digest);
  assert.equal(first.record.createdAt, CREATED_AT);
  assert.deepEqual(first.record.counts, { clusters: 1, endpoints: 1, listeners: 0, routes: 0, classes: 1, objects: 2 });
  for (const d of one.objects.keys()) assert.ok(await store.hasObject(d));
  assert.deepEqual(await store.getSnapshot(one.digest), one.content);
  assert.deepEqual(await store.readChannel('prod'), { version: 1, digest: one.digest });
  assert.deepEqual(JSON.parse(readFileSync(join(root, 'channels', 'prod', 'head.json'), 'utf8')), {
    version: 1,
    digest: one.digest,
  });

  const again = await publishSnapshot(store, 'prod', nthSnapshot(1), { createdAt: '2025-01-02T00:00:00.000Z' });
  assert.deepEqual(again, { status: 'unchanged', head: { version: 1, digest: one.digest } });
  assert.deepEqual(await store.listVersions('prod'), [1]);

  const two = nthSnapshot(2);
  const second = await publishSnapshot(store, 'prod', two, { createdAt: CREATED_AT });
  assert.ok(second.status === 'published');
  assert.equal(second.record.version, 2);
  assert.equal(second.record.parent, 1);
  assert.equal(second.objectsWritten, 1, 'the shared cluster object was already there');
  assert.deepEqual(await store.listVersions('prod'), [2, 1]);
  assert.deepEqual(await store.getVersion('prod', 1), first.record);
  assert.deepEqual(await store.getVersion('prod', 2), second.record);
  assert.equal(await store.getVersion('prod', 3), null);

  // channels are independent
  const other = await publishSnapshot(store, 'staging', two, { createdAt: CREATED_AT });
  assert.ok(other.status === 'published');
  assert.equal(other.record.version, 1);
  await assert.rejects(store.readChannel('../prod'), InvalidChannelError);
});

test('a stale or missing head is corrected from the version records', async () => {
  const root = tempStoreDir();
  const store = new LocalStore(root);
  for (const n of [1, 2, 3]) await publishSnapshot(store, 'c', nthSnapshot(n), { createdAt: CREATED_AT });
  const head = join(root, 'channels', 'c', 'head.json');
  writeFileSync(head, JSON.stringify({ version: 1, digest: nthSnapshot(1).digest }));
  assert.deepEqual(await store.readChannel('c'), { version: 3, digest: nthSnapshot(3).digest });
  const next = await publishSnapshot(store, 'c', nthSnapshot(4), { createdAt: CREATED_AT });
  assert.ok(next.status === 'published');
  assert.equal(next.record.version, 4);
  // a crash between the version record and the head move: no head at all
  unlinkSync(head);
  assert.deepEqual(await store.readChannel('c'), { version: 4, digest: nthSnapshot(4).digest });
  writeFileSync(head, '{"vers');
  assert.deepEqual(
    await store.readChannel('c'),
    { version: 4, digest: nthSnapshot(4).digest },
    'a garbled head is ignored',
  );
  const fifth = await publishSnapshot(store, 'c', nthSnapshot(5), { createdAt: CREATED_AT });
  assert.ok(fifth.status === 'published');
  assert.deepEqual(
    JSON.parse(readFileSync(head, 'utf8')),
    { version: 5, digest: nthSnapshot(5).digest },
    'and replaced on the next publish',
  );
});

test('no temporary files are left behind', async () => {
  const root = tempStoreDir();
  const store = new LocalStore(root);
  await publishSnapshot(store, 'c', nthSnapshot(1), { createdAt: CREATED_AT });
  await store.putObject(digest, bytes);
  await store.putObject(digest, bytes);
  assert.deepEqual(readdirSync(join(root, 'tmp')), []);
  assert.deepEqual(readdirSync(join(root, 'channels', 'c', 'versions')), ['1.json']);
});
