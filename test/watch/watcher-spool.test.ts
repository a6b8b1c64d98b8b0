/**
 * The watcher's full rounds spool their objects (src/watch/round/spool.ts): the builder's full
 * build appends each object's bytes to a temp file as it encodes them, and the checkpoint pack is
 * streamed from it. The snapshot and the pack are exactly those of the in-memory build, a store
 * without a streamed put (S3, R2) keeps the in-memory path, and no temp file stays open or in the
 * store after a round, published or failed.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { compile } from '../../src/compile/index.js';
import { buildInputSet } from '../../src/inputs/load.js';
import { compileDocuments } from '../../src/pipeline.js';
import { isSpooled, SnapshotBuilder } from '../../src/snapshot/build.js';
import { FileSpool } from '../../src/snapshot/store/file-spool.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { decodePack } from '../../src/snapshot/store/pack-format.js';
import type { PackParts, SnapshotStore } from '../../src/snapshot/store/store.js';
import { Watcher } from '../../src/watch/watcher.js';
import { COMPILER } from '../../src/version.js';
import { generateMesh } from '../../bench/synthetic.js';
import { baseMesh, handFedWatcher, pod, slice } from './watch-harness.js';

/** A folder store that records how its big packs were given: streamed (from a spool) or as an array. */
class RecordingStore extends LocalStore {
  readonly puts: ('streamed' | 'array')[] = [];
  failParts = false;

  override async putObjectParts(parts: PackParts): Promise<{ digest: string; status: 'created' | 'exists' }> {
    this.puts.push(Array.isArray(parts) ? 'array' : 'streamed');
    if (this.failParts) throw new Error('disk full');
    return super.putObjectParts(parts);
  }
}

