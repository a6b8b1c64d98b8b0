/**
 * The delta consistency index (ConsistencyIndex, src/snapshot/consistency.ts) leaves alone the
 * parts a changed resource keeps (the same virtual host objects: the incremental diff keeps the
 * hosts that did not change), and still knows every resource that names a cluster: a cluster one
 * kept host and one dropped host both name is still known to be referred to, so deleting it later
 * is reported.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConsistencyIndex } from '../../src/snapshot/consistency.js';
import { emptyTable, type GroupId, type ProxyClass, type ResourceTable } from '../../src/compile/types.js';
import type { Cluster, RouteConfiguration, VirtualHost } from '../../src/xds/proto.js';

const X = 'outbound|80||x.ns.svc.cluster.local';
const Y = 'outbound|80||y.ns.svc.cluster.local';
const host = (name: string, cluster: string): VirtualHost =>
  Object.freeze({ name, domains: [name], routes: [{ match: { prefix: '/' }, route: { cluster } }] });
const staticCluster = (name: string): Cluster => ({ name, type: 0 });

function tables(rc: RouteConfiguration, clusters: readonly string[]): Map<GroupId, ResourceTable> {
  const r = emptyTable();
  r.routes.set(rc.name as string, rc);
  const c = emptyTable();
  for (const n of clusters) c.clusters.set(n, staticCluster(n));
  return new Map<GroupId, ResourceTable>([
    ['routes/ns', r],
    ['outbound', c],
  ]);
}
const CLASSES: ProxyClass[] = [
  { id: 'sidecar/ns/_', generator: 'sidecar', namespace: 'ns', services: [], groups: ['routes/ns', 'outbound'] },
];

test('a kept host keeps its references known; a dropped host with the same reference does not take them', () => {
  const a = host('a', X);
  const b = host('b', X);
  const before: RouteConfiguration = { name: '80', virtual_hosts: [a, b] };
  const index = new ConsistencyIndex(tables(before, [X, Y]), CLASSES);

  // b dropped, a kept (the same object), c new: nothing missing.
  const after: RouteConfiguration = { name: '80', virtual_hosts: [a, host('c', Y)] };
  assert.deepEqual(index.update([{ group: 'routes/ns', type: 'routes', name: '80', before, after }]), []);

  // X is still named (by a): deleting it is a missing cluster for the config.
  const problems = index.update([
    { group: 'outbound', type: 'clusters', name: X, before: staticCluster(X), after: undefined },
  ]);
  assert.deepEqual(
    problems.map((p) => [p.code, p.name, p.ref]),
    [['missing-cluster', '80', X]],
  );
});

test('a changed resource is still checked for the references its new parts bring', () => {
  const a = host('a', X);
  const before: RouteConfiguration = { name: '80', virtual_hosts: [a] };
  const index = new ConsistencyIndex(tables(before, [X]), CLASSES);
  const after: RouteConfiguration = { name: '80', virtual_hosts: [a, host('z', 'outbound|80||nowhere')] };
  assert.deepEqual(
    index.update([{ group: 'routes/ns', type: 'routes', name: '80', before, after }]).map((p) => [p.code, p.ref]),
    [['missing-cluster', 'outbound|80||nowhere']],
  );
  // The config goes back to its kept host alone: the reference it no longer has is gone with it.
  const back: RouteConfiguration = { name: '80', virtual_hosts: [a] };
  assert.deepEqual(index.update([{ group: 'routes/ns', type: 'routes', name: '80', before: after, after: back }]), []);
  assert.deepEqual(
    index
      .update([{ group: 'outbound', type: 'clusters', name: X, before: staticCluster(X), after: undefined }])
      .map((p) => [p.code, p.ref]),
    [['missing-cluster', X]],
  );
});

test('an index that reads route configs when a cluster is deleted finds what one that remembers them finds', () => {
  const a = host('a', X);
  const b = host('b', Y);
  const live = tables({ name: '80', virtual_hosts: [a, b] }, [X, Y]);
  const other = emptyTable();
  other.routes.set('81', { name: '81', virtual_hosts: [b] });
  live.set('routes/other', other);
  const classes: ProxyClass[] = [
    ...CLASSES,
    {
      id: 'sidecar/other/_',
      generator: 'sidecar',
      namespace: 'other',
      services: [],
      groups: ['routes/other', 'outbound'],
    },
  ];
  const routeTables = function* () {
    for (const [id, t] of live) yield [id, t.routes] as const;
  };
  const reading = new ConsistencyIndex(live, classes, routeTables);
  const remembering = new ConsistencyIndex(live, classes);

  // Y deleted while '80' is changed in the same delta (it drops b): only '81' still names Y.
  const before = live.get('routes/ns')?.routes.get('80') as RouteConfiguration;
  const after: RouteConfiguration = { name: '80', virtual_hosts: [a] };
  (live.get('routes/ns') as ResourceTable).routes.set('80', after);
  (live.get('outbound') as ResourceTable).clusters.delete(Y);
  const changes = [
    { group: 'routes/ns' as GroupId, type: 'routes' as const, name: '80', before, after },
    { group: 'outbound' as GroupId, type: 'clusters' as const, name: Y, before: staticCluster(Y), after: undefined },
  ];
  const found = reading.update(changes);
  assert.deepEqual(
    found.map((p) => [p.classId, p.code, p.name, p.ref]),
    [['sidecar/other/_', 'missing-cluster', '81', Y]],
  );
  assert.deepEqual(found, remembering.update(changes));
});

test('a deleted cluster named by a route config of a removed group is not reported', () => {
  const live = tables({ name: '80', virtual_hosts: [host('a', X)] }, [X]);
  const index = new ConsistencyIndex(live, [], function* () {
    for (const [id, t] of live) yield [id, t.routes] as const;
  });
  // No class uses the groups: nothing to report either way; with a class, the removed group is skipped.
  index.setClasses(CLASSES);
  // The builder drops a removed group's tables after the check: they are still there when it runs.
  (live.get('outbound') as ResourceTable).clusters.delete(X);
  const problems = index.update(
    [{ group: 'outbound', type: 'clusters', name: X, before: staticCluster(X), after: undefined }],
    ['routes/ns'],
  );
  assert.deepEqual(
    problems.map((p) => p.code),
    ['unknown-group'],
  );
});
