/**
 * The whole-output check (checkConsistency: holder sets, buckets per group, one pass over the
 * classes) reports exactly what checking each class on its own reports (ConsistencyIndex.checkClass,
 * the plain per-class path: every reference of every group of the class looked up among the class's
 * groups) on a compiled synthetic mesh broken in the ways a compiler bug could break it: a dangling
 * RDS name (sidecar and proxyless), a missing cluster (a route's, an inline route config's), a
 * missing ClusterLoadAssignment, a name twice in one class, a group that does not exist. A faster
 * way to check the whole output must keep this test green.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateMesh } from '../../bench/synthetic.js';
import { compileOwned } from '../../src/compile/index.js';
import type { CompileOutput, GroupId, ResourceTable } from '../../src/compile/types.js';
import { buildInputSet } from '../../src/inputs/index.js';
import {
  checkConsistency,
  compareProblems,
  ConsistencyIndex,
  type ConsistencyProblem,
} from '../../src/snapshot/consistency.js';
import { resourceRefs } from '../../src/xds/references.js';
import type { XdsType } from '../../src/xds/type-urls.js';

const docs = generateMesh({ services: 40 }).docs;
const compiled = (): CompileOutput => compileOwned(buildInputSet(docs)).output;

/** What checkClass reports, class by class (it leaves Envoy's rules to the whole-output check). */
function perClass(out: CompileOutput): ConsistencyProblem[] {
  const index = new ConsistencyIndex(out.groups, out.classes);
  const tableOf = (g: GroupId): ResourceTable | undefined => out.groups.get(g);
  return out.classes.flatMap((cls) => index.checkClass(cls, tableOf)).sort(compareProblems);
}

/**
 * A problem as both paths word it. A duplicate's message lists its groups in output order in one
 * and sorted in the other: its groups are compared as a set.
 */
function comparable(p: ConsistencyProblem): string {
  const groups = p.code === 'duplicate-name' ? /\(([^)]*)\)$/.exec(p.message)?.[1]?.split(', ').sort() : undefined;
  const { message, ...rest } = p;
  return JSON.stringify({ ...rest, message: groups ? groups.join(',') : message });
}

function assertSameAsPerClass(out: CompileOutput, label: string): ConsistencyProblem[] {
  const whole = checkConsistency(out).filter((p) => p.code !== 'envoy-rejects');
  assert.deepEqual(whole.map(comparable), perClass(out).map(comparable), label);
  return whole;
}

const table = (out: CompileOutput, group: GroupId): ResourceTable => {
  const t = out.groups.get(group);
  assert.ok(t, `group ${group} exists`);
  return t;
};

/** The first resource of `type` in `group` whose references of `kind` satisfy `pick`, and that reference. */
function firstRef(
  out: CompileOutput,
  group: GroupId,
  type: XdsType,
  kind: 'routes' | 'endpoints' | 'clusters',
  pick: (ref: string) => boolean = () => true,
): string {
  for (const message of table(out, group)[type].values()) {
    const ref = resourceRefs(type, message)[kind].find(pick);
    if (ref !== undefined) return ref;
  }
  assert.fail(`no ${kind} reference from ${group} ${type}`);
}

const firstGroup = (out: CompileOutput, prefix: string): GroupId => {
  const id = [...out.groups.keys()].find((g) => g.startsWith(prefix) && !g.endsWith('/_'));
  assert.ok(id, `a group ${prefix}…`);
  return id;
};

function remove(out: CompileOutput, group: GroupId, type: XdsType, name: string): void {
  assert.ok(table(out, group)[type].delete(name), `${group} ${type} ${name} removed`);
}

/** The classes a set of problems names, by code. */
const classesBy = (problems: readonly ConsistencyProblem[], code: string): Set<string> =>
  new Set(problems.filter((p) => p.code === code).map((p) => p.classId));

test('the compiled mesh is consistent by both paths', () => {
  const out = compiled();
  assert.ok(out.classes.length > 10);
  assert.deepEqual(assertSameAsPerClass(out, 'intact'), []);
});

