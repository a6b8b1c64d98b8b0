/**
 * The pack index (src/snapshot/store/pack-index.ts): entries held only in packs, found through the
 * version records, newest packs first, each entry digest-checked.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { digestOf } from '../../src/snapshot/digest.js';
import type { VersionRecord } from '../../src/snapshot/manifest.js';
import { encodePack } from '../../src/snapshot/store/packs.js';
import { PackIndex } from '../../src/snapshot/store/pack-index.js';
import { CorruptObjectError } from '../../src/snapshot/store/store.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';

const utf8 = new TextEncoder();
const entry = (text: string): [string, Uint8Array] => [digestOf(utf8.encode(text), nodeSha256Hex), utf8.encode(text)];

/** A store of packs and records in memory, counting what the index reads. */
function fakeStore() {
  const packs = new Map<string, Uint8Array>();
  const records = new Map<string, Map<number, Pick<VersionRecord, 'packs'>>>();
  const reads: string[] = [];
  let listings = 0;
  const addPack = (entries: [string, Uint8Array][]) => {
    const bytes = encodePack(new Map(entries));
    const digest = digestOf(bytes, nodeSha256Hex);
    packs.set(digest, bytes);
    return { digest, bytes: bytes.byteLength };
  };
  const index = new PackIndex(
    {
      readPack: async (d) => {
        reads.push(d);
        return packs.get(d) ?? null;
      },
      listChannels: async () => {
        listings++;
        return [...records.keys()];
      },
      listVersions: async (c) => [...(records.get(c)?.keys() ?? [])].sort((a, b) => b - a),
      getVersion: async (c, n) => (records.get(c)?.get(n) as VersionRecord | undefined) ?? null,
    },
    nodeSha256Hex,
  );
  const addRecord = (channel: string, version: number, record: Pick<VersionRecord, 'packs'>) => {
    if (!records.has(channel)) records.set(channel, new Map());
    records.get(channel)?.set(version, record);
  };
  return { index, packs, reads, addPack, addRecord, listings: () => listings };
}

test('an entry of a noted record is read from its newest pack first, digest-checked', async () => {
  const s = fakeStore();
  const [a, aBytes] = entry('in the checkpoint');
  const [b, bBytes] = entry('in the delta');
  const checkpoint = s.addPack([[a, aBytes]]);
  const delta = s.addPack([[b, bBytes]]);
  s.index.note({ packs: { checkpoint, deltas: [delta] } }, { channel: 'main', version: 2 });

  assert.deepEqual(await s.index.get(b), bBytes);
  assert.deepEqual(s.reads, [delta.digest], 'the checkpoint is not read for an entry of the delta');
  assert.deepEqual(await s.index.get(a), aBytes);
  assert.deepEqual(s.reads, [delta.digest, checkpoint.digest]);
  assert.deepEqual(await s.index.get(b), bBytes);
  assert.equal(s.reads.length, 2, 'a pack is read once');
});

test('a miss lists the records once more: a record published since is found, an absent entry is null', async () => {
  const s = fakeStore();
  const [a, aBytes] = entry('published by another process');
  assert.equal(await s.index.get(a), null);
  assert.equal(s.listings(), 1);
  s.addRecord('main', 1, { packs: { checkpoint: s.addPack([[a, aBytes]]), deltas: [] } });
  assert.deepEqual(await s.index.get(a), aBytes);
  assert.equal(s.listings(), 2);
  assert.equal(await s.index.get(entry('nowhere')[0]), null);
  assert.equal(s.listings(), 3);
});

test('a pack found missing (gc) is forgotten: its entries come from another pack, or nowhere', async () => {
  const s = fakeStore();
  const [a, aBytes] = entry('in two packs');
  const [b, bBytes] = entry('only in the old pack');
  const old = s.addPack([
    [a, aBytes],
    [b, bBytes],
  ]);
  const next = s.addPack([[a, aBytes]]);
  s.index.note({ packs: { checkpoint: old, deltas: [] } });
  s.index.note({ packs: { checkpoint: next, deltas: [] } });
  s.packs.delete(old.digest);
  assert.equal(await s.index.get(b), null);
  assert.deepEqual(await s.index.get(a), aBytes);
});

test('a pack entry whose bytes do not hash to its digest is refused (CorruptObjectError)', async () => {
  const s = fakeStore();
  const [claimed] = entry('claimed');
  s.index.note({ packs: { checkpoint: s.addPack([[claimed, utf8.encode('other bytes')]]), deltas: [] } });
  await assert.rejects(s.index.get(claimed), CorruptObjectError);
});

test('getInMemory: only packs already read answer, with no read of its own; entries are digest-checked', async () => {
  const s = fakeStore();
  const [a, aBytes] = entry('in the pack');
  const [b] = entry('nowhere');
  const pack = s.addPack([[a, aBytes]]);
  s.index.note({ packs: { checkpoint: pack, deltas: [] } }, { channel: 'main', version: 1 });
  assert.equal(s.index.getInMemory(a), null, 'a noted pack not read yet does not answer');
  assert.deepEqual(s.reads, []);
  assert.deepEqual(await s.index.get(a), aBytes);
  assert.deepEqual(s.index.getInMemory(a), aBytes);
  assert.equal(s.index.getInMemory(b), null);
  assert.deepEqual(s.reads, [pack.digest], 'no read of its own');
  assert.equal(s.listings(), 0);

  const tampered = fakeStore();
  const [c, cBytes] = entry('tampered with');
  const bad = encodePack(new Map([[c, utf8.encode('something else')]]));
  const badDigest = digestOf(bad, nodeSha256Hex);
  tampered.packs.set(badDigest, bad);
  tampered.index.note({ packs: { checkpoint: { digest: badDigest, bytes: bad.byteLength }, deltas: [] } });
  await assert.rejects(tampered.index.get(c), CorruptObjectError);
  assert.throws(() => tampered.index.getInMemory(c), CorruptObjectError);
  assert.notDeepEqual(cBytes, utf8.encode('something else'));
});
