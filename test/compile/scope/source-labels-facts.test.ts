/**
 * VirtualService `http` matches on `sourceLabels`, decided per proxy as istiod's sourceMatchHTTP
 * (pilot/pkg/networking/core/route/route.go): a match applies to a proxy whose labels hold every
 * source label (and whose namespace is the `sourceNamespace`, when named); one naming `gateways`
 * ignores them. meshsnap gives the sidecars and gateways those labels select route configs of
 * their own; checked on what each proxy is served.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { served } from '../../helpers/mesh.js';
import { compileMesh, pod, proxy, view } from './scope-mesh.js';

const SUBSETS = `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: known, namespace: default}
spec: {host: known, subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}]}`;

/** Requests from `source` go to v2 of known, the others to v1. */
const canaryRoute = (match: string, extra = '') => `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: known, namespace: default}
spec:
  hosts: [known]
${extra}  http:
  - match: [${match}]
    route: [{destination: {host: known, subset: v2}}]
  - route: [{destination: {host: known, subset: v1}}]`;

const PODS = [
  pod('default', 'canary', '10.1.0.1', '{app: canary, version: v9}'),
  pod('default', 'stable', '10.1.0.2', '{app: stable}'),
  pod('not-default', 'canary-elsewhere', '10.1.0.3', '{app: canary}'),
];
const KNOWN_80 = 'known.default.svc.cluster.local:80';
const clusterFor = (v: ReturnType<typeof view>) => v.routes['80']?.[KNOWN_80];

test('a match on sourceLabels applies to the sidecars whose labels hold them, in any namespace', () => {
  const result = compileMesh(SUBSETS, canaryRoute('{sourceLabels: {app: canary}}'), ...PODS);
  const canary = view(result, proxy('default', { app: 'canary', version: 'v9' }));
  assert.match(canary.classId, /src:app=canary/);
  assert.equal(clusterFor(canary), 'outbound|80|v2|known.default.svc.cluster.local');
  const stable = view(result, proxy('default', { app: 'stable' }));
  assert.doesNotMatch(stable.classId, /src:/);
  assert.equal(clusterFor(stable), 'outbound|80|v1|known.default.svc.cluster.local');
  const elsewhere = view(result, proxy('not-default', { app: 'canary' }));
  assert.equal(clusterFor(elsewhere), 'outbound|80|v2|known.default.svc.cluster.local');
  // The other port's virtual host follows the same VirtualService (no port in the match).
  assert.equal(
    canary.routes['8080']?.['known.default.svc.cluster.local:8080'],
    'outbound|8080|v2|known.default.svc.cluster.local',
  );
  // Nothing skipped for sidecars; proxyless clients (placed per namespace) are told apart.
  assert.deepEqual(
    result.diagnostics.filter((d) => d.field?.includes('sourceLabels')).map((d) => [d.severity, d.code]),
    [['info', 'source-labels-proxyless']],
  );
  // The classes without the labels keep the namespace's route configs.
  const classes = result.snapshot.content.classes;
  assert.equal(classes.find((c) => c.id === stable.classId)?.groups[3], 'routes/default');
  assert.equal(classes.find((c) => c.id === canary.classId)?.groups[3], 'routes/default/src:app=canary');
});

test('every source label must be held; sourceNamespace narrows it to one namespace', () => {
  /** The subsets known's virtual host sends default's canary and not-default's canary to. */
  const subsets = (match: string) => {
    const result = compileMesh(SUBSETS, canaryRoute(match), ...PODS);
    return [proxy('default', { app: 'canary', version: 'v9' }), proxy('not-default', { app: 'canary' })].map(
      (node) => clusterFor(view(result, node))?.split('|')[2],
    );
  };
  assert.deepEqual(subsets('{sourceLabels: {app: canary, version: v9}}'), ['v2', 'v1']);
  assert.deepEqual(subsets('{sourceLabels: {app: canary}, sourceNamespace: default}'), ['v2', 'v1']);
  assert.deepEqual(subsets('{sourceLabels: {app: canary}}'), ['v2', 'v2']);
});

