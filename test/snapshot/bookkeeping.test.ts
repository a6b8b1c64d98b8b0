/**
 * The builder's bookkeeping written for speed gives exactly what the plain code gave: leaf bytes
 * written into a reused buffer are the UTF-8 of the canonical leaf text (escaped and non-ASCII
 * names included), and the bucketed digest sort is the plain string sort.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import type { CompileOutput } from '../../src/compile/types.js';
import { SnapshotBuilder } from '../../src/snapshot/build.js';
import { InconsistentSnapshotError } from '../../src/snapshot/consistency.js';
import type { Cluster } from '../../src/xds/proto.js';
import { A, INFO, output, routeConfig, sidecarClass, staticCluster } from './sample-output.js';
import { DigestSorter } from '../../src/snapshot/sorted-digests.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { DocumentSink, leafBytes, leafText } from '../../src/snapshot/tree.js';

const digest = (i: number): string => `sha256:${createHash('sha256').update(String(i)).digest('hex')}`;

test('leaf bytes are the UTF-8 of the canonical leaf text, for plain, escaped, non-ASCII and long names', () => {
  const names = [
    'outbound|8080|v1|reviews.default.svc.cluster.local',
    'quote"d',
    'back\\slash',
    'tab\there',
    'ctl\u0001',
    'del\u007f',
    'ünïcødé',
    'emoji 🛰',
    'lone \ud800 surrogate',
    '',
    'x'.repeat(70_000), // larger than the buffer's first size
  ];
  const utf8 = new TextEncoder();
  const entries = new Map<string, string>();
  for (const [i, name] of names.entries()) {
    entries.set(name, digest(i));
    const one = new Map([[name, digest(i)]]);
    assert.deepEqual(leafBytes(one), utf8.encode(leafText(one)), JSON.stringify(name.slice(0, 20)));
  }
  assert.deepEqual(leafBytes(entries), utf8.encode(leafText(entries)));
  entries.set('value "escaped"', 'not a ✓ digest');
  assert.deepEqual(leafBytes(entries), utf8.encode(leafText(entries)));
  assert.deepEqual(leafBytes(new Map()), utf8.encode(leafText(new Map())));
});

test('the bucketed digest sort is the plain string sort, values alongside; any other key falls back to it', () => {
  const keys = Array.from({ length: 20_000 }, (_, i) => digest(i));
  const sorter = new DigestSorter<number>();
  keys.forEach((k, i) => sorter.add(k, i));
  const sorted = sorter.toMap();
  assert.deepEqual([...sorted.keys()], [...keys].sort());
  for (const [k, v] of sorted) assert.equal(keys[v], k);

  const odd = ['sha256:ABC', 'zzz', 'sha256:', digest(1), digest(2), 'sha256:0'];
  const mixed = new DigestSorter<string>();
  for (const k of odd) mixed.add(k, k.toUpperCase());
  const out = mixed.toMap();
  assert.deepEqual([...out.keys()], [...odd].sort());
  for (const [k, v] of out) assert.equal(v, k.toUpperCase());
});

test('a sink sorts its documents by layer, then digest, however many there are', () => {
  for (const n of [10, 5000]) {
    const sink = new DocumentSink(nodeSha256Hex);
    for (let i = 0; i < n; i++) sink.emitBytes(new TextEncoder().encode(`doc ${i}`), i % 7);
    const docs = sink.sorted();
    const plain = [...sink.documents.values()].sort(
      (a, b) => a.layer - b.layer || (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0),
    );
    assert.equal(docs.length, n);
    assert.deepEqual(
      docs.map((d) => d.digest),
      plain.map((d) => d.digest),
    );
  }
});

test('one builder, build after build: a reference that breaks and a name held twice are reported as before', () => {
  const outbound = (clusters: string[]) => ({ clusters: clusters.map(staticCluster) });
  const cls = (ns: string) => ({
    ...sidecarClass(`sidecar/${ns}/_`, [], 'inbound'),
    groups: ['outbound', `routes/${ns}`],
  });
  const shared = routeConfig('9080', [A]);
  const mesh = (clusters: string[], ownA: Cluster[] = []): CompileOutput =>
    output(
      {
        outbound: outbound(clusters),
        'routes/ns-1': { routes: [shared], clusters: ownA },
        'routes/ns-2': { routes: [shared] },
      },
      [cls('ns-1'), cls('ns-2')],
    );
  const problems = (f: () => unknown): string[] => {
    try {
      f();
      return [];
    } catch (e) {
      assert.ok(e instanceof InconsistentSnapshotError);
      return e.problems.map((p) => `${p.classId} ${p.code} ${p.name} -> ${p.ref ?? ''}`);
    }
  };
  const builder = new SnapshotBuilder(INFO);
  assert.deepEqual(
    problems(() => builder.build(mesh([A]))),
    [],
  );
  assert.deepEqual(
    problems(() => builder.build(mesh([]))),
    [`sidecar/ns-1/_ missing-cluster 9080 -> ${A}`, `sidecar/ns-2/_ missing-cluster 9080 -> ${A}`],
  );
  // A cluster held by two groups of one class: a duplicate in that class only.
  assert.deepEqual(
    problems(() => builder.build(mesh([A], [staticCluster(A)]))),
    [`sidecar/ns-1/_ duplicate-name ${A} -> ${A}`],
  );
  assert.equal(builder.build(mesh([A])).digest, new SnapshotBuilder(INFO).build(mesh([A])).digest, 'and back');
});
