import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompileOutput, GroupId, ResourceTable } from '../../src/compile/types.js';
import { buildSnapshot, SnapshotBuilder, type BuiltSnapshot } from '../../src/snapshot/build.js';
import { InconsistentSnapshotError } from '../../src/snapshot/consistency.js';
import { A, cla, INFO, sampleOutput, sidecarClass } from './sample-output.js';

/** `output` with A's endpoints moved, DB's cluster, endpoints and listener gone, and a new group (no class reads it). */
function changedOutput(): CompileOutput {
  const out = sampleOutput();
  const groups = out.groups as Map<GroupId, ResourceTable>;
  out.groups.get('endpoints')?.endpoints.set(A, cla(A, ['10.9.9.9']));
  out.groups.get('outbound')?.clusters.delete('outbound|3306||db.default.svc.cluster.local');
  out.groups.get('endpoints')?.endpoints.delete('outbound|3306||db.default.svc.cluster.local');
  out.groups.get('outbound-listeners')?.listeners.delete('10.96.0.9_3306');
  const extra = sampleOutput().groups.get('grpc-clusters');
  if (extra) groups.set('grpc-clusters-2', extra);
  return out;
}

/** What a store holds after storing `snapshots` in turn: every object and document digest. */
function stored(...snapshots: BuiltSnapshot[]): Set<string> {
  const out = new Set<string>();
  for (const s of snapshots) {
    for (const d of s.objects.keys()) out.add(d);
    for (const d of s.documents) out.add(d.digest);
  }
  return out;
}

/** `rebuilt` is the full build of `output`; `earlier`: the snapshots stored before it, its base last. */
function assertSameAsFullBuild(rebuilt: BuiltSnapshot, earlier: BuiltSnapshot[], output: () => CompileOutput): void {
  const full = buildSnapshot(output(), INFO);
  assert.equal(rebuilt.digest, full.digest);
  assert.equal(rebuilt.base, earlier.at(-1)?.digest);
  assert.deepEqual(rebuilt.counts, full.counts);
  assert.deepEqual(rebuilt.content, full.content);
  // What was stored before with the rebuilt objects and documents holds every one of the full build's.
  const have = stored(...earlier, rebuilt);
  for (const d of full.objects.keys()) assert.ok(have.has(d), `object ${d} missing`);
  for (const d of full.documents) assert.ok(have.has(d.digest), `document ${d.digest} missing`);
  // Only objects new to the snapshot (documents may repeat: a group with the same tables as another).
  // A full build's objects are every object it holds; a delta's, only its new ones.
  const base = earlier.at(-1);
  if (base && base.base === undefined)
    for (const d of rebuilt.objects.keys()) assert.ok(!base.objects.has(d), `object ${d} was in the base`);
  for (const [d, bytes] of rebuilt.objects) assert.deepEqual(bytes, full.objects.get(d));
}

test('rebuild gives the full build digest and content, carrying only the objects and documents new to it', () => {
  const builder = new SnapshotBuilder(INFO);
  const base = builder.build(sampleOutput());
  const rebuilt = builder.rebuild(changedOutput());
  assertSameAsFullBuild(rebuilt, [base], changedOutput);
  assert.equal(rebuilt.changes?.classes, undefined, 'classes unchanged: no classes in the step');
  assert.deepEqual(rebuilt.changes?.removed, []);
  assert.deepEqual(rebuilt.changes?.added, ['grpc-clusters-2']);
});

test('a recompiled output with the same bytes is an empty change: no objects, no resource changes, same digest', () => {
  const builder = new SnapshotBuilder(INFO);
  const base = builder.build(sampleOutput());
  // Fresh message objects (sampleOutput builds new ones): every table entry compares as changed by identity.
  const rebuilt = builder.rebuild(sampleOutput());
  assert.equal(rebuilt.digest, base.digest);
  assert.equal(rebuilt.objects.size, 0);
  assert.deepEqual(rebuilt.changes?.changes, []);
  assert.deepEqual(rebuilt.content, base.content);
});

test('rebuild with changed classes writes the classes document and carries the classes in its step', () => {
  const next = (): CompileOutput => {
    const out = sampleOutput();
    return { ...out, classes: [...out.classes, sidecarClass('sidecar/default/extra', [], 'inbound/default/_')] };
  };
  const builder = new SnapshotBuilder(INFO);
  const base = builder.build(sampleOutput());
  const rebuilt = builder.rebuild(next());
  assertSameAsFullBuild(rebuilt, [base], next);
  assert.ok(rebuilt.changes?.classes?.classes.some((c) => c.id === 'sidecar/default/extra'));
});

test('rebuild after rebuilds and deltas equals full builds, and its content chain reads back', () => {
  const builder = new SnapshotBuilder(INFO, { keepObjects: false });
  const first = builder.build(sampleOutput());
  const second = builder.rebuild(changedOutput());
  const third = builder.applyDelta({ endpoints: { endpoints: { upserts: new Map([[A, cla(A, ['10.7.7.7'])]]) } } });
  const afterDelta = (): CompileOutput => {
    const out = changedOutput();
    out.groups.get('endpoints')?.endpoints.set(A, cla(A, ['10.7.7.7']));
    return out;
  };
  assert.equal(third.digest, buildSnapshot(afterDelta(), INFO).digest);
  const fourth = builder.rebuild(sampleOutput());
  assertSameAsFullBuild(fourth, [first, second, third], sampleOutput);
  assert.deepEqual(fourth.changes?.removed, ['grpc-clusters-2']);
  assert.deepEqual(fourth.content, first.content);
  assert.deepEqual(second.content, buildSnapshot(changedOutput(), INFO).content);
});

test('rebuild of an inconsistent output throws and leaves the builder at the last snapshot', () => {
  const builder = new SnapshotBuilder(INFO);
  const base = builder.build(sampleOutput());
  const broken = sampleOutput();
  // The route config's cluster A is gone: a proxy would get a route to nothing.
  broken.groups.get('outbound')?.clusters.delete(A);
  broken.groups.get('grpc-clusters')?.clusters.delete(A);
  assert.throws(() => builder.rebuild(broken), InconsistentSnapshotError);
  assert.equal(builder.snapshot?.digest, base.digest);
  const next = builder.rebuild(changedOutput());
  assertSameAsFullBuild(next, [base], changedOutput);
});

test('without a last snapshot, rebuild is a full build', () => {
  const built = new SnapshotBuilder(INFO).rebuild(sampleOutput());
  const full = buildSnapshot(sampleOutput(), INFO);
  assert.equal(built.digest, full.digest);
  assert.equal(built.base, undefined);
  assert.deepEqual([...built.objects.keys()], [...full.objects.keys()]);
  assert.deepEqual(
    built.documents.map((d) => d.digest),
    full.documents.map((d) => d.digest),
  );
});
