/**
 * Reading a snapshot on top of one read before (a relay switch): a changed table has a new root,
 * but only its changed nodes are read; the nodes it shares with the table read last time are taken
 * as they are. What the read gives is what a cold read gives.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  readSnapshotTrees,
  snapshotDocuments,
  SNAPSHOT_SCHEMA,
  type ExpandedTrees,
  type SnapshotContent,
} from '../../src/snapshot/content.js';

const DIGEST = (i: number): string => `sha256:${i.toString(16).padStart(64, '0')}`;

/** One group whose cluster table has `n` entries (enough to be split into nodes). */
function content(n: number): SnapshotContent {
  const clusters: Record<string, string> = {};
  for (let i = 0; i < n; i++) clusters[`outbound|80||svc-${i}.ns.svc.cluster.local`] = DIGEST(i + 1);
  return {
    schema: SNAPSHOT_SCHEMA,
    compiler: { name: 'test', version: '0' },
    inputsDigest: '',
    groups: { outbound: { clusters, endpoints: {}, listeners: {}, routes: {} } },
    classes: [{ id: 'sidecar/ns/_', generator: 'sidecar', namespace: 'ns', services: [], groups: ['outbound'] }],
    selectors: [],
  };
}

/** Reads `c` (documents of every content published so far) and counts the document reads. */
async function read(
  store: Map<string, Uint8Array>,
  c: SnapshotContent,
  known?: ExpandedTrees,
): Promise<{ content: SnapshotContent; trees: ExpandedTrees; reads: number }> {
  const { digest, documents } = snapshotDocuments(c);
  for (const d of documents) store.set(d.digest, d.bytes);
  let reads = 0;
  const tree = await readSnapshotTrees(
    (d) => {
      reads++;
      return Promise.resolve(store.get(d) ?? null);
    },
    digest,
    known ? { known } : {},
  );
  assert.ok(tree);
  return { ...tree, reads };
}

test('a changed table reads only its changed nodes when the table was read before', { timeout: 30_000 }, async () => {
  const store = new Map<string, Uint8Array>();
  const cold = await read(store, content(200));
  assert.equal(cold.trees.nodes, undefined, 'a cold read keeps no node documents');

  // The first switch walks the changed table whole (no node of it is known yet) and keeps its nodes.
  const first = await read(store, content(201), cold.trees);
  assert.ok(first.trees.nodes && first.trees.nodes.size > 2, 'the walked table is split into nodes');
  assert.deepEqual(first.content, (await read(store, content(201))).content);

  // The next change of that table reads its new nodes only, and gives what a cold read gives.
  const second = await read(store, content(202), first.trees);
  assert.deepEqual(second.content, (await read(store, content(202))).content);
  assert.ok(
    second.reads < first.reads / 2,
    `the second switch read ${second.reads} documents, the first ${first.reads}`,
  );
});
