/** boundDiff: entries listed in order up to the limit or the byte budget; the rest counted. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boundDiff } from '../../src/api/diff-bound.js';
import type { VersionDiff } from '../../src/history/diff/index.js';

const diff: VersionDiff = {
  from: { version: '1', digest: 'a' },
  to: { version: '2', digest: 'b' },
  classes: [
    { classA: 'c1', classB: 'c1', types: { clusters: { added: ['x', 'y'], removed: ['z'], changed: [] } } },
    {
      classA: 'c2',
      classB: 'c2',
      types: {
        routes: {
          added: [],
          removed: [],
          changed: [{ name: 'r', fields: [{ path: 'p', change: 'changed', from: 'A'.repeat(1000), to: 'B' }] }],
        },
      },
    },
  ],
  inputs: [{ kind: 'Service', namespace: 'ns', name: 's', layer: 'config', change: 'added' }],
};

test('within the bound: the same diff, not truncated', () => {
  const b = boundDiff(diff, { limit: 100, maxBytes: 1e6 });
  assert.deepEqual(b, { diff, truncated: false, omitted: { resources: 0, inputs: 0 } });
});

test('past the limit: a prefix is listed, the rest counted by kind', () => {
  const b = boundDiff(diff, { limit: 2, maxBytes: 1e6 });
  assert.equal(b.truncated, true);
  assert.deepEqual(b.diff.classes, [
    { classA: 'c1', classB: 'c1', types: { clusters: { added: ['x', 'y'], removed: [], changed: [] } } },
  ]);
  assert.deepEqual(b.diff.inputs, []);
  assert.deepEqual(b.omitted, { resources: 2, inputs: 1 });
});

test('past the byte budget: a large changed resource stops the listing', () => {
  const b = boundDiff(diff, { limit: 100, maxBytes: 500 });
  assert.equal(b.truncated, true);
  assert.equal(b.diff.classes.length, 1);
  assert.deepEqual(b.omitted, { resources: 1, inputs: 1 });
});
