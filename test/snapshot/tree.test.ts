/**
 * The snapshot as a Merkle tree: documents, deltas equal to full builds, round trips through the
 * local store, corruption, storage growth per change, and the cost of the consistency check.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateMesh } from '../../bench/synthetic.js';
import { builderState } from '../../bench/incremental.js';
import type { CompileOutput, GroupId, ProxyClass, ResourceTable } from '../../src/compile/types.js';
import { emptyTable } from '../../src/compile/types.js';
import { compile } from '../../src/compile/index.js';
import { compileTexts } from '../../src/pipeline.js';
import {
  buildSnapshot,
  SnapshotBuilder,
  type BuiltSnapshot,
  type SnapshotDelta,
  type TypeDelta,
} from '../../src/snapshot/build.js';
import { canonicalJson } from '../../src/canonical-json.js';
import { checkConsistency, InconsistentSnapshotError } from '../../src/snapshot/consistency.js';
import { MissingDocumentError, snapshotDocuments } from '../../src/snapshot/content.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { packDigests } from '../../src/snapshot/store/packs.js';
import { MissingBaseError, publishSnapshot } from '../../src/snapshot/store/publish.js';
import { CorruptObjectError } from '../../src/snapshot/store/store.js';
import { LEAF_TARGET, TableTree, DocumentSink, tableDepth } from '../../src/snapshot/tree.js';
import { XDS_TYPES, type XdsType } from '../../src/xds/type-urls.js';
import { BOOKINFO_STATE } from '../helpers/paths.js';
import { tempStoreDir } from '../store/helpers.js';
import { INFO, cla, edsCluster, output, sampleOutput, staticCluster } from './sample-output.js';

function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A deep-enough copy of an output: new maps, same message objects. */
function copyOutput(out: CompileOutput): {
  groups: Map<GroupId, ResourceTable>;
  classes: readonly ProxyClass[];
  selectors: CompileOutput['selectors'];
} {
  const groups = new Map<GroupId, ResourceTable>();
  for (const [id, t] of out.groups) {
    const c = emptyTable();
    for (const type of XDS_TYPES)
      for (const [n, m] of t[type] as Map<string, object>) (c[type] as Map<string, object>).set(n, m);
    groups.set(id, c);
  }
  return { groups, classes: out.classes, selectors: out.selectors };
}

function applyToOutput(out: ReturnType<typeof copyOutput>, delta: SnapshotDelta): void {
  for (const [id, g] of Object.entries(delta)) {
    if (g === null) {
      out.groups.delete(id);
      continue;
    }
    let t = out.groups.get(id);
    if (!t) out.groups.set(id, (t = emptyTable()));
    for (const type of XDS_TYPES) {
      const d = g[type] as TypeDelta<object> | undefined;
      for (const n of d?.deletes ?? []) (t[type] as Map<string, object>).delete(n);
      for (const [n, m] of d?.upserts ?? []) (t[type] as Map<string, object>).set(n, m);
    }
  }
}

