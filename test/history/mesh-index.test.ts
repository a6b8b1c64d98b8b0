/** The publish guard's incremental summary (mesh-index.ts) equals a full summary after any delta, and costs only what changed. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emptyTable, type CompileOutput, type GroupId } from '../../src/compile/types.js';
import { PublishGuard } from '../../src/history/guarded-publish.js';
import { MeshIndex } from '../../src/history/mesh-index.js';
import { EndpointCounter, summarize, type MeshSummary } from '../../src/history/mesh-summary.js';
import { SnapshotBuilder, type BuiltSnapshot, type SnapshotDelta } from '../../src/snapshot/build.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { publishSnapshot } from '../../src/snapshot/store/publish.js';
import type { XdsType } from '../../src/xds/type-urls.js';
import { INFO, cla, edsCluster, sampleOutput } from '../snapshot/sample-output.js';
import { tempStore } from './helpers.js';

function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every object any snapshot so far carried: the reader both summaries count endpoints from. */
function objectPool(): { add(s: BuiltSnapshot): void; read(d: string): Promise<Uint8Array | null> } {
  const all = new Map<string, Uint8Array>();
  return { add: (s) => s.objects.forEach((bytes, d) => all.set(d, bytes)), read: async (d) => all.get(d) ?? null };
}

/**
 * A random delta over groups that exist: new and removed extra services (a cluster in one or two
 * groups, its assignment in one or two groups, so a name lives in several groups), endpoints moved
 * (sometimes to none), and now and then the second copy of an assignment dropped.
 */
function randomDelta(rand: () => number, step: number, extras: Map<string, GroupId[]>): SnapshotDelta {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const delta: Record<GroupId, { [T in XdsType]?: { upserts: Map<string, object>; deletes: Set<string> } }> = {};
  const of = (g: GroupId, type: XdsType) => ((delta[g] ??= {})[type] ??= { upserts: new Map(), deletes: new Set() });
  const ips = (n: number): string[] => Array.from({ length: n }, (_, i) => `10.${step & 255}.${i >> 8}.${i & 255}`);
  const clusterGroups: GroupId[] = ['outbound', 'grpc-clusters'];
  const endpointGroups: GroupId[] = ['endpoints', 'spare'];
  const names = [...extras.keys()]; // not this step's new one: a delta applies deletes before upserts
  if (rand() < 0.6) {
    const name = `outbound|80||x${step}.ns${Math.floor(rand() * 3)}.svc.cluster.local`;
    const groups = rand() < 0.5 ? clusterGroups : [pick(clusterGroups)];
    for (const g of groups) of(g, 'clusters').upserts.set(name, edsCluster(name));
    // every class reads assignments from 'endpoints'; 'spare' (no class's) holds a second copy now and then
    for (const g of rand() < 0.5 ? endpointGroups : ['endpoints'])
      of(g, 'endpoints').upserts.set(name, cla(name, ips(Math.floor(rand() * 5))));
    extras.set(name, groups);
  }
  if (names.length && rand() < 0.4) {
    const name = pick(names);
    const groups = extras.get(name) as GroupId[];
    const g = pick(groups);
    of(g, 'clusters').deletes.add(name);
    if (groups.length === 1) {
      extras.delete(name);
      for (const eg of endpointGroups) of(eg, 'endpoints').deletes.add(name);
    } else
      extras.set(
        name,
        groups.filter((x) => x !== g),
      );
  }
  for (let i = 0, n = Math.floor(rand() * 3); i < n; i++) {
    const name = pick([
      'outbound|9080||a.default.svc.cluster.local',
      'outbound|9080||b.default.svc.cluster.local',
      ...extras.keys(),
    ]);
    of(pick(endpointGroups), 'endpoints').upserts.set(name, cla(name, ips(Math.floor(rand() * 4))));
  }
  if (rand() < 0.2)
    of('spare', 'endpoints').deletes.add(pick(['outbound|9080||a.default.svc.cluster.local', ...extras.keys()]));
  return delta as unknown as SnapshotDelta;
}

/** The sample mesh with a group no class reads, where assignments get a second copy. */
function sampleWithSpare(): CompileOutput {
  const out = sampleOutput();
  const spare = emptyTable();
  spare.endpoints.set(
    'outbound|9080||b.default.svc.cluster.local',
    cla('outbound|9080||b.default.svc.cluster.local', ['10.6.0.1', '10.6.0.2', '10.6.0.3']),
  );
  return { ...out, groups: new Map([...out.groups, ['spare', spare]]) };
}

const plain = (s: MeshSummary) => ({
  classes: s.classes,
  services: new Map([...s.services].sort()),
  clusters: [...s.clusters].sort(),
  endpoints: new Map([...s.endpoints].sort()),
  lbEndpoints: s.lbEndpoints,
  endpointSets: s.endpoints.size,
});

test('a delta advances the index to the same summary a full summary of its content gives', async () => {
  for (const seed of [1, 2, 3]) {
    const rand = prng(seed);
    const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
    const pool = objectPool();
    let snap = builder.build(sampleWithSpare());
    pool.add(snap);
    const counter = new EndpointCounter();
    const index = await MeshIndex.of(snap.digest, snap.content, pool.read, counter);
    assert.deepEqual(plain(index.summary), plain(await summarize(snap.content, pool.read)));
    const extras = new Map<string, GroupId[]>();
    for (let step = 0; step < 40; step++) {
      const before = plain(index.summary);
      const previous = index.summary;
      snap = builder.applyDelta(randomDelta(rand, step, extras), {
        inputsDigest: `sha256:${step.toString(16).padStart(64, '0')}`,
      });
      pool.add(snap);
      assert.ok(
        index.canAdvance(snap.base, snap.changes),
        `seed ${seed} step ${step}: a delta of the indexed snapshot`,
      );
      const next = await index.advance(
        snap.digest,
        snap.changes as NonNullable<BuiltSnapshot['changes']>,
        pool.read,
        counter,
      );
      assert.deepEqual(plain(next), plain(await summarize(snap.content, pool.read)), `seed ${seed} step ${step}`);
      assert.deepEqual(plain(previous), before, `seed ${seed} step ${step}: the previous summary is left as it was`);
      assert.equal(index.digest, snap.digest);
    }
  }
});

