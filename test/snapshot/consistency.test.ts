import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSnapshot } from '../../src/snapshot/build.js';
import {
  checkConsistency,
  InconsistentSnapshotError,
  type ConsistencyProblem,
} from '../../src/snapshot/consistency.js';
import type { CompileOutput, ResourceTable } from '../../src/compile/types.js';
import {
  A,
  B,
  DB,
  INFO,
  apiListener,
  cla,
  edsCluster,
  httpListener,
  inlineRouteListener,
  output,
  routeConfig,
  sampleOutput,
  staticCluster,
  tcpListener,
} from './sample-output.js';

const summary = (ps: ConsistencyProblem[]) => ps.map((p) => `${p.classId} ${p.code} ${p.name} -> ${p.ref ?? ''}`);

function without(out: CompileOutput, group: string, type: keyof ResourceTable, name: string): CompileOutput {
  assert.ok((out.groups.get(group)?.[type] as Map<string, unknown>).delete(name), `${group} ${type} ${name} exists`);
  return out;
}

test('the sample output is consistent', () => {
  assert.deepEqual(checkConsistency(sampleOutput()), []);
});

test('a listener whose RDS route config is missing is reported, per class', () => {
  const out = without(sampleOutput(), 'routes/default', 'routes', '9080');
  assert.deepEqual(summary(checkConsistency(out)), [
    'sidecar/default/_ missing-route 0.0.0.0_9080 -> 9080',
    'sidecar/default/a missing-route 0.0.0.0_9080 -> 9080',
  ]);
});

test('an api_listener (proxyless gRPC) with a missing route config is reported', () => {
  const out = without(sampleOutput(), 'grpc/default', 'routes', 'a.default.svc.cluster.local:9080');
  assert.deepEqual(summary(checkConsistency(out)), [
    'grpc/default missing-route a.default.svc.cluster.local:9080 -> a.default.svc.cluster.local:9080',
  ]);
});

test('an EDS cluster without its ClusterLoadAssignment is reported; service_name wins over the cluster name', () => {
  const out = without(sampleOutput(), 'endpoints', 'endpoints', B);
  const problems = summary(checkConsistency(out));
  assert.ok(problems.includes(`grpc/default missing-endpoints ${B} -> ${B}`));
  assert.ok(problems.includes(`sidecar/default/a missing-endpoints ${B} -> ${B}`));
  assert.equal(problems.length, 3);

  const renamed = output(
    {
      c: { clusters: [edsCluster('cluster-x', 'svc-x'), edsCluster('svc-y', '')] },
      e: { endpoints: [cla('cluster-x', ['10.0.0.1']), cla('svc-y', ['10.0.0.2'])] },
    },
    [{ id: 'k', generator: 'sidecar', namespace: 'n', services: [], groups: ['c', 'e'] }],
  );
  assert.deepEqual(summary(checkConsistency(renamed)), ['k missing-endpoints cluster-x -> svc-x']);
});

test('clusters named by routes (plain, weighted, mirror) must exist in the class', () => {
  const make = (clusters: string[]) =>
    output(
      {
        c: { clusters: clusters.map(staticCluster) },
        r: {
          routes: [
            routeConfig('80', ['plain'], {
              weighted: [
                { name: 'w1', weight: 1 },
                { name: 'w2', weight: 1 },
              ],
              mirror: 'mirror',
            }),
          ],
        },
        l: { listeners: [httpListener('0.0.0.0_80', 80, '80')] },
      },
      [{ id: 'k', generator: 'sidecar', namespace: 'n', services: [], groups: ['c', 'r', 'l'] }],
    );
  assert.deepEqual(checkConsistency(make(['plain', 'w1', 'w2', 'mirror'])), []);
  assert.deepEqual(summary(checkConsistency(make(['plain', 'w1']))), [
    'k missing-cluster 80 -> mirror',
    'k missing-cluster 80 -> w2',
  ]);
  assert.deepEqual(summary(checkConsistency(make(['w1', 'w2', 'mirror']))), ['k missing-cluster 80 -> plain']);
});

test('tcp_proxy clusters and weighted clusters must exist', () => {
  const out = output(
    {
      c: { clusters: [staticCluster('t1')] },
      l: {
        listeners: [
          tcpListener('10.0.0.1_3306', '10.0.0.1', 3306, 'gone'),
          tcpListener('10.0.0.2_3306', '10.0.0.2', 3306, [
            { name: 't1', weight: 1 },
            { name: 't2', weight: 1 },
          ]),
        ],
      },
    },
    [{ id: 'k', generator: 'sidecar', namespace: 'n', services: [], groups: ['c', 'l'] }],
  );
  assert.deepEqual(summary(checkConsistency(out)), [
    'k missing-cluster 10.0.0.1_3306 -> gone',
    'k missing-cluster 10.0.0.2_3306 -> t2',
  ]);
  const sample = without(sampleOutput(), 'outbound', 'clusters', DB);
  assert.deepEqual(
    summary(checkConsistency(sample)).filter((s) => s.includes('missing-cluster')),
    [
      `sidecar/default/_ missing-cluster 10.96.0.9_3306 -> ${DB}`,
      `sidecar/default/a missing-cluster 10.96.0.9_3306 -> ${DB}`,
    ],
  );
});