/** A random delta: changed and new ClusterLoadAssignments, new unreferenced clusters, deleted unreferenced ones, deleted listeners. */
function randomDelta(out: ReturnType<typeof copyOutput>, rand: () => number, step: number): SnapshotDelta {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const delta: Record<GroupId, { [T in XdsType]?: { upserts: Map<string, object>; deletes: Set<string> } }> = {};
  const of = (g: GroupId, type: XdsType) => ((delta[g] ??= {})[type] ??= { upserts: new Map(), deletes: new Set() });
  const endpoints = [...(out.groups.get('endpoints')?.endpoints.keys() ?? [])];
  for (let i = 0, n = 1 + Math.floor(rand() * 4); i < n; i++) {
    const name = pick(endpoints);
    of('endpoints', 'endpoints').upserts.set(name, cla(name, [`10.9.${step & 255}.${1 + i}`]));
  }
  if (rand() < 0.5) {
    const name = `extra-${step}`;
    of('endpoints', 'endpoints').upserts.set(name, cla(name, ['10.8.0.1']));
    of('outbound', 'clusters').upserts.set(name, edsCluster(name));
  }
  const extras = [...(out.groups.get('outbound')?.clusters.keys() ?? [])].filter((n) => n.startsWith('extra-'));
  if (extras.length && rand() < 0.4) of('outbound', 'clusters').deletes.add(pick(extras)); // the CLA may stay: unreferenced is fine
  const listenerGroups = [...out.groups].filter(([, t]) => t.listeners.size > 1).map(([id]) => id);
  if (listenerGroups.length && rand() < 0.3) {
    const g = pick(listenerGroups);
    of(g, 'listeners').deletes.add(pick([...(out.groups.get(g)?.listeners.keys() ?? [])]));
  }
  if (rand() < 0.2)
    (delta[`extra-group-${step}`] ??= {}).clusters = {
      upserts: new Map([[`c${step}`, staticCluster(`c${step}`)]]),
      deletes: new Set(),
    };
  const extraGroups = [...out.groups.keys()].filter((g) => g.startsWith('extra-group-'));
  if (extraGroups.length && rand() < 0.2) (delta as Record<GroupId, unknown>)[pick(extraGroups)] = null;
  return delta as unknown as SnapshotDelta;
}

function assertSameAsFull(got: BuiltSnapshot, out: CompileOutput, before: Set<string>, what: string): BuiltSnapshot {
  const full = buildSnapshot(
    out,
    { inputsDigest: got.inputsDigest, compiler: got.compiler },
    { hasher: nodeSha256Hex },
  );
  assert.equal(got.digest, full.digest, what);
  assert.deepEqual(got.counts, full.counts, what);
  assert.deepEqual(got.content, full.content, what);
  const fullDocs = new Set(full.documents.map((d) => d.digest));
  for (const d of got.documents) assert.ok(fullDocs.has(d.digest), `${what}: a delta document is in the full build`);
  const have = new Set([...before, ...got.documents.map((d) => d.digest)]);
  for (const d of fullDocs)
    assert.ok(have.has(d), `${what}: every document of the full build is old or written by the delta`);
  for (const d of got.objects.keys()) assert.ok(full.objects.has(d), `${what}: a new object is in the full build`);
  return full;
}

function randomDeltas(base: CompileOutput, seed: number, steps: number): void {
  const rand = prng(seed);
  const current = copyOutput(base);
  const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
  let snap = builder.build(copyOutput(base));
  const stored = new Set(snap.documents.map((d) => d.digest));
  for (let step = 0; step < steps; step++) {
    const delta = randomDelta(current, rand, step);
    applyToOutput(current, delta);
    const inputsDigest = `sha256:${step.toString(16).padStart(64, '0')}`;
    snap = builder.applyDelta(delta, { inputsDigest });
    assert.equal(snap.base !== undefined, true);
    assertSameAsFull(snap, current, stored, `seed ${seed} step ${step}`);
    for (const d of snap.documents) stored.add(d.digest);
  }
  // a full build by the same builder after the deltas gives the same digest, and reuses the trees
  const again = builder.build(copyOutput(current));
  assert.equal(again.digest, snap.digest);
  assert.equal(again.base, undefined);
}

const bookinfo = (): CompileOutput => {
  const r = compileTexts([{ file: BOOKINFO_STATE, text: readFileSync(BOOKINFO_STATE, 'utf8') }], {
    hasher: nodeSha256Hex,
  });
  return compile(r.inputs).output;
};

