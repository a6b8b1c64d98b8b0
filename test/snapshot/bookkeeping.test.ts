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
import { DigestSorter, digestOrder } from '../../src/snapshot/sorted-digests.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import {
  DocumentSink,
  LAYER,
  TableTree,
  leafBytes,
  leafText,
  groupByLeaf,
  writeTable,
  writeUnsortedTable,
} from '../../src/snapshot/tree.js';
import { ObjectRefs, ObjectSet } from '../../src/snapshot/build/refcounts.js';
import type { EncodedResource } from '../../src/snapshot/encoder.js';
import { groupDocumentText } from '../../src/snapshot/build/trees.js';
import { canonicalJson } from '../../src/canonical-json.js';
import type { XdsType } from '../../src/xds/type-urls.js';

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

const sinkDocs = (sink: DocumentSink): string[] =>
  sink.sorted().map((d) => `${d.layer} ${d.digest} ${String(d.bytes)}`);

test('a table written from sorted columns gives the documents and root a TableTree commits, at every depth', () => {
  const names = (n: number): string[] => {
    const out = Array.from({ length: n }, (_, i) =>
      i % 5 === 0 ? `outbound|${8000 + (i % 3)}||svc-${i >> 2}.ns.svc.cluster.local` : `name-${i}-ü"q`,
    );
    return [...new Set(out)].sort();
  };
  for (const n of [0, 1, 2, 32, 33, 200, 512, 513, 3000, 9000]) {
    for (const layerBase of [0, LAYER.index]) {
      const ns = names(n);
      const ds = ns.map((_, i) => digest(i + n));
      const viaTree = new DocumentSink(nodeSha256Hex);
      const root = TableTree.of(
        ns.map((name, i) => [name, ds[i] as string]),
        layerBase,
      ).commit(viaTree);
      const direct = new DocumentSink(nodeSha256Hex);
      const written = writeTable(ns, ds, direct, layerBase);
      assert.equal(written.digest, root.digest, `${n} entries`);
      assert.equal(written.layer, root.layer, `${n} entries`);
      assert.deepEqual(sinkDocs(direct), sinkDocs(viaTree), `${n} entries`);
      // The same entries in any order, written without sorting the table.
      const shuffled = ns.map((_, i) => (i * 7919) % ns.length);
      if (new Set(shuffled).size !== ns.length) shuffled.reverse();
      const unsorted = new DocumentSink(nodeSha256Hex);
      const fromUnsorted = writeUnsortedTable(
        shuffled.map((i) => ns[i] as string),
        shuffled.map((i) => ds[i] as string),
        unsorted,
        layerBase,
      );
      assert.equal(fromUnsorted?.digest, root.digest, `${n} entries, unsorted`);
      assert.equal(fromUnsorted.layer, root.layer, `${n} entries, unsorted`);
      assert.deepEqual(sinkDocs(unsorted), sinkDocs(viaTree), `${n} entries, unsorted`);
    }
  }
});

test('a table written from unsorted columns: a repeated name writes nothing; a leaf of many names sharing a hash prefix', () => {
  for (const n of [2, 40, 3000]) {
    const ns = Array.from({ length: n }, (_, i) => `n-${i}`);
    ns.push(ns[n >> 1] as string);
    const sink = new DocumentSink(nodeSha256Hex);
    assert.equal(
      writeUnsortedTable(
        ns,
        ns.map((_, i) => digest(i)),
        sink,
      ),
      undefined,
      `${n} entries`,
    );
    assert.equal(sink.documents.size, 0, `${n} entries: nothing written`);
  }
  // Names that differ before their last `|` share a bucket key, hence one leaf: more than the insertion sort takes.
  const ns = Array.from({ length: 600 }, (_, i) => `outbound|${(i * 37) % 600}||one.ns.svc.cluster.local`);
  const ds = ns.map((_, i) => digest(i));
  const viaTree = new DocumentSink(nodeSha256Hex);
  const root = TableTree.of(ns.map((name, i) => [name, ds[i] as string])).commit(viaTree);
  const direct = new DocumentSink(nodeSha256Hex);
  assert.equal(writeUnsortedTable(ns, ds, direct)?.digest, root.digest);
  assert.deepEqual(sinkDocs(direct), sinkDocs(viaTree));
});

