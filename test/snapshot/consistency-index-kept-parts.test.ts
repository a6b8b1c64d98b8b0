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