test('leaf and node texts are canonical JSON; the depth follows the size', () => {
  const t = TableTree.of(
    Array.from(
      { length: 100 },
      (_, i) => [`outbound|80||s${i}.ns.svc.cluster.local`, `sha256:${String(i % 10).repeat(64)}`] as const,
    ),
  );
  const sink = new DocumentSink(nodeSha256Hex);
  t.commit(sink);
  for (const d of sink.documents.values()) {
    const text = new TextDecoder().decode(d.bytes);
    assert.equal(canonicalJson(JSON.parse(text)), text);
  }
  assert.equal(tableDepth(LEAF_TARGET), 0);
  assert.equal(tableDepth(LEAF_TARGET + 1), 1);
  assert.equal(tableDepth(LEAF_TARGET * 16 + 1), 2);
  // built entry by entry in another order, with detours, the root is the same
  const u = new TableTree();
  for (let i = 99; i >= 0; i--) u.set(`outbound|80||s${i}.ns.svc.cluster.local`, 'sha256:' + 'f'.repeat(64));
  u.commit(new DocumentSink(nodeSha256Hex));
  for (let i = 0; i < 100; i++) u.set(`outbound|80||s${i}.ns.svc.cluster.local`, `sha256:${String(i % 10).repeat(64)}`);
  u.set('gone', 'sha256:' + '1'.repeat(64));
  u.commit(new DocumentSink(nodeSha256Hex));
  u.delete('gone');
  assert.equal(u.commit(new DocumentSink(nodeSha256Hex)).digest, t.root.digest);
});

test('random deltas on the sample output equal full builds (digest, content, counts, documents)', () => {
  for (const seed of [1, 2, 3]) randomDeltas(sampleOutput(), seed, 25);
});

test('random deltas on compiled bookinfo equal full builds', () => {
  randomDeltas(bookinfo(), 7, 30);
});

test('random deltas on the synthetic bench mesh equal full builds', () => {
  const mesh = generateMesh({ services: 200, perNamespace: 50 });
  const state = builderState(mesh.docs, nodeSha256Hex);
  randomDeltas(state.output, 11, 12);
});

test('contents of deltas nobody read, read later and in any order, equal full builds (chains longer than the materialization bound)', () => {
  for (const seed of [4, 5]) {
    const rand = prng(seed);
    const current = copyOutput(bookinfo());
    const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
    builder.build(copyOutput(current));
    const steps: { snap: BuiltSnapshot; out: CompileOutput }[] = [];
    for (let step = 0; step < 75; step++) {
      const delta = randomDelta(current, rand, step);
      applyToOutput(current, delta);
      steps.push({
        snap: builder.applyDelta(delta, { inputsDigest: `sha256:${step.toString(16).padStart(64, '0')}` }),
        out: copyOutput(current),
      });
    }
    // Newest first, then older ones out of order (some inside an already computed stretch).
    const order = [74, 3, 40, 33, 0, 73, 10, 64, 65];
    for (const i of order) {
      const { snap, out } = steps[i]!;
      const full = buildSnapshot(
        out,
        { inputsDigest: snap.inputsDigest, compiler: snap.compiler },
        { hasher: nodeSha256Hex },
      );
      assert.deepEqual(snap.content, full.content, `seed ${seed} step ${i}`);
      assert.deepEqual(Object.keys(snap.content.groups), Object.keys(full.content.groups), 'groups in order');
      for (const [id, g] of Object.entries(full.content.groups))
        for (const type of XDS_TYPES)
          assert.deepEqual(
            Object.keys(snap.content.groups[id]![type]),
            Object.keys(g[type]),
            `seed ${seed} step ${i}: ${id}/${type} names in order`,
          );
      assert.deepEqual(snapshotDocuments(snap.content, nodeSha256Hex).digest, snap.digest);
    }
  }
});