test("a gateway's routes: sourceLabels are its own labels; a match naming gateways ignores them", () => {
  const gateway = `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: gw, namespace: default}
spec: {selector: {istio: ingressgateway}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]}`;
  const routed = (match: string) => canaryRoute(match, '  gateways: [gw]\n').replace('hosts: [known]', 'hosts: ["*"]');
  const router = (result: ReturnType<typeof compileMesh>) => {
    const { classId, resources } = served(result, {
      id: 'router~10.1.0.7~gw-1.default~default.svc.cluster.local',
      metadata: { NAMESPACE: 'default', LABELS: { istio: 'ingressgateway', zone: 'a' } },
    });
    const config = resources.routes.get('http.80') as {
      virtual_hosts: { routes: { route?: { cluster?: string } }[] }[];
    };
    return { classId, cluster: config.virtual_hosts[0]?.routes[0]?.route?.cluster };
  };
  const gwPod = pod('default', 'gw-1', '10.1.0.7', '{istio: ingressgateway, zone: a}');
  const own = router(compileMesh(SUBSETS, gateway, gwPod, routed('{sourceLabels: {zone: a}}')));
  assert.match(own.classId, /src:zone=a/);
  assert.equal(own.cluster, 'outbound|80|v2|known.default.svc.cluster.local');
  const other = router(compileMesh(SUBSETS, gateway, gwPod, routed('{sourceLabels: {zone: b}}')));
  assert.equal(other.cluster, 'outbound|80|v1|known.default.svc.cluster.local');
  const named = router(compileMesh(SUBSETS, gateway, gwPod, routed('{sourceLabels: {zone: b}, gateways: [gw]}')));
  assert.equal(named.cluster, 'outbound|80|v2|known.default.svc.cluster.local', 'gateways named: sourceLabels ignored');
});

test("tcp matches: sourceLabels and sourceNamespace decide per sidecar (istiod's matchTCP), on listeners of their own", () => {
  const db = (name: string, ip: string) => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: default}
spec: {clusterIP: ${ip}, ports: [{name: tcp-db, port: 5432}]}`;
  const route = (match: string) => `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db, namespace: default}
spec:
  hosts: [db]
  tcp:
  - match: [${match}]
    route: [{destination: {host: db-next}}]
  - route: [{destination: {host: db}}]`;
  const tcpCluster = (v: ReturnType<typeof view>) => {
    const listener = v.resources.listeners.get('10.96.9.1_5432') as {
      filter_chains?: { filters: { typed_config: { cluster?: string } }[] }[];
      default_filter_chain?: { filters: { typed_config: { cluster?: string } }[] };
    };
    const chain = listener.filter_chains?.[0] ?? listener.default_filter_chain;
    return chain?.filters[0]?.typed_config.cluster;
  };
  const next = 'outbound|5432||db-next.default.svc.cluster.local';
  const plain = 'outbound|5432||db.default.svc.cluster.local';
  const services = [db('db', '10.96.9.1'), db('db-next', '10.96.9.2')];

  const byLabels = compileMesh(...services, route('{sourceLabels: {app: canary}}'), ...PODS);
  const canary = view(byLabels, proxy('default', { app: 'canary', version: 'v9' }));
  assert.equal(tcpCluster(canary), next);
  assert.equal(tcpCluster(view(byLabels, proxy('default', { app: 'stable' }))), plain);
  assert.equal(tcpCluster(view(byLabels, proxy('not-default', { app: 'canary' }))), next);
  const classes = byLabels.snapshot.content.classes;
  assert.equal(classes.find((c) => c.id === canary.classId)?.groups[2], 'outbound-listeners/src:app=canary');

  // A match naming a sourceNamespace: only that namespace's sidecars (before, it applied to all).
  const byNamespace = compileMesh(...services, route('{sourceNamespace: not-default}'), ...PODS);
  assert.equal(tcpCluster(view(byNamespace, proxy('not-default', { app: 'canary' }))), next);
  assert.equal(tcpCluster(view(byNamespace, proxy('default', { app: 'stable' }))), plain);
  assert.deepEqual(
    byNamespace.diagnostics.filter((d) => d.severity !== 'info'),
    [],
    'sourceNamespace is a known field, nothing is reported',
  );
});
