/**
 * A delta that changes the proxy classes is checked around what changed (delta-consistency.ts):
 * the index's update for the classes whose groups stayed, a check of its own for each new class or
 * class whose groups changed, and the Envoy acceptance of groups that became (or stopped being)
 * loaded by gRPC clients only. Whatever the change, it must find exactly the problems a full
 * check of the result finds, refuse the delta when there are any, and otherwise give a full
 * build's digest.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CompileOutput, GroupId, ProxyClass, ResourceTable } from '../../src/compile/types.js';
import { emptyTable } from '../../src/compile/types.js';
import { buildSnapshot, SnapshotBuilder, type SnapshotDelta } from '../../src/snapshot/build.js';
import {
  checkConsistency,
  InconsistentSnapshotError,
  type ConsistencyProblem,
} from '../../src/snapshot/consistency.js';
import { XDS_TYPES, type XdsType } from '../../src/xds/type-urls.js';
import { mulberry32 } from '../inputs/prng.js';
import { A, B, cla, DB, edsCluster, INFO, sampleOutput, sidecarClass, staticCluster } from './sample-output.js';

const key = (p: ConsistencyProblem): string =>
  [p.classId, p.code, p.group ?? '', p.type ?? '', p.name, p.ref ?? '', p.field ?? '', p.rule ?? ''].join(' ');
const keys = (ps: readonly ConsistencyProblem[]): string[] => [...new Set(ps.map(key))].sort();

/** The output `delta` and `classes` lead to from `base` (new maps, same messages). */
function applied(base: CompileOutput, delta: SnapshotDelta, classes: readonly ProxyClass[]): CompileOutput {
  const groups = new Map<GroupId, ResourceTable>();
  for (const [id, t] of base.groups) {
    const c = emptyTable();
    for (const type of XDS_TYPES) for (const [n, m] of t[type]) (c[type] as Map<string, object>).set(n, m);
    groups.set(id, c);
  }
  for (const [id, g] of Object.entries(delta)) {
    if (g === null) {
      groups.delete(id);
      continue;
    }
    let t = groups.get(id);
    if (!t) groups.set(id, (t = emptyTable()));
    for (const type of XDS_TYPES) {
      const d = g[type];
      for (const n of d?.deletes ?? []) (t[type] as Map<string, object>).delete(n);
      for (const [n, m] of d?.upserts ?? []) (t[type] as Map<string, object>).set(n, m);
    }
  }
  const sorted = new Map([...groups].sort(([a], [b]) => (a < b ? -1 : 1)));
  return { groups: sorted, classes, selectors: base.selectors };
}

/**
 * Applies the delta with new classes to a builder at `base` and checks it against a full check:
 * refused with exactly the full check's problems (the builder left where it was), or accepted
 * with a full build's digest. Returns the problems.
 */
function expectLikeFull(
  base: CompileOutput,
  delta: SnapshotDelta,
  classes: readonly ProxyClass[],
  what: string,
): ConsistencyProblem[] {
  const builder = new SnapshotBuilder(INFO);
  const first = builder.build(base);
  const after = applied(base, delta, classes);
  const expected = checkConsistency(after);
  if (expected.length === 0) {
    const built = builder.applyDelta(delta, { classes });
    assert.equal(built.digest, buildSnapshot(after, INFO).digest, `${what}: digest`);
    return [];
  }
  let got: readonly ConsistencyProblem[] = [];
  assert.throws(
    () => builder.applyDelta(delta, { classes }),
    (e: unknown) => e instanceof InconsistentSnapshotError && ((got = e.problems), true),
    what,
  );
  assert.deepEqual(keys(got), keys(expected), `${what}: problems`);
  assert.equal(builder.snapshot, first, `${what}: builder kept its snapshot`);
  return expected;
}

const sidecarA = 'sidecar/default/a';
const withClass = (classes: readonly ProxyClass[], cls: ProxyClass): ProxyClass[] => [
  ...classes.filter((c) => c.id !== cls.id),
  cls,
];