test('an inconsistent delta is refused and leaves the builder at the last snapshot', () => {
  const builder = new SnapshotBuilder(INFO);
  const first = builder.build(sampleOutput());
  const route = [...(sampleOutput().groups.get('routes/default')?.routes.keys() ?? [])][0] as string;
  const cases: SnapshotDelta[] = [
    { 'routes/default': { routes: { deletes: [route] } } }, // a listener's RDS name
    { endpoints: { endpoints: { deletes: ['outbound|9080||a.default.svc.cluster.local'] } } }, // an EDS cluster's CLA
    { outbound: { clusters: { upserts: new Map([['x', edsCluster('x', 'no-such-cla')]]) } } }, // a reference to nothing
    {
      'inbound/default/a': {
        clusters: { upserts: new Map([['BlackHoleCluster', staticCluster('BlackHoleCluster')]]) },
      },
    }, // a duplicate in a class
    { 'inbound/default/a': null }, // a group classes use
  ];
  for (const delta of cases) {
    const out = copyOutput(sampleOutput());
    applyToOutput(out, delta);
    const expected = checkConsistency(out).map((p) => `${p.classId} ${p.code} ${p.ref ?? p.name}`);
    assert.ok(expected.length > 0);
    assert.throws(
      () => builder.applyDelta(delta),
      (e: unknown) =>
        e instanceof InconsistentSnapshotError &&
        expected.every((x) => e.problems.some((p) => `${p.classId} ${p.code} ${p.ref ?? p.name}` === x)),
    );
    assert.equal(builder.snapshot, first);
  }
  // and the builder still works
  const ok = builder.applyDelta({
    endpoints: {
      endpoints: {
        upserts: new Map([
          [
            'outbound|9080||a.default.svc.cluster.local',
            cla('outbound|9080||a.default.svc.cluster.local', ['10.1.0.7']),
          ],
        ]),
      },
    },
  });
  assert.notEqual(ok.digest, first.digest);
});

test('a delta with new classes is checked in full and equals a full build', () => {
  const builder = new SnapshotBuilder(INFO);
  const first = builder.build(sampleOutput());
  const out = copyOutput(sampleOutput());
  const classes = out.classes.filter((c) => c.id !== 'sidecar/default/a');
  const next = builder.applyDelta({ 'inbound/default/a': null }, { classes });
  applyToOutput(out, { 'inbound/default/a': null });
  assertSameAsFull(next, { ...out, classes }, new Set(first.documents.map((d) => d.digest)), 'classes');
});

test('a tree round-trips through the local store; corrupt and missing documents are detected', async () => {
  const root = tempStoreDir();
  const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
  const one = builder.build(bookinfo());
  const store = new LocalStore(root);
  await publishSnapshot(store, 'c', one, { createdAt: '2025-01-01T00:00:00.000Z' });
  assert.deepEqual(await store.getSnapshot(one.digest), one.content);
  assert.deepEqual(snapshotDocuments(one.content, nodeSha256Hex).digest, one.digest);

  const name = [...(builder.output().groups.get('endpoints')?.endpoints.keys() ?? [])][0] as string;
  const two = builder.applyDelta({ endpoints: { endpoints: { upserts: new Map([[name, cla(name, ['10.3.3.3'])]]) } } });
  // a delta cannot go to a store without its base
  await assert.rejects(
    publishSnapshot(new LocalStore(tempStoreDir()), 'c', two, { createdAt: '2025-01-01T00:00:00.000Z' }),
    MissingBaseError,
  );
  const published = await publishSnapshot(store, 'c', two, { createdAt: '2025-01-01T00:00:00.000Z' });
  assert.ok(published.status === 'published');
  assert.equal(published.record.digest, two.digest);
  assert.deepEqual(published.record.counts, two.counts);
  assert.deepEqual(await new LocalStore(root).getSnapshot(two.digest), two.content);

  // corrupt one leaf the second version uses
  const leaf = two.documents.find((d) => d.layer === 0);
  assert.ok(leaf);
  const path = store.documentPath(leaf.digest);
  writeFileSync(path, readFileSync(path, 'utf8').replace('"sha256:', '"sha256:0'));
  await assert.rejects(new LocalStore(root).getSnapshot(two.digest), CorruptObjectError);
  assert.deepEqual(
    await new LocalStore(root).getSnapshot(one.digest),
    one.content,
    'the first version does not use that leaf',
  );
  unlinkSync(path);
  // The version's packs hold a copy of every document (readers look there too): remove them as well.
  for (const pack of packDigests(published.record)) unlinkSync(store.objectPath(pack));
  await assert.rejects(new LocalStore(root).getSnapshot(two.digest), MissingDocumentError);
  rmSync(join(root, '..'), { recursive: true, force: true });
});

