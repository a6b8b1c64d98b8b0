/**
 * A class's map of a type merged from its tables' sorted forms is the map the relay built before
 * (every table's entries sorted by name, a name in several tables taken from the last) and has the
 * same version (typeVersionOf over it), for tables that interleave, share names or are empty.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeTables, sortTable } from '../../src/relay/snapshot/sorted-table.js';
import { typeVersionOf } from '../../src/relay/snapshot/type-version.js';
import type { ServedResource } from '../../src/relay/types.js';

const resource = (name: string, digest: string): ServedResource => ({ name, digest, bytes: new Uint8Array() });

/** The reference: all pairs in table order, stably sorted by name, into a Map (the last of a name wins). */
function reference(tables: readonly Record<string, string>[]): Map<string, ServedResource> {
  const pairs: [string, ServedResource][] = [];
  for (const t of tables) for (const [name, digest] of Object.entries(t)) pairs.push([name, resource(name, digest)]);
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return new Map(pairs);
}

function random(seed: number): () => number {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

test('merged tables: the same entries, order and version as sorting every entry, on random tables', () => {
  const rnd = random(7);
  const names = [
    'BlackHoleCluster',
    'InboundPassthrough',
    'inbound|8080||',
    'outbound|80||a',
    'outbound|80||b',
    'ñ-unicode',
    'z',
    'Z',
    'a',
  ];
  for (let round = 0; round < 500; round++) {
    const tables = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => {
      const t: Record<string, string> = {};
      for (const n of names) if (rnd() < 0.4) t[n] = `sha256:${Math.floor(rnd() * 5)}`;
      return t;
    });
    const expected = reference(tables);
    const merged = mergeTables(tables.map((t) => sortTable(t, resource)));
    const entries = (m: ReadonlyMap<string, ServedResource>): string[][] =>
      [...m].map(([k, r]) => [k, r.name, r.digest]);
    assert.deepEqual(entries(merged.resources), entries(expected), JSON.stringify(tables));
    assert.equal(merged.version, typeVersionOf(expected), JSON.stringify(tables));
  }
  assert.equal(mergeTables([]).version, typeVersionOf(new Map()));
});