test('a new class or a class whose groups changed is checked in full; unchanged classes around the delta', () => {
  const base = sampleOutput();
  const a = base.classes.find((c) => c.id === sidecarA) as ProxyClass;
  const cases: { what: string; delta: SnapshotDelta; classes: ProxyClass[]; codes: string[] }[] = [
    {
      what: 'a new class without the endpoints group',
      delta: {},
      classes: withClass(base.classes, {
        ...sidecarClass('sidecar/default/b', [], 'inbound/default/a'),
        groups: ['outbound', 'outbound-listeners', 'routes/default', 'inbound/default/a'],
      }),
      codes: ['missing-endpoints'],
    },
    {
      what: 'a class given a second inbound group (a duplicate listener and cluster names apart)',
      delta: {},
      classes: withClass(base.classes, { ...a, groups: [...a.groups, 'inbound/default/_'] }),
      codes: ['duplicate-name'],
    },
    {
      what: 'a new class naming a group that does not exist',
      delta: {},
      classes: withClass(base.classes, sidecarClass('sidecar/default/c', [], 'inbound/default/c')),
      codes: ['unknown-group'],
    },
    {
      what: 'a new class with its group, while an unchanged class loses an assignment it needs',
      delta: {
        'inbound/default/c': { clusters: { upserts: new Map([['inbound|80||', staticCluster('inbound|80||')]]) } },
        endpoints: { endpoints: { deletes: [B] } },
      },
      classes: withClass(base.classes, sidecarClass('sidecar/default/c', [], 'inbound/default/c')),
      codes: ['missing-endpoints'],
    },
    {
      what: 'a class removed and a group an unchanged class uses removed',
      delta: { 'inbound/default/_': null },
      classes: base.classes.filter((c) => c.id !== sidecarA),
      codes: ['unknown-group'],
    },
    {
      what: 'a changed class and a new cluster referring to nothing in a shared group',
      delta: { outbound: { clusters: { upserts: new Map([['x', edsCluster('x', 'no-such-cla')]]) } } },
      classes: withClass(base.classes, { ...a, groups: a.groups.filter((g) => g !== 'routes/default') }),
      codes: ['missing-endpoints', 'missing-route'],
    },
  ];
  for (const c of cases) {
    const problems = expectLikeFull(sampleOutput(), c.delta, c.classes, c.what);
    assert.deepEqual([...new Set(problems.map((p) => p.code))].sort(), c.codes, c.what);
  }
});

test('a group only gRPC clients loaded, now loaded by Envoy, has every resource checked by Envoy rules again', () => {
  const base = sampleOutput();
  // A zero connect timeout: a rule only Envoy enforces (a gRPC client ignores the field).
  const zero = { ...edsCluster(A), connect_timeout: { seconds: 0 } };
  const grpcClusters = base.groups.get('grpc-clusters') as ResourceTable;
  (grpcClusters.clusters as Map<string, object>).set(A, zero);
  assert.deepEqual(checkConsistency(base), [], 'accepted while only gRPC clients load it');
  const a = base.classes.find((c) => c.id === 'grpc/default') as ProxyClass;
  const envoy: ProxyClass = { ...a, id: 'sidecar/default/g', generator: 'sidecar' };
  const problems = expectLikeFull(base, {}, withClass(base.classes, envoy), 'gRPC-only group loaded by a sidecar');
  assert.ok(
    problems.some((p) => p.code === 'envoy-rejects' && p.name === A && p.group === 'grpc-clusters'),
    JSON.stringify(problems.map(key)),
  );
});

test('random class and resource changes: the delta check finds what a full check finds', () => {
  const rand = mulberry32(16);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const groupIds = [...sampleOutput().groups.keys(), 'inbound/default/new', 'no-such-group'];
  const outcomes = { accepted: 0, refused: 0 };
  for (let step = 0; step < 150; step++) {
    const base = sampleOutput();
    let classes: ProxyClass[] = [...base.classes];
    const delta: Record<GroupId, SnapshotDelta[string]> = {};
    const changes = 1 + Math.floor(rand() * 3);
    for (let k = 0; k < changes; k++) {
      const r = rand();
      if (r < 0.25) {
        const groups = [...new Set(Array.from({ length: 1 + Math.floor(rand() * 5) }, () => pick(groupIds)))];
        classes = withClass(classes, { ...sidecarClass(`sidecar/default/n${k}`, [], 'x'), groups });
      } else if (r < 0.45) {
        const cls = pick(classes);
        const groups =
          rand() < 0.5
            ? cls.groups.filter((g) => g !== pick(cls.groups))
            : [...new Set([...cls.groups, pick(groupIds)])];
        classes = withClass(classes, { ...cls, groups });
      } else if (r < 0.55) {
        const cls = pick(classes);
        classes = withClass(classes, { ...cls, generator: cls.generator === 'grpc' ? 'sidecar' : 'grpc' });
      } else if (r < 0.65) {
        classes = classes.filter((c) => c !== pick(classes));
      } else if (r < 0.75) {
        delta[pick(groupIds.filter((g) => g !== 'no-such-group'))] = null;
      } else if (r < 0.85) {
        const [group, type, name] = pick<[GroupId, XdsType, string]>([
          ['endpoints', 'endpoints', pick([A, B, DB])],
          ['outbound', 'clusters', pick([A, B, DB])],
          ['grpc-clusters', 'clusters', pick([A, B])],
          ['routes/default', 'routes', '9080'],
        ]);
        delta[group] = { [type]: { deletes: [name] } };
      } else if (r < 0.95) {
        const name = pick(['inbound|80||', 'BlackHoleCluster', 'InboundPassthroughCluster']);
        delta['inbound/default/new'] = { clusters: { upserts: new Map([[name, staticCluster(name)]]) } };
      } else {
        delta.endpoints = { endpoints: { upserts: new Map([[A, cla(A, ['10.9.9.9'])]]) } };
      }
    }
    const problems = expectLikeFull(base, delta, classes, `step ${step}`);
    outcomes[problems.length ? 'refused' : 'accepted']++;
  }
  assert.ok(outcomes.accepted > 10 && outcomes.refused > 10, JSON.stringify(outcomes));
});