/** A folder store without a streamed put, as S3 and R2 are. */
function withoutStreamedPut(store: LocalStore): SnapshotStore {
  return new Proxy(store, {
    get: (target, key) => {
      if (key === 'putObjectParts') return undefined;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const watcherOn = (store: SnapshotStore): Watcher => handFedWatcher(store, () => new Date('2026-11-25T00:00:00Z'));

/** A big enough mesh that the checkpoint pack is written with putObjectParts (over 1 MB). */
const meshObjects = (): Record<string, unknown>[] => {
  const objects: Record<string, unknown>[] = [...baseMesh(), pod('reviews-v1-2', 'reviews', 'v1', '10.244.0.13')];
  for (const doc of generateMesh({ services: 300 }).docs) objects.push(doc.object as Record<string, unknown>);
  return objects;
};

const feed = (w: Watcher, objects: readonly Record<string, unknown>[]): void => {
  for (const o of objects) w.receive(o, String(o['kind']));
};

/** The decoded checkpoint pack of the channel's head. */
async function headCheckpoint(store: LocalStore): Promise<Map<string, Uint8Array>> {
  const head = await store.readChannel('main');
  assert.ok(head);
  const record = await store.getVersion('main', head.version);
  assert.ok(record?.packs, 'the version names its packs');
  const bytes = await store.getObject(record.packs.checkpoint.digest);
  assert.ok(bytes);
  return decodePack(bytes, nodeSha256Hex);
}

/** Files this process holds open that are spool files (Linux: /proc/self/fd); undefined elsewhere. */
function openSpoolFiles(): string[] | undefined {
  if (!existsSync('/proc/self/fd')) return undefined;
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (/\/spool-\d+-/.test(target)) out.push(target);
    } catch {
      // closed while listed
    }
  }
  return out;
}

async function filesIn(dir: string): Promise<string[]> {
  return existsSync(dir) ? (await readdir(dir, { recursive: true })).map(String) : [];
}

test("a watcher's first round streams its checkpoint from a spool: the same snapshot and pack as in memory, no temp file left", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'meshsnap-wspool-'));
  try {
    const objects = meshObjects();
    const spooled = new RecordingStore(join(dir, 'spooled'));
    const inMemory = new LocalStore(join(dir, 'memory'));
    const a = watcherOn(spooled);
    const b = watcherOn(withoutStreamedPut(inMemory));
    feed(a, objects);
    feed(b, objects);
    const ra = await a.compileNow();
    const rb = await b.compileNow();
    assert.equal(ra.publish, 'published');
    assert.equal(rb.publish, 'published');
    assert.equal(ra.digest, rb.digest);
    assert.deepEqual(spooled.puts, ['streamed'], 'the checkpoint is streamed from the spool');

    // Every entry, the stored inputs included, byte for byte.
    const packA = await headCheckpoint(spooled);
    const packB = await headCheckpoint(inMemory);
    assert.deepEqual([...packA.keys()], [...packB.keys()]);
    for (const [digest, bytes] of packA)
      assert.equal(Buffer.compare(bytes, packB.get(digest) as Uint8Array), 0, `entry ${digest}`);
    assert.ok((await spooled.getVersion('main', 1))?.inputs, 'the record names its stored inputs');

    assert.deepEqual(openSpoolFiles() ?? [], [], 'no spool file stays open');
    assert.deepEqual(await filesIn(join(spooled.root, 'tmp')), [], "nothing stays in the store's tmp/");

    // An endpoint change after it spools nothing and is a delta of the streamed checkpoint.
    a.receive(
      slice('reviews', [
        { ip: '10.244.0.11', pod: 'reviews-v1-1' },
        { ip: '10.244.0.13', pod: 'reviews-v1-2' },
      ]),
      'EndpointSlice',
    );
    const next = await a.compileNow();
    assert.equal(next.publish, 'published');
    assert.equal(next.mode, 'incremental');
    assert.deepEqual(spooled.puts, ['streamed']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a failed streamed publish closes the spool, and the next round publishes a complete snapshot', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'meshsnap-wspool-'));
  try {
    const store = new RecordingStore(dir);
    const w = watcherOn(store);
    const objects = meshObjects();
    feed(w, objects);
    store.failParts = true;
    await assert.rejects(w.compileNow(), /disk full/);
    assert.deepEqual(openSpoolFiles() ?? [], [], 'no spool file stays open after a failed publish');
    assert.deepEqual(await filesIn(join(dir, 'tmp')), []);

    store.failParts = false;
    const round = await w.compileNow();
    assert.equal(round.publish, 'published');
    assert.ok(
      store.puts.length >= 2 && store.puts.every((p) => p === 'streamed'),
      'the failed round and the next one stream their checkpoints',
    );
    const full = compileDocuments(
      objects.map((object, index) => ({ file: 'mesh', index, object })),
      { hasher: nodeSha256Hex },
    );
    assert.equal(round.digest, full.snapshot.digest, 'the spooled snapshot is the full compile');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("SnapshotBuilder.build through a spool gives the in-memory build's digest, objects and documents, and deltas go on from it", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'meshsnap-wspool-'));
  const spool = FileSpool.open(dir);
  try {
    const docs = generateMesh({ services: 40 }).docs;
    const { output } = compile(buildInputSet(docs));
    const info = { inputsDigest: 'sha256:inputs', compiler: COMPILER };
    const plain = new SnapshotBuilder(info, { hasher: nodeSha256Hex, keepObjects: false }).build(output);
    const builder = new SnapshotBuilder(info, { hasher: nodeSha256Hex, keepObjects: false });
    const built = builder.build(output, undefined, spool);
    assert.ok(isSpooled(built.objects));
    assert.ok(!isSpooled(plain.objects));
    assert.equal(built.digest, plain.digest);
    assert.deepEqual([...built.objects.keys()], [...plain.objects.keys()], 'the same objects, sorted by digest');
    for (const [digest, bytes] of plain.objects)
      assert.equal(Buffer.compare(bytes, built.objects.get(digest) as Uint8Array), 0, `object ${digest}`);
    assert.deepEqual(
      built.documents.map((d) => d.digest),
      plain.documents.map((d) => d.digest),
    );
    assert.deepEqual(built.counts, plain.counts);

    // A later full compile against it is a delta (in memory), with the digest a fresh build gives.
    const again = builder.rebuild(output);
    assert.equal(again.digest, plain.digest);
    assert.equal(again.objects.size, 0);
    assert.ok(!isSpooled(again.objects));
  } finally {
    spool.close();
    await rm(dir, { recursive: true, force: true });
  }
});
