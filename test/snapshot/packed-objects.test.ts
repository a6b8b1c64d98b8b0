/**
 * A full build's stored objects packed in one buffer (src/snapshot/stored-inputs/packed-objects.ts)
 * read exactly as the Map of the same objects in digest order: size, get/has, every iteration; and
 * the slab their bytes are first written into.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateMesh } from '../../bench/synthetic.js';
import { ByteWriter } from '../../src/canonical-json.js';
import { digestOf, utf8Bytes } from '../../src/snapshot/digest.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { ByteSlab } from '../../src/xds/wire/slab.js';
import { inputSetAndStoredInputs } from '../../src/snapshot/stored-inputs/index.js';
import { PackedObjects } from '../../src/snapshot/stored-inputs/packed-objects.js';
import { spoolGroupOf, type ObjectSpool } from '../../src/snapshot/build/object-spool.js';

const h = nodeSha256Hex;

/** The reference: a Map in string order of the digests. */
function sortedMap(digests: readonly string[], values: readonly Uint8Array[]): Map<string, Uint8Array> {
  const order = [...digests.keys()].sort((a, b) => (digests[a]! < digests[b]! ? -1 : 1));
  return new Map(order.map((i) => [digests[i]!, values[i]!]));
}

function assertSameMap(packed: ReadonlyMap<string, Uint8Array>, ref: ReadonlyMap<string, Uint8Array>): void {
  assert.equal(packed.size, ref.size);
  assert.deepEqual([...packed.keys()], [...ref.keys()], 'keys in digest order');
  assert.deepEqual(
    [...packed.values()].map((b) => Buffer.from(b)),
    [...ref.values()].map((b) => Buffer.from(b)),
  );
  assert.deepEqual(
    [...packed].map(([d, b]) => [d, Buffer.from(b)]),
    [...ref.entries()].map(([d, b]) => [d, Buffer.from(b)]),
  );
  const seen: string[] = [];
  packed.forEach((b, d, m) => {
    assert.equal(m, packed);
    assert.deepEqual(Buffer.from(b), Buffer.from(ref.get(d)!));
    seen.push(d);
  });
  assert.deepEqual(seen, [...ref.keys()]);
  for (const [d, b] of ref) {
    assert.ok(packed.has(d), d);
    assert.deepEqual(Buffer.from(packed.get(d)!), Buffer.from(b));
  }
}

test('packed objects read as the Map of the same objects in digest order', () => {
  const values = ['{"a":1}', '', '{"b":"é"}', '[1,2,3]', 'x'.repeat(5000)].map(utf8Bytes);
  const digests = values.map((v) => digestOf(v, h));
  const packed = PackedObjects.of(digests, values);
  assert.ok(packed instanceof PackedObjects);
  assertSameMap(packed, sortedMap(digests, values));
  // Absent, malformed and upper-case digests are not there.
  const absent = digestOf(utf8Bytes('absent'), h);
  const upperHex = `sha256:${digests[0]!.slice('sha256:'.length).toUpperCase()}`;
  for (const d of [absent, 'sha256:xyz', digests[0]!.toUpperCase(), upperHex, '', digests[0]! + '0']) {
    assert.equal(packed.has(d), false, d);
    assert.equal(packed.get(d), undefined, d);
  }
  assert.equal(PackedObjects.of([], []).size, 0);
  assert.equal(PackedObjects.of([], []).get(absent), undefined);
});

test('packed objects: digests that are not sha256 hex are kept in a plain Map, in order', () => {
  const values = ['1', '2', '3'].map(utf8Bytes);
  const digests = ['sha256:b', 'sha256:a', 'other'];
  const kept = PackedObjects.of(digests, values);
  assert.ok(kept instanceof Map);
  assertSameMap(kept, sortedMap(digests, values));
});

/** A spool in memory, as the ObjectSpool contract asks: the n-th append's handle reads its bytes back. */
function memorySpool(): ObjectSpool & { readonly reads: number } {
  const held: Uint8Array[] = [];
  let reads = 0;
  return {
    append: (bytes) => held.push(bytes.slice()) - 1,
    read: (handle) => {
      reads++;
      return (held[handle] as Uint8Array).slice();
    },
    byteLength: (handle) => (held[handle] as Uint8Array).byteLength,
    get reads() {
      return reads;
    },
  };
}

test('packed objects moved to a spool read as before, their bytes from the spool', () => {
  const values = ['{"a":1}', '', '{"b":"é"}', '[1,2,3]', 'x'.repeat(5000)].map(utf8Bytes);
  const digests = values.map((v) => digestOf(v, h));
  const spool = memorySpool();
  spool.append(utf8Bytes('already there'));
  const spooled = PackedObjects.spooledTo(PackedObjects.of(digests, values), spool);
  assert.ok(spooled instanceof PackedObjects);
  const before = spool.reads;
  assertSameMap(spooled, sortedMap(digests, values));
  assert.ok(spool.reads > before, 'bytes read back from the spool');
  assert.equal(PackedObjects.spooledTo(spooled, spool), spooled, 'spooled once');
  assert.equal(spooled.get(digestOf(utf8Bytes('absent'), h)), undefined);
  const plain = PackedObjects.of(['sha256:b', 'other'], ['1', '2'].map(utf8Bytes));
  assert.equal(PackedObjects.spooledTo(plain, spool), plain, 'a plain Map stays as it is');
});

