/**
 * ByteSlab (src/xds/wire/slab.ts): copies carved out of shared buffers are the same bytes as the
 * originals, stay intact while later copies are made (across slab boundaries), are Node Buffers as
 * the wire writer's own copies are, and the fast writer gives the same bytes with or without one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeWithProtobufjs, type Cluster } from '../../src/xds/proto.js';
import { XDS_TYPE_NAME } from '../../src/xds/type-urls.js';
import { encodeFast } from '../../src/xds/wire/encode.js';
import { ByteSlab, SLAB_BYTES } from '../../src/xds/wire/slab.js';

const bytesOf = (n: number, seed: number): Uint8Array =>
  Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);

test('copies keep their bytes across slab boundaries; a large one gets a buffer of its own', () => {
  const slab = new ByteSlab();
  const sizes = [0, 1, 300, 5400, SLAB_BYTES / 8, SLAB_BYTES / 3, 70_000, 17];
  const originals: Uint8Array[] = [];
  const copies: Uint8Array[] = [];
  for (let round = 0; round < 12; round++)
    for (const [i, n] of sizes.entries()) {
      const source = bytesOf(n, round * 16 + i);
      originals.push(source);
      copies.push(slab.copy(source));
      source.fill(0); // the copy is not a view of its source
    }
  for (const [i, copy] of copies.entries()) {
    const n = sizes[i % sizes.length] as number;
    assert.deepEqual([...copy], [...bytesOf(n, Math.floor(i / sizes.length) * 16 + (i % sizes.length))]);
    assert.ok(Buffer.isBuffer(copy), 'a Node Buffer, as the wire writer hands out');
  }
  assert.equal(originals.length, copies.length);
  const big = slab.copy(bytesOf(SLAB_BYTES / 2, 1));
  assert.equal(big.byteOffset, 0);
  assert.equal(big.buffer.byteLength, SLAB_BYTES / 2, 'a large copy does not share a slab');
});

test('a range of the source, and UTF-8 text, are copied exactly', () => {
  const slab = new ByteSlab();
  const source = bytesOf(100, 7);
  assert.deepEqual([...slab.copy(source, 10, 30)], [...source.subarray(10, 30)]);
  for (const text of ['', '{"entries":{}}', 'é€😀 ascii', 'x'.repeat(40_000)])
    assert.deepEqual([...slab.utf8(text)], [...new TextEncoder().encode(text)]);
});

test('the fast writer gives the same bytes with a slab as without, and as protobufjs', () => {
  const slab = new ByteSlab();
  const type = XDS_TYPE_NAME.clusters;
  for (let i = 0; i < 2000; i++) {
    const cluster: Cluster = { name: `outbound|${8000 + i}||svc-${i}.ns.svc.cluster.local`, type: 3, lb_policy: i % 3 };
    const inSlab = encodeFast(type, cluster, slab) as Uint8Array;
    assert.deepEqual(inSlab, encodeFast(type, cluster));
    assert.deepEqual([...inSlab], [...encodeWithProtobufjs(type, cluster)]);
  }
});