test('the index refuses a delta of another snapshot; it advances over groups added and removed', async () => {
  const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
  const pool = objectPool();
  const first = builder.build(sampleOutput());
  pool.add(first);
  const index = await MeshIndex.of(first.digest, first.content, pool.read, new EndpointCounter());
  const a = 'outbound|9080||a.default.svc.cluster.local';
  const second = builder.applyDelta({ endpoints: { endpoints: { upserts: new Map([[a, cla(a, ['10.7.0.1'])]]) } } });
  const third = builder.applyDelta({ endpoints: { endpoints: { upserts: new Map([[a, cla(a, ['10.7.0.2'])]]) } } });
  [second, third].forEach(pool.add);
  assert.equal(index.canAdvance(third.base, third.changes), false);
  assert.equal(index.canAdvance(second.base, second.changes), true);
  const c = 'outbound|80||c.other.svc.cluster.local';
  const grouped = builder.applyDelta(
    {
      'extra-group': {
        clusters: { upserts: new Map([[c, edsCluster(c)]]) },
        endpoints: { upserts: new Map([[c, cla(c, ['10.8.0.1', '10.8.0.2'])]]) },
      },
    },
    { classes: [] },
  );
  const ungrouped = builder.applyDelta({ 'extra-group': null, endpoints: null });
  [grouped, ungrouped].forEach(pool.add);
  const counter = new EndpointCounter();
  const atThird = await MeshIndex.of(third.digest, third.content, pool.read, counter);
  for (const snap of [grouped, ungrouped]) {
    assert.equal(atThird.canAdvance(snap.base, snap.changes), true);
    const next = await atThird.advance(snap.digest, snap.changes!, pool.read, counter);
    assert.deepEqual(plain(next), plain(await summarize(snap.content, pool.read)), snap.digest);
  }
  assert.equal(atThird.summary.classes, 0);
  assert.equal(atThird.summary.endpoints.has(a), false, "the removed group's assignments are gone");
});

test("the watcher's guard checks an endpoint delta without expanding the snapshot's content", async () => {
  const { store, cleanup } = tempStore();
  try {
    const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
    const guard = new PublishGuard();
    const first = builder.build(sampleOutput());
    assert.equal((await guard.check(store, 'main', first))?.served, null);
    await publishSnapshot(store, 'main', first, { createdAt: new Date().toISOString(), hasher: nodeSha256Hex });
    const a = 'outbound|9080||a.default.svc.cluster.local';
    const delta = builder.applyDelta({
      endpoints: { endpoints: { upserts: new Map([[a, cla(a, ['10.7.0.1', '10.7.0.2', '10.7.0.3'])]]) } },
    });
    const unexpandable: BuiltSnapshot = {
      digest: delta.digest,
      inputsDigest: delta.inputsDigest,
      compiler: delta.compiler,
      counts: delta.counts,
      objects: delta.objects,
      documents: delta.documents,
      ...(delta.base !== undefined ? { base: delta.base } : {}),
      ...(delta.changes ? { changes: delta.changes } : {}),
      get content(): never {
        throw new Error('the content was expanded');
      },
    };
    const check = await guard.check(store, 'main', unexpandable);
    assert.equal(check?.verdict.allowed, true);
    assert.equal(check?.next.endpoints.get(a), 3);
    assert.deepEqual(
      plain(check.next),
      plain(await summarize(delta.content, async (d) => delta.objects.get(d) ?? store.getObject(d))),
    );
  } finally {
    cleanup();
  }
});

test('a name many groups hold: the index lists every holder, and advances as a full summary does', async () => {
  const shared = 'outbound|80||shared.default.svc.cluster.local';
  const ids = Array.from({ length: 40 }, (_, i) => `spare-${String(i).padStart(2, '0')}`);
  const out = sampleOutput();
  const groups = new Map(out.groups);
  for (const [i, id] of ids.entries()) {
    const table = emptyTable();
    table.clusters.set(shared, edsCluster(shared));
    table.endpoints.set(shared, cla(shared, i % 2 === 0 ? ['10.9.0.1'] : ['10.9.0.1', '10.9.0.2']));
    groups.set(id, table);
  }
  const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
  const pool = objectPool();
  let snap = builder.build({ ...out, groups });
  pool.add(snap);
  const counter = new EndpointCounter();
  const index = await MeshIndex.of(snap.digest, snap.content, pool.read, counter);
  assert.deepEqual(plain(index.summary), plain(await summarize(snap.content, pool.read)));
  assert.equal(index.summary.endpoints.get(shared), 1, "counted in the first group by id (spare-00's)");
  // The holders leave one by one, first the one whose copy is counted: each step as a full summary says.
  for (const [step, id] of ids.entries()) {
    snap = builder.applyDelta({
      [id]: { clusters: { deletes: new Set([shared]) }, endpoints: { deletes: new Set([shared]) } },
    } as unknown as SnapshotDelta);
    pool.add(snap);
    const next = await index.advance(snap.digest, snap.changes!, pool.read, counter);
    assert.deepEqual(plain(next), plain(await summarize(snap.content, pool.read)), `step ${step}`);
  }
  assert.equal(index.summary.clusters.has(shared), false);
});
