/**
 * The object spool (src/snapshot/store/file-spool.ts, src/snapshot/build/object-spool.ts): bytes read
 * back as written, no file left in any folder, and a build through it publishes exactly what the
 * in-memory build publishes (same digest, same objects, same checkpoint pack).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { generateMesh } from '../../bench/synthetic.js';
import { compileDocuments, compileTexts, compileTextsToPublish, Handoff, type InputText } from '../../src/pipeline.js';
import { PackedObjects } from '../../src/snapshot/stored-inputs/index.js';
import { isSpooled } from '../../src/snapshot/build.js';
import { SpoolingObjects } from '../../src/snapshot/build/spooling-objects.js';
import { FileSpool } from '../../src/snapshot/store/file-spool.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { decodePack } from '../../src/snapshot/store/pack-format.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import { BIN, BOOKINFO_STATE } from '../helpers/paths.js';

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-spool-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** Byte-equal, whatever the array type (the encoder hands out Buffers, a spool plain Uint8Arrays). */
const sameBytes = (a: Uint8Array | undefined, b: Uint8Array | undefined, what: string): void =>
  assert.ok(a !== undefined && b !== undefined && Buffer.compare(a, b) === 0, what);

const sha256 = (b: Uint8Array): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

test('a file spool reads back every append byte for byte (buffered, flushed, larger than a write), and leaves no file', () => {
  const dir = join(tmp, 'roundtrip');
  const spool = FileSpool.open(dir);
  assert.deepEqual(readdirSync(dir), [], 'the spool file leaves its folder when opened');
  const written: Uint8Array[] = [];
  const handles: number[] = [];
  for (const size of [0, 1, 100, 70_000, (1 << 20) - 3, 5, (1 << 20) + 17, 3000]) {
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i++) bytes[i] = (i * 31 + size) & 255;
    written.push(bytes);
    handles.push(spool.append(bytes));
  }
  handles.forEach((h, i) => {
    assert.equal(spool.byteLength(h), (written[i] as Uint8Array).byteLength);
    assert.deepEqual(spool.read(h), written[i]);
  });
  assert.equal(
    spool.size,
    written.reduce((n, b) => n + b.byteLength, 0),
  );
  spool.close();
  spool.close(); // idempotent
  assert.throws(() => spool.read(handles[0] as number), /closed/);
  assert.deepEqual(readdirSync(dir), []);
});

test('a grouped spool reads back every append, one at a time and a group at a time (buffered, written, big), and in digest order', () => {
  const dir = join(tmp, 'groups');
  const spool = FileSpool.open(dir);
  const written: { readonly bytes: Uint8Array; readonly group: number; readonly handle: number }[] = [];
  const sizes = [0, 1, 100, 40_000, 5, 32_768, 3000, 0, 70_000, 20_000, 20_000, 7];
  for (let i = 0; i < 300; i++) {
    const size = sizes[i % sizes.length] as number;
    const group = (i * 7) % 5;
    const bytes = new Uint8Array(size);
    for (let k = 0; k < size; k++) bytes[k] = (k * 31 + i) & 255;
    written.push({ bytes, group, handle: spool.append(bytes, group) });
  }
  // Every group's last bytes still wait in its buffer: read from there, as the written ones from the
  // file. Readers of groups read before the last one read as `read` does (their buffer was reused).
  const readers = [0, 1, 2, 3, 4, 9].map((g) => spool.readGroup(g));
  for (const { bytes, group, handle } of written) {
    assert.equal(spool.byteLength(handle), bytes.byteLength);
    assert.deepEqual(spool.read(handle), bytes);
    assert.deepEqual(new Uint8Array((readers[group] as (h: number) => Uint8Array)(handle)), bytes, `group ${group}`);
    // Another group's reader (or an empty group's) reads it as `read` does.
    assert.deepEqual(new Uint8Array((readers[(group + 1) % 5] as (h: number) => Uint8Array)(handle)), bytes);
    assert.deepEqual(new Uint8Array((readers[5] as (h: number) => Uint8Array)(handle)), bytes);
  }
  assert.equal(
    spool.size,
    written.reduce((n, w) => n + w.bytes.byteLength, 0),
  );
  assert.throws(() => spool.append(new Uint8Array(1), -1), /group/);
  const later = new Uint8Array([9, 8, 7]);
  assert.deepEqual(new Uint8Array((readers[0] as (h: number) => Uint8Array)(spool.append(later, 0))), later);
  // The last group read, read from its buffer: every handle of it, and one appended to it since.
  const last = spool.readGroup(3);
  for (const { bytes, group, handle } of written)
    if (group === 3) assert.deepEqual(new Uint8Array(last(handle)), bytes);
  assert.deepEqual(new Uint8Array(last(spool.append(later, 3))), later);

  // Objects spooled by digest group, read back in digest order and in any other, as `get` reads them.
  const objects = new SpoolingObjects(spool);
  const byDigest = new Map<string, Uint8Array>();
  for (let i = 0; i < 500; i++) {
    const bytes = new Uint8Array(50 + ((i * 97) % 3000)).fill(i & 255);
    byDigest.set(sha256(bytes), bytes);
    objects.set(sha256(bytes), bytes);
  }
  objects.set('not-a-digest', new Uint8Array([1, 2, 3]));
  byDigest.set('not-a-digest', new Uint8Array([1, 2, 3]));
  const spooled = objects.sorted();
  const inOrder = spooled.inDigestOrder();
  for (const d of spooled.keys()) assert.deepEqual(new Uint8Array(inOrder(d) as Uint8Array), byDigest.get(d), d);
  const shuffled = spooled.inDigestOrder();
  for (const d of [...byDigest.keys()].reverse())
    assert.deepEqual(new Uint8Array(shuffled(d) as Uint8Array), byDigest.get(d));
  assert.equal(inOrder('sha256:00'), undefined);
  spool.close();
  assert.deepEqual(readdirSync(dir), []);
});