test('digest order: the plain (major, string) order, with ties on the leading digits, odd keys and odd majors', () => {
  const plain = (keys: string[], major: number[]): number[] =>
    keys
      .map((_, i) => i)
      .sort(
        (a, b) => (major[a] as number) - (major[b] as number) || ((keys[a] as string) < (keys[b] as string) ? -1 : 1),
      );
  // Many keys sharing their first 6 hex digits, so the tie-break runs.
  const keys = Array.from({ length: 5000 }, (_, i) => `sha256:abcdef${digest(i).slice(13)}`);
  keys.push(...Array.from({ length: 5000 }, (_, i) => digest(i)));
  const major = keys.map((_, i) => (i * 7) % 13);
  assert.deepEqual([...digestOrder(keys, major)], plain(keys, major));
  const zeros = keys.map(() => 0);
  assert.deepEqual([...digestOrder(keys)], plain(keys, zeros));
  for (const oddMajor of [-1, 64, 1.5]) {
    const m = [...major];
    m[17] = oddMajor;
    assert.deepEqual([...digestOrder(keys, m)], plain(keys, m), `major ${oddMajor}`);
  }
  const odd = [...keys.slice(0, 50), 'sha256:ABCDEF00', 'zzz', 'sha256:'];
  assert.deepEqual(
    [...digestOrder(odd)],
    plain(
      odd,
      odd.map(() => 0),
    ),
  );
});

test('the one-shot object set lists and counts what ObjectRefs does, holds of every kind mixed', () => {
  const bytesOf = (d: string): Uint8Array => new TextEncoder().encode(d);
  const enc = (type: XdsType, d: string, parts?: string[]): EncodedResource => ({
    type,
    digest: d,
    bytes: bytesOf(d),
    ...(parts && { parts: parts.map((p) => ({ digest: p, bytes: bytesOf(p) })) }),
  });
  const holds: [XdsType, EncodedResource][] = [
    ['clusters', enc('clusters', digest(1))],
    ['clusters', enc('clusters', digest(1))], // held twice by one type
    ['listeners', enc('listeners', digest(1))], // the same bytes for another type
    ['routes', enc('routes', digest(2), [digest(3), digest(4), digest(3)])], // a composite, a part twice
    ['routes', enc('routes', digest(5), [digest(4), digest(1)])], // a part that is also an object
    ['routes', enc('routes', digest(4))], // an object that was only a part
    ['endpoints', enc('endpoints', digest(6))],
    ['routes', enc('routes', digest(2), [digest(3), digest(4), digest(3)])],
  ];
  const refs = new ObjectRefs();
  const added = new Map<string, Uint8Array>(); // what ObjectRefs says is new, hold by hold: every object and part
  const set = new ObjectSet();
  for (const [type, e] of holds) {
    refs.hold(type, e, added);
    set.hold(type, e);
  }
  assert.deepEqual(set.sizes(), refs.sizes());
  assert.deepEqual(set.sizes(), { clusters: 1, endpoints: 1, listeners: 1, routes: 3, objects: 5 });
  assert.deepEqual(
    [...set.sortedAll()],
    [...added].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  assert.deepEqual([...set.sortedAll().keys()], [1, 2, 3, 4, 5, 6].map(digest).sort());
});

test('a group document written directly is the canonical JSON of its roots', () => {
  const roots = { routes: digest(1), listeners: digest(2), endpoints: 'odd "root" ü', clusters: digest(4) };
  assert.equal(groupDocumentText(roots), canonicalJson(roots));
  assert.equal(
    groupDocumentText({ ...roots, endpoints: digest(3) }),
    canonicalJson({ ...roots, endpoints: digest(3) }),
  );
});

test('entries grouped by leaf: counted, or sorted by leaf in a table too deep to count, the same groups in the same order', () => {
  const ns = Array.from(
    { length: 3000 },
    (_, i) => `outbound|${8000 + (i % 7)}||svc-${(i * 7919) % 3000}.ns.svc.cluster.local`,
  );
  for (const depth of [0, 1, 2, 3]) {
    const counted = groupByLeaf(ns, depth);
    const sorted = groupByLeaf(ns, depth, 0);
    assert.deepEqual([...sorted.order], [...counted.order], `depth ${depth}`);
    assert.deepEqual(sorted.leaves, counted.leaves, `depth ${depth}`);
    assert.deepEqual(sorted.bounds, counted.bounds, `depth ${depth}`);
    // Leaves ascending, every entry once, each leaf's entries in input order.
    assert.ok(counted.leaves.every((l, k) => k === 0 || l > (counted.leaves[k - 1] as number)));
    assert.equal(new Set(counted.order).size, ns.length);
    for (let k = 0; k < counted.leaves.length; k++)
      for (let i = (counted.bounds[k] as number) + 1; i < (counted.bounds[k + 1] as number); i++)
        assert.ok((counted.order[i] as number) > (counted.order[i - 1] as number));
  }
  assert.deepEqual(groupByLeaf(ns, 0).leaves, [0]);
});