test('packed objects written to a spool as they are packed read as the packed ones moved there', () => {
  const values = ['{"a":1}', '', '{"b":"é"}', '[1,2,3]', 'x'.repeat(5000)].map(utf8Bytes);
  const digests = values.map((v) => digestOf(v, h));
  const spool = memorySpool();
  const direct = PackedObjects.of(digests, values, spool);
  assert.ok(direct instanceof PackedObjects);
  assert.equal(PackedObjects.spooledTo(direct, spool), direct, 'already spooled');
  assertSameMap(direct, sortedMap(digests, values));
  assertSameMap(direct, PackedObjects.spooledTo(PackedObjects.of(digests, values), memorySpool()));
  for (const d of digests) assert.equal(direct.byteLengthOf(d), direct.get(d)?.byteLength);
});

test('a full build of the synthetic mesh stores its objects packed, each under the digest of its bytes', () => {
  const { docs } = generateMesh({ services: 40 });
  const { stored } = inputSetAndStoredInputs(docs, h);
  assert.ok(stored.objects instanceof PackedObjects);
  assert.equal(stored.objects.size, stored.count);
  let previous = '';
  for (const [digest, bytes] of stored.objects) {
    assert.equal(digestOf(bytes, h), digest);
    assert.ok(previous < digest, 'in digest order');
    previous = digest;
  }
});

test('a full build spooled as it is written gives the inputs an in-memory build gives, repeated keys and odd documents included', () => {
  const { docs } = generateMesh({ services: 40 });
  const pod = docs.find((d) => d.object.kind === 'Pod')!;
  const service = docs.find((d) => d.object.kind === 'Service')!;
  const odd = [
    // The same Pod twice, once changed (a repeated key: the smaller digest is kept), a Service repeated as it is.
    { ...pod, index: 9001 },
    { ...pod, index: 9002, object: { ...pod.object, spec: { nodeName: 'elsewhere' } } },
    { ...service, index: 9003 },
    // Invalid (stored redacted), unkeyed and not stored at all.
    { file: 'odd.yaml', index: 0, object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'bad' }, spec: 7 } },
    { file: 'odd.yaml', index: 1, object: { apiVersion: 'v1', kind: 'Service', metadata: {}, spec: {} } },
    { file: 'odd.yaml', index: 2, object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } } },
  ];
  for (const input of [docs, [...docs, ...odd]]) {
    const inMemory = inputSetAndStoredInputs(input, h).stored;
    const spool = memorySpool();
    const spooled = inputSetAndStoredInputs(input, h, spool).stored;
    assert.equal(spooled.digest, inMemory.digest);
    assert.equal(spooled.count, inMemory.count);
    assert.deepEqual(
      spooled.documents.map((d) => [d.digest, d.layer, Buffer.from(d.bytes).toString()]),
      inMemory.documents.map((d) => [d.digest, d.layer, Buffer.from(d.bytes).toString()]),
    );
    assert.ok(spooled.objects instanceof PackedObjects);
    const before = spool.reads;
    assertSameMap(spooled.objects, inMemory.objects);
    assert.ok(spool.reads > before, 'bytes read back from the spool');
    assert.equal(PackedObjects.spooledTo(spooled.objects, spool), spooled.objects, 'already spooled');
  }
});

test('stored inputs are spooled in the group of their digest, as the snapshot objects are (the pack reads a group at a time)', () => {
  const { docs } = generateMesh({ services: 40 });
  const groups: (number | undefined)[] = [];
  const spool = memorySpool();
  const recording: ObjectSpool = {
    append: (bytes, group) => {
      groups.push(group);
      return spool.append(bytes);
    },
    read: (handle) => spool.read(handle),
    byteLength: (handle) => spool.byteLength(handle),
  };
  const { stored } = inputSetAndStoredInputs(docs, h, recording);
  assert.ok(groups.length >= stored.count);
  for (const [digest] of stored.objects) {
    const handle = groups.findIndex((_, k) => digestOf(spool.read(k), h) === digest);
    assert.ok(handle >= 0, `${digest} spooled`);
    assert.equal(groups[handle], spoolGroupOf(digest), `${digest} in its digest's group`);
  }
  assert.ok(new Set(groups).size > 1, 'spread over groups, not all in one');
});

test('byte slab: writes land in shared chunks, one that outgrows its chunk is copied, a failed one leaves nothing', () => {
  const own = new Uint8Array(16);
  const w = new ByteWriter(own);
  const slab = new ByteSlab();
  const text = (s: string) => () => w.ascii(s);
  const a = slab.write(w, text('{"a":1}'));
  const b = slab.write(w, text('[2]'));
  assert.equal(a.buffer, b.buffer, 'one chunk');
  assert.equal(Buffer.from(a).toString(), '{"a":1}');
  assert.equal(Buffer.from(b).toString(), '[2]');
  assert.equal(w.buf, own, 'the writer gets its buffer back');
  assert.throws(() =>
    slab.write(w, () => {
      w.ascii('partial');
      throw new Error('no');
    }),
  );
  assert.equal(w.buf, own);
  const c = slab.write(w, text('"c"'));
  assert.equal(c.byteOffset, b.byteOffset + b.byteLength, 'nothing kept of the failed write');
  const big = 'x'.repeat(3 << 20);
  const d = slab.write(w, text(big));
  assert.equal(Buffer.from(d).toString(), big);
  assert.equal(Buffer.from(a).toString(), '{"a":1}', 'earlier writes intact');
  assert.equal(Buffer.from(c).toString(), '"c"');
  assert.equal(w.buf, own);
});
