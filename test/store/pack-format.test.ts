/** src/snapshot/store/pack-format.ts: the pack's bytes, whole or streamed, are the format's JSON index and the entries in digest order. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  decodePack,
  encodePack,
  joinParts,
  PACK_MAGIC,
  streamPackPartsAt,
} from '../../src/snapshot/store/pack-format.js';
import { digestOrder } from '../../src/snapshot/sorted-digests.js';

/** The format as written before the index was written byte by byte: JSON.stringify of the pairs. */
function reference(entries: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const digests = [...entries.keys()];
  const order = [...digestOrder(digests)];
  const index = order.map((i) => [digests[i], (entries.get(digests[i] as string) as Uint8Array).byteLength]);
  const head = new TextEncoder().encode(`${PACK_MAGIC}${JSON.stringify({ entries: index })}\n`);
  return joinParts([head, ...order.map((i) => entries.get(digests[i] as string) as Uint8Array)]);
}

const bytes = (n: number, fill: number): Uint8Array => new Uint8Array(n).fill(fill);

const cases: [string, Map<string, Uint8Array>][] = [
  ['empty', new Map()],
  ['one', new Map([[`sha256:${'a'.repeat(64)}`, bytes(3, 1)]])],
  [
    'digests, sizes 0 to 1 MiB',
    new Map(
      Array.from({ length: 300 }, (_, i) => [
        `sha256:${(i * 2654435761).toString(16).padStart(64, '0')}`,
        bytes(i === 7 ? 1 << 20 : i % 13, i & 255),
      ]),
    ),
  ],
  [
    // An index of ~0.9 MB: written in several chunks.
    '12k digests',
    new Map(
      Array.from({ length: 12_000 }, (_, i) => [
        `sha256:${(i * 2654435761 + 12345).toString(16).padStart(64, '0')}`,
        bytes(i % 29, i & 255),
      ]),
    ),
  ],
  [
    'names JSON escapes or writes as UTF-8',
    new Map([
      ['a"quote', bytes(2, 2)],
      ['back\\slash', bytes(1, 3)],
      ['tab\there', bytes(4, 4)],
      ['ümlaut ✓', bytes(5, 5)],
      [`sha256:${'b'.repeat(64)}`, bytes(6, 6)],
    ]),
  ],
];

test('encodePack and streamPackPartsAt write the JSON.stringify index, byte for byte, and decode back', () => {
  for (const [name, entries] of cases) {
    const want = reference(entries);
    assert.deepEqual(encodePack(entries), want, name);
    const digests = [...entries.keys()];
    const sizes = digests.map((d) => (entries.get(d) as Uint8Array).byteLength);
    const streamed = streamPackPartsAt(digests, sizes, (i) => entries.get(digests[i] as string) as Uint8Array);
    // Each part copied as it comes (StreamedParts: a part may be a view its reader writes again).
    const joined = joinParts(streamed);
    assert.equal(streamed.byteLength, want.byteLength, name);
    assert.deepEqual(joined, want, name);
    assert.deepEqual(
      decodePack(joined, undefined, false),
      new Map([...entries].sort(([a], [b]) => (a < b ? -1 : 1))),
      name,
    );
  }
});

test('a streamed index is written a chunk at a time: a 12k-entry pack comes in several parts before its entries', () => {
  const entries = cases.find(([name]) => name === '12k digests')?.[1] as Map<string, Uint8Array>;
  const digests = [...entries.keys()];
  const sizes = digests.map((d) => (entries.get(d) as Uint8Array).byteLength);
  const parts = [...streamPackPartsAt(digests, sizes, (i) => entries.get(digests[i] as string) as Uint8Array)];
  const headParts = parts.length - entries.size;
  assert.ok(headParts > 2, `${headParts} parts of index`);
  // Every index part but the last is about as big as the others (~256 KiB): none holds it all.
  for (const p of parts.slice(0, headParts - 1)) assert.ok(p.byteLength >= 1 << 18 && p.byteLength < (1 << 18) + 1024);
});