test('storage grows with the change: one endpoint at 1k services writes a few KB, not MB', async () => {
  const mesh = generateMesh({ services: 1000 });
  const state = builderState(mesh.docs, nodeSha256Hex);
  const root = tempStoreDir();
  const store = new LocalStore(root);
  const first = await publishSnapshot(store, 'c', state.snapshot, { createdAt: '2025-01-01T00:00:00.000Z' });
  assert.ok(first.status === 'published');
  const biggest = Math.max(...state.snapshot.documents.map((d) => d.bytes.byteLength));
  const endpoints = builderEndpoints(state.output);
  const name = endpoints[Math.floor(endpoints.length / 2)] as string;
  const next = state.builder.applyDelta({
    endpoints: { endpoints: { upserts: new Map([[name, cla(name, ['10.250.0.1', '10.250.0.2'])]]) } },
  });
  const second = await publishSnapshot(store, 'c', next, { createdAt: '2025-01-01T00:00:00.000Z' });
  assert.ok(second.status === 'published');
  console.log(
    `# first publish ${first.bytesWritten} B in ${first.documentsWritten} documents (largest ${biggest} B); one endpoint: ${second.bytesWritten} B in ${second.documentsWritten} documents + ${second.objectsWritten} object`,
  );
  assert.equal(second.objectsWritten, 1);
  assert.ok(second.documentsWritten <= 10, `${second.documentsWritten} documents`);
  assert.ok(second.bytesWritten < 32 * 1024, `${second.bytesWritten} bytes`); // tree documents + the version record (which lists diagnostics)
  assert.ok(second.bytesWritten * 100 < first.bytesWritten);
  rmSync(join(root, '..'), { recursive: true, force: true });
});

const builderEndpoints = (out: CompileOutput): string[] => [...(out.groups.get('endpoints')?.endpoints.keys() ?? [])];

test('the consistency check accepts 100 and 1000 classes sharing big groups, each with its own inbound group', () => {
  const make = (classCount: number): CompileOutput => {
    const names = Array.from({ length: 3000 }, (_, i) => `outbound|80||s${i}.ns.svc.cluster.local`);
    const groups: Parameters<typeof output>[0] = {
      outbound: { clusters: names.map((n) => edsCluster(n)) },
      'grpc-clusters': { clusters: names.map((n) => edsCluster(n)) },
      endpoints: { endpoints: names.map((n) => cla(n, ['10.0.0.1'])) },
    };
    const classes: ProxyClass[] = [];
    for (let c = 0; c < classCount; c++) {
      groups[`inbound/${c}`] = { clusters: [staticCluster('inbound|80||'), staticCluster(`inbound|${c}||`)] };
      classes.push({
        id: `sidecar/ns/${c}`,
        generator: 'sidecar',
        namespace: 'ns',
        services: [],
        groups: ['outbound', 'endpoints', `inbound/${c}`],
      });
    }
    classes.push({
      id: 'grpc/ns',
      generator: 'grpc',
      namespace: 'ns',
      services: [],
      groups: ['grpc-clusters', 'endpoints'],
    });
    return output(groups, classes);
  };
  const small = make(100);
  const big = make(1000);
  // Its scaling is the benchmark's to measure (bench/), not a timed test's.
  assert.deepEqual(checkConsistency(small), []);
  assert.deepEqual(checkConsistency(big), []);
});