test('a dangling RDS name (an outbound listener, every class of the namespace) is reported as per class', () => {
  const out = compiled();
  const routes = firstGroup(out, 'routes/');
  const rds = firstRef(out, 'outbound-listeners', 'listeners', 'routes', (r) => table(out, routes).routes.has(r));
  remove(out, routes, 'routes', rds);
  const problems = assertSameAsPerClass(out, 'dangling RDS');
  assert.ok(classesBy(problems, 'missing-route').size > 1, 'several classes miss the route config');
});

test('a dangling RDS name of a proxyless client is reported as per class', () => {
  const out = compiled();
  const rds = firstRef(out, 'grpc', 'listeners', 'routes');
  remove(out, 'grpc', 'routes', rds);
  const problems = assertSameAsPerClass(out, 'dangling gRPC RDS');
  assert.ok(classesBy(problems, 'missing-route').size >= 1);
});

test("a missing cluster (a sidecar route's, a proxyless route's) is reported as per class", () => {
  const out = compiled();
  const routes = firstGroup(out, 'routes/');
  const cluster = firstRef(out, routes, 'routes', 'clusters', (c) => table(out, 'outbound').clusters.has(c));
  remove(out, 'outbound', 'clusters', cluster);
  const grpcCluster = firstRef(out, 'grpc', 'routes', 'clusters', (c) => table(out, 'grpc-clusters').clusters.has(c));
  remove(out, 'grpc-clusters', 'clusters', grpcCluster);
  const problems = assertSameAsPerClass(out, 'missing cluster');
  assert.ok(classesBy(problems, 'missing-cluster').size > 1);
});

test("a missing cluster of an inbound listener's inline route config is reported as per class", () => {
  const out = compiled();
  const inbound = firstGroup(out, 'inbound/');
  const cluster = firstRef(out, inbound, 'listeners', 'clusters', (c) => table(out, inbound).clusters.has(c));
  remove(out, inbound, 'clusters', cluster);
  const problems = assertSameAsPerClass(out, 'missing inbound cluster');
  assert.ok(classesBy(problems, 'missing-cluster').size >= 1);
});

test('a missing ClusterLoadAssignment is reported as per class', () => {
  const out = compiled();
  // One of the endpoints group (those whose priorities depend on the proxy's locality are in `endpoints@…`).
  const cla = firstRef(out, 'outbound', 'clusters', 'endpoints', (c) => table(out, 'endpoints').endpoints.has(c));
  remove(out, 'endpoints', 'endpoints', cla);
  const problems = assertSameAsPerClass(out, 'missing CLA');
  assert.ok(classesBy(problems, 'missing-endpoints').size > 1, 'sidecar and proxyless classes miss it');
});

test('a name twice in a class and a group that does not exist are reported as per class', () => {
  const out = compiled();
  const inbound = firstGroup(out, 'inbound/');
  const [name, cluster] = table(out, 'outbound').clusters.entries().next().value as [string, never];
  table(out, inbound).clusters.set(name, cluster);
  const [first, ...rest] = out.classes;
  assert.ok(first);
  const broken = { ...out, classes: [{ ...first, groups: [...first.groups, 'no-such-group'] }, ...rest] };
  const problems = assertSameAsPerClass(broken, 'duplicate and unknown group');
  assert.equal(classesBy(problems, 'duplicate-name').size, 1);
  assert.equal(classesBy(problems, 'unknown-group').size, 1);
});

test('all of these at once are reported as per class', () => {
  const out = compiled();
  const routes = firstGroup(out, 'routes/');
  remove(
    out,
    routes,
    'routes',
    firstRef(out, 'outbound-listeners', 'listeners', 'routes', (r) => table(out, routes).routes.has(r)),
  );
  remove(out, 'grpc', 'routes', firstRef(out, 'grpc', 'listeners', 'routes'));
  remove(
    out,
    'outbound',
    'clusters',
    firstRef(out, routes, 'routes', 'clusters', (c) => table(out, 'outbound').clusters.has(c)),
  );
  remove(
    out,
    'endpoints',
    'endpoints',
    firstRef(out, 'grpc-clusters', 'clusters', 'endpoints', (c) => table(out, 'endpoints').endpoints.has(c)),
  );
  const problems = assertSameAsPerClass(out, 'all at once');
  for (const code of ['missing-route', 'missing-cluster', 'missing-endpoints'])
    assert.ok(classesBy(problems, code).size > 0, code);
});