test('a build through a spool gives the in-memory build: digest, documents, counts, every object byte-equal under its digest', async () => {
  const files = [{ file: BOOKINFO_STATE, text: readFileSync(BOOKINFO_STATE, 'utf8') }];
  const inMemory = compileTexts(files, { hasher: nodeSha256Hex });
  const spool = FileSpool.open(join(tmp, 'bookinfo'));
  try {
    const handed = new Handoff<readonly InputText[]>(files);
    const spooled = compileTextsToPublish(handed, { hasher: nodeSha256Hex, spool });
    assert.throws(() => handed.take(), /already taken/, 'the pipeline took the texts');
    assert.ok(isSpooled(spooled.snapshot.objects));
    assert.ok(!isSpooled(inMemory.snapshot.objects));
    assert.equal(spooled.snapshot.digest, inMemory.snapshot.digest);
    assert.equal(spooled.stored.digest, inMemory.stored.digest);
    assert.deepEqual(spooled.snapshot.counts, inMemory.snapshot.counts);
    assert.deepEqual(spooled.diagnostics, inMemory.diagnostics);
    assert.deepEqual(
      spooled.snapshot.documents.map((d) => d.digest),
      inMemory.snapshot.documents.map((d) => d.digest),
    );
    // The stored inputs' objects, their bytes spooled too, read back byte-equal.
    assert.ok(spooled.stored.objects instanceof PackedObjects && inMemory.stored.objects instanceof PackedObjects);
    assert.deepEqual([...spooled.stored.objects.keys()], [...inMemory.stored.objects.keys()]);
    for (const [digest, bytes] of spooled.stored.objects) sameBytes(bytes, inMemory.stored.objects.get(digest), digest);
    assert.deepEqual(spooled.stored.documents, inMemory.stored.documents);
    assert.deepEqual([...spooled.snapshot.objects.keys()], [...inMemory.snapshot.objects.keys()]);
    for (const [digest, bytes] of spooled.snapshot.objects) {
      assert.equal(sha256(bytes), digest);
      sameBytes(bytes, inMemory.snapshot.objects.get(digest), digest);
    }
  } finally {
    spool.close();
  }
});

test('a full build published from a spool (its checkpoint pack streamed) stores what the in-memory build stores', async () => {
  // Big enough for a checkpoint pack above 1 MiB: written by putObjectParts from streamed parts.
  const docs = generateMesh({ services: 150 }).docs;
  const inMemory = compileDocuments(docs, { hasher: nodeSha256Hex });
  const spool = FileSpool.open(join(tmp, 'publish', 'spool'));
  try {
    const spooled = compileDocuments(docs, { hasher: nodeSha256Hex, spool });
    assert.equal(spooled.snapshot.digest, inMemory.snapshot.digest);
    const info = { createdAt: '2026-11-25T05:00:00.000Z', hasher: nodeSha256Hex, packOnly: true };
    const a = new LocalStore(join(tmp, 'publish', 'a'));
    const b = new LocalStore(join(tmp, 'publish', 'b'));
    const fromMemory = await publishSnapshot(a, 'c', inMemory.snapshot, info);
    const fromSpool = await publishSnapshot(b, 'c', spooled.snapshot, info);
    assert.equal(fromMemory.status, 'published');
    assert.equal(fromSpool.status, 'published');
    if (fromMemory.status !== 'published' || fromSpool.status !== 'published') return;
    assert.deepEqual(fromSpool.record, fromMemory.record);
    assert.deepEqual(
      { objects: fromSpool.objectsWritten, documents: fromSpool.documentsWritten, bytes: fromSpool.bytesWritten },
      { objects: fromMemory.objectsWritten, documents: fromMemory.documentsWritten, bytes: fromMemory.bytesWritten },
    );
    const checkpoint = fromSpool.record.packs?.checkpoint;
    assert.ok(checkpoint && checkpoint.bytes > 1 << 20, 'a streamed checkpoint pack');
    const pack = decodePack((await b.getObject(checkpoint.digest)) as Uint8Array, nodeSha256Hex);
    for (const [digest, bytes] of inMemory.snapshot.objects) sameBytes(pack.get(digest), bytes, digest);
    assert.deepEqual(await b.uncached().getSnapshot(spooled.snapshot.digest), inMemory.snapshot.content);
    // Publishing it again changes nothing and leaves nothing behind.
    assert.equal((await publishSnapshot(b, 'c', spooled.snapshot, info)).status, 'unchanged');
    assert.deepEqual(existsSync(join(b.root, 'tmp')) ? readdirSync(join(b.root, 'tmp')) : [], []);
  } finally {
    spool.close();
  }
  assert.deepEqual(readdirSync(join(tmp, 'publish', 'spool')), []);
});

test('meshsnap compile leaves no spool file beside the store: published, unchanged, refused, dry run', () => {
  const store = join(tmp, 'cli-store');
  const empty = join(tmp, 'empty.yaml');
  writeFileSync(empty, '');
  const run = (...args: string[]): string => {
    const r = spawnSync(process.execPath, [BIN, 'compile', ...args, '--store', store, '--quiet'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    const line = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { status?: string };
    return String(line.status);
  };
  assert.equal(run(BOOKINFO_STATE), 'published');
  assert.equal(run(BOOKINFO_STATE), 'unchanged');
  assert.equal(run(empty), 'refused');
  assert.equal(run(BOOKINFO_STATE, '--dry-run'), 'dry-run');
  const left = existsSync(join(store, 'tmp')) ? readdirSync(join(store, 'tmp')) : [];
  assert.deepEqual(left, []);
});