test('clusters named by an inline route config (virtualInbound) must exist', () => {
  const out = without(sampleOutput(), 'inbound/default/a', 'clusters', 'inbound|9080||');
  assert.deepEqual(summary(checkConsistency(out)), [
    'sidecar/default/a missing-cluster virtualInbound -> inbound|9080||',
  ]);
});

test('a reference satisfied only by another class is still missing', () => {
  // the gRPC class has route config a…:9080, but a sidecar listener asking for it does not get it
  const out = sampleOutput();
  (out.groups.get('outbound-listeners')?.listeners as Map<string, unknown>).set(
    'grpcish',
    apiListener('grpcish', 'a.default.svc.cluster.local:9080'),
  );
  assert.deepEqual(summary(checkConsistency(out)), [
    'sidecar/default/_ missing-route grpcish -> a.default.svc.cluster.local:9080',
    'sidecar/default/a missing-route grpcish -> a.default.svc.cluster.local:9080',
  ]);
});

test('the same name twice in one type within a class is reported; across classes it is fine', () => {
  const out = sampleOutput();
  (out.groups.get('inbound/default/a')?.clusters as Map<string, unknown>).set(A, edsCluster(A));
  const problems = checkConsistency(out);
  assert.deepEqual(summary(problems), [`sidecar/default/a duplicate-name ${A} -> ${A}`]);
  assert.match(problems[0]?.message ?? '', /inbound\/default\/a/);
  // A is in both `outbound` and `grpc-clusters`, which no class combines: no problem there
});

test('a class naming a group that does not exist is reported', () => {
  const out = sampleOutput();
  const classes = [
    ...out.classes,
    {
      id: 'sidecar/default/zz',
      generator: 'sidecar' as const,
      namespace: 'default',
      services: [],
      groups: ['outbound', 'endpoints', 'nope'],
    },
  ];
  assert.deepEqual(summary(checkConsistency({ ...out, classes })), ['sidecar/default/zz unknown-group nope -> ']);
});

test('buildSnapshot refuses an inconsistent output with a typed error listing the problems', () => {
  const out = without(without(sampleOutput(), 'routes/default', 'routes', '9080'), 'endpoints', 'endpoints', A);
  assert.throws(
    () => buildSnapshot(out, INFO),
    (e: unknown) => {
      assert.ok(e instanceof InconsistentSnapshotError);
      assert.ok(e.problems.some((p) => p.code === 'missing-route' && p.ref === '9080'));
      assert.ok(e.problems.some((p) => p.code === 'missing-endpoints' && p.ref === A));
      assert.match(e.message, /route config "9080"/);
      return true;
    },
  );
});

test('a large consistent output (5000 services, 200 classes) has no problems', () => {
  const n = 5000;
  const names = Array.from({ length: n }, (_, i) => `outbound|80||s${i}.ns.svc.cluster.local`);
  const routes = Array.from({ length: 20 }, (_, r) => routeConfig(`r${r}`, names.slice(r * 250, r * 250 + 250)));
  const classes = Array.from({ length: 200 }, (_, i) => ({
    id: `sidecar/ns${i}/_`,
    generator: 'sidecar' as const,
    namespace: `ns${i}`,
    services: [],
    groups: ['c', 'e', 'l', 'r', `in${i}`],
  }));
  const inbound = Object.fromEntries(
    classes.map((_, i) => [
      `in${i}`,
      {
        listeners: [inlineRouteListener('virtualInbound', 'InboundPassthroughCluster')],
        clusters: [staticCluster('InboundPassthroughCluster')],
      },
    ]),
  );
  const out = output(
    {
      c: { clusters: names.map((x) => edsCluster(x)) },
      e: { endpoints: names.map((x) => cla(x, ['10.0.0.1'])) },
      l: { listeners: routes.map((r, i) => httpListener(`0.0.0.0_${8000 + i}`, 8000 + i, r.name as string)) },
      r: { routes },
      ...inbound,
    },
    classes,
  );
  assert.deepEqual(checkConsistency(out), []); // its speed: bench/, not a timed test
});
