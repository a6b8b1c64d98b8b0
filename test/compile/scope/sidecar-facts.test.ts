/**
 * What a sidecar sees under a Sidecar resource: facts ported from istiod's TestSidecarRoutes
 * (sidecar_simulation_test.go) and SidecarScope (sidecar.go) on its `known` / `alt-known` /
 * `not-default` mesh. Where istiod inserts a virtual host for a VirtualService host that is no
 * service, meshsnap builds none (README: Sidecar and exportTo), so those cases are left out.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explain, type ProxyResources } from '../../../src/explain/index.js';
import { compileMesh, proxy, sidecar, view, virtualService } from './scope-mesh.js';

const vhosts = (routes: Record<string, Record<string, string | undefined>>, rc: string) =>
  Object.keys(routes[rc] ?? {}).filter((n) => n !== 'allow_any' && n !== 'block_all');

test('sidecar filter: not-default/*.default.svc.cluster.local imports nothing of default; not-default/<host> imports that host', () => {
  const result = compileMesh(
    sidecar(
      'not-default',
      '{egress: [{hosts: ["not-default/*.default.svc.cluster.local", "not-default/not-default.not-default.svc.cluster.local"]}]}',
    ),
  );
  const v = view(result, proxy('not-default'));
  assert.deepEqual(vhosts(v.routes, '80'), ['not-default.not-default.svc.cluster.local:80']);
  assert.deepEqual(v.clusters, [
    'outbound|8080||not-default.not-default.svc.cluster.local',
    'outbound|80||not-default.not-default.svc.cluster.local',
  ]);
  // A namespace without a Sidecar keeps the full view, in the groups every sidecar shared before.
  const d = view(result, proxy('default'));
  assert.equal(d.clusters.length, 6);
  const classes = result.snapshot.content.classes;
  assert.deepEqual(classes.find((c) => c.id === 'sidecar/default/_')?.groups.slice(0, 4), [
    'outbound',
    'endpoints',
    'outbound-listeners',
    'routes/default',
  ]);
});

test('explicit match with wildcard sidecar: */*.cluster.local imports every service (the full view)', () => {
  const result = compileMesh(sidecar('default', '{egress: [{hosts: ["*/*.cluster.local"]}]}'));
  const v = view(result, proxy('default'));
  assert.equal(v.clusters.length, 6);
  assert.deepEqual(result.snapshot.content.classes.find((c) => c.id === 'sidecar/default/_')?.groups.slice(0, 1), [
    'outbound',
  ]);
});

test('import only an unknown service: no route config for the port, no outbound cluster', () => {
  const result = compileMesh(sidecar('default', '{egress: [{hosts: ["*/foo.default.svc.cluster.local"]}]}'));
  const v = view(result, proxy('default'));
  assert.equal(v.routes['80'], undefined);
  assert.equal(v.routes['8080'], undefined);
  assert.deepEqual(v.clusters, []);
  assert.deepEqual(v.listeners, ['virtualInbound', 'virtualOutbound']);
});

test('*/known.default.svc.cluster.local imports known only, on both its ports', () => {
  const v = view(
    compileMesh(sidecar('default', '{egress: [{hosts: ["*/known.default.svc.cluster.local"]}]}')),
    proxy('default'),
  );
  assert.deepEqual(vhosts(v.routes, '80'), ['known.default.svc.cluster.local:80']);
  assert.deepEqual(vhosts(v.routes, '8080'), ['known.default.svc.cluster.local:8080']);
  assert.deepEqual(v.clusters, [
    'outbound|8080||known.default.svc.cluster.local',
    'outbound|80||known.default.svc.cluster.local',
  ]);
});

test('~ excludes: */* with ~default/alt-known.default.svc.cluster.local hides alt-known only; ~/* imports nothing', () => {
  const v = view(
    compileMesh(sidecar('default', '{egress: [{hosts: ["*/*", "~default/alt-known.default.svc.cluster.local"]}]}')),
    proxy('default'),
  );
  assert.deepEqual(vhosts(v.routes, '80'), [
    'known.default.svc.cluster.local:80',
    'not-default.not-default.svc.cluster.local:80',
  ]);
  const none = view(compileMesh(sidecar('default', '{egress: [{hosts: ["~/*"]}]}')), proxy('default'));
  assert.deepEqual(none.clusters, []);
});

test('a VirtualService imported by the Sidecar imports its destinations, on the ports it routes to', () => {
  const result = compileMesh(
    sidecar('not-default', '{egress: [{hosts: ["./*"]}]}'),
    `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: to-alt, namespace: not-default}
spec:
  hosts: [not-default]
  http: [{route: [{destination: {host: alt-known.default.svc.cluster.local, port: {number: 80}}}]}]`,
  );
  const v = view(result, proxy('not-default'));
  assert.deepEqual(v.clusters, [
    'outbound|8080||not-default.not-default.svc.cluster.local',
    'outbound|80||alt-known.default.svc.cluster.local',
    'outbound|80||not-default.not-default.svc.cluster.local',
  ]);
  assert.equal(
    v.routes['80']?.['not-default.not-default.svc.cluster.local:80'],
    'outbound|80||alt-known.default.svc.cluster.local',
  );
  // istiod: a destination only a VirtualService imports gets clusters, not virtual hosts (those come
  // from the egress listener's own services).
  assert.deepEqual(vhosts(v.routes, '80'), ['not-default.not-default.svc.cluster.local:80']);
});

test('a destination only a VirtualService imports gets its cluster, no listener of its own (istiod: listeners come from the egress hosts)', () => {
  const result = compileMesh(
    sidecar('not-default', '{egress: [{hosts: ["./*"]}], outboundTrafficPolicy: {mode: REGISTRY_ONLY}}'),
    `apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec:
  clusterIP: 2.0.0.3
  ports: [{port: 5432, name: tcp-db}]`,
    `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: to-db, namespace: not-default}
spec:
  hosts: [not-default]
  tcp: [{route: [{destination: {host: db.default.svc.cluster.local, port: {number: 5432}}}]}]`,
  );
  const v = view(result, proxy('not-default'));
  assert.ok(v.clusters.includes('outbound|5432||db.default.svc.cluster.local'));
  assert.ok(!v.listeners.includes('2.0.0.3_5432'), v.listeners.join(','));
  assert.ok(!v.listeners.some((l) => l.endsWith('_5432')), v.listeners.join(','));
  // The namespace without a Sidecar sees db as any service: its own listener.
  assert.ok(view(result, proxy('default')).listeners.includes('2.0.0.3_5432'));
});

test('a VirtualService of a namespace the Sidecar does not import does not apply (consumer rule not imported)', () => {
  // meshsnap needs the port of a multi-port destination (it drops the destination otherwise).
  const vs = virtualService(
    'arbitrary',
    'known-to-alt',
    'known.default.svc.cluster.local',
    '{host: alt-known.default.svc.cluster.local, port: {number: 80}}',
  );
  const open = view(compileMesh(vs), proxy('not-default'));
  assert.equal(
    open.routes['80']?.['known.default.svc.cluster.local:80'],
    'outbound|80||alt-known.default.svc.cluster.local',
  );
  // Arbitrary rule: applies to every namespace; a Sidecar importing known from default, not arbitrary's
  // VirtualServices, leaves known its default route.
  const scoped = view(
    compileMesh(vs, sidecar('not-default', '{egress: [{hosts: ["default/known.default.svc.cluster.local", "./*"]}]}')),
    proxy('not-default'),
  );
  assert.equal(
    scoped.routes['80']?.['known.default.svc.cluster.local:80'],
    'outbound|80||known.default.svc.cluster.local',
  );
});

test('outboundTrafficPolicy: the Sidecar overrides the mesh (REGISTRY_ONLY → block_all, BlackHoleCluster; ALLOW_ANY → allow_any)', () => {
  const mesh = `apiVersion: meshsnap.dev/v1alpha1
kind: MeshConfig
spec: {outboundTrafficPolicy: {mode: REGISTRY_ONLY}}`;
  const result = compileMesh(mesh, sidecar('default', '{outboundTrafficPolicy: {mode: ALLOW_ANY}}'));
  const open = view(result, proxy('default'));
  assert.ok('allow_any' in (open.routes['80'] ?? {}));
  const virtualOutbound = open.resources.listeners.get('virtualOutbound') as { filter_chains: unknown[] };
  assert.match(JSON.stringify(virtualOutbound), /"cluster":"PassthroughCluster"/);
  const closed = view(result, proxy('not-default'));
  assert.ok('block_all' in (closed.routes['80'] ?? {}));
  assert.match(JSON.stringify(closed.resources.listeners.get('virtualOutbound')), /"cluster":"BlackHoleCluster"/);
});

test('which Sidecar applies: a selecting one (oldest first), else the namespace-wide one, else the root namespace default', () => {
  const pod = (name: string, ns: string, labels: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}, labels: {${labels}}}
spec: {containers: [{name: app, image: app}]}
status: {phase: Running, podIP: 10.1.0.9, podIPs: [{ip: 10.1.0.9}]}`;
  const result = compileMesh(
    pod('a-1', 'default', 'app: a'),
    sidecar('default', '{egress: [{hosts: ["*/*"]}]}', 'namespace-wide'),
    `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: only-known, namespace: default, creationTimestamp: "2024-01-01T00:00:00Z"}
spec: {workloadSelector: {labels: {app: a}}, egress: [{hosts: ["./known.default.svc.cluster.local"]}]}`,
    `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: newer, namespace: default, creationTimestamp: "2025-01-01T00:00:00Z"}
spec: {workloadSelector: {labels: {app: a}}, egress: [{hosts: ["./*"]}]}`,
    sidecar('istio-system', '{egress: [{hosts: ["./*"]}]}'),
  );
  const selected = view(result, proxy('default', { app: 'a' }));
  // Both selecting Sidecars key the class (the relay places pods by every selector), the oldest applies.
  assert.equal(selected.classId, 'sidecar/default/_/sidecar:default/newer,sidecar:default/only-known');
  assert.deepEqual(selected.clusters, [
    'outbound|8080||known.default.svc.cluster.local',
    'outbound|80||known.default.svc.cluster.local',
  ]);
  assert.equal(view(result, proxy('default')).clusters.length, 6);
  // not-default has no Sidecar: the root namespace's applies, with `.` meaning not-default.
  assert.deepEqual(view(result, proxy('not-default')).clusters, [
    'outbound|8080||not-default.not-default.svc.cluster.local',
    'outbound|80||not-default.not-default.svc.cluster.local',
  ]);
  const selectors = result.snapshot.content.selectors.filter((s) => s.policy?.startsWith('sidecar:'));
  assert.deepEqual(selectors.map((s) => [s.namespace, s.policy, s.selector]).sort(), [
    ['default', 'sidecar:default/newer', { app: 'a' }],
    ['default', 'sidecar:default/only-known', { app: 'a' }],
  ]);
});

test('a pod a Sidecar selects, unknown to the compile, is refused rather than given the unrestricted class', async () => {
  const { classifyNode } = await import('../../../src/snapshot/classify.js');
  const result = compileMesh(
    `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: only-known, namespace: default}
spec: {workloadSelector: {labels: {app: a}}, egress: [{hosts: ["./known.default.svc.cluster.local"]}]}`,
  );
  const placed = classifyNode(result.snapshot.content, {
    id: proxy('default').id,
    metadata: { NAMESPACE: 'default', LABELS: { app: 'a' } },
  });
  assert.equal(placed.ok, false);
});

test('namespaces whose Sidecars give the same view share one scope and its groups', () => {
  const result = compileMesh(
    'apiVersion: v1\nkind: Namespace\nmetadata: {name: ns1}',
    'apiVersion: v1\nkind: Namespace\nmetadata: {name: ns2}',
    sidecar('ns1', '{egress: [{hosts: ["default/known.default.svc.cluster.local"]}]}'),
    sidecar('ns2', '{egress: [{hosts: ["default/known.default.svc.cluster.local"]}]}'),
  );
  const groups = (id: string) => result.snapshot.content.classes.find((c) => c.id === id)?.groups ?? [];
  assert.deepEqual(groups('sidecar/ns1/_').slice(0, 3), [
    'scope/ns1/ns1.default/outbound',
    'scope/ns1/ns1.default/endpoints',
    'scope/ns1/ns1.default/outbound-listeners',
  ]);
  assert.deepEqual(groups('sidecar/ns2/_').slice(0, 3), groups('sidecar/ns1/_').slice(0, 3));
  // Route configs differ per client namespace (short-name domains), so each has its own.
  assert.equal(groups('sidecar/ns2/_')[3], 'scope/ns1/ns1.default/routes/ns2');
});

test('ingress listeners replace the Services ports: ORIGINAL_DST without defaultEndpoint, STATIC to a loopback or unix socket one, the pod address on another port as ORIGINAL_DST to that port', () => {
  const pod = `apiVersion: v1
kind: Pod
metadata: {name: k-1, namespace: default, labels: {app: known}}
spec: {containers: [{name: app, image: app}]}
status: {phase: Running, podIP: 10.1.0.9, podIPs: [{ip: 10.1.0.9}]}`;
  const selected = `apiVersion: v1
kind: Service
metadata: {name: known-pods, namespace: default}
spec: {clusterIP: 2.0.0.8, selector: {app: known}, ports: [{port: 80, name: http, targetPort: 9080}]}`;
  const result = compileMesh(
    pod,
    selected,
    `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: ingress, namespace: default}
spec:
  workloadSelector: {labels: {app: known}}
  ingress:
  - {port: {number: 9080, protocol: HTTP, name: http}}
  - {port: {number: 9443, protocol: TCP, name: tcp}, defaultEndpoint: "127.0.0.1:8443"}
  - {port: {number: 9444, protocol: TCP, name: tcp2}, defaultEndpoint: "0.0.0.0:7000"}
  - {port: {number: 9445, protocol: TCP, name: tcp3}, defaultEndpoint: "unix:///var/run/app.sock"}`,
  );
  const v = view(result, proxy('default', { app: 'known' }));
  const inbound = [...v.resources.clusters.entries()].filter(([n]) => n.startsWith('inbound|'));
  assert.deepEqual(
    inbound.map(([n, c]) => [n, (c as { type?: string }).type ?? 'STATIC']),
    [
      ['inbound|9080||', 'ORIGINAL_DST'],
      ['inbound|9443||', 'STATIC'],
      ['inbound|9444||', 'ORIGINAL_DST'],
      ['inbound|9445||', 'STATIC'],
    ],
  );
  const meta = JSON.stringify((v.resources.clusters.get('inbound|9080||') as { metadata: unknown }).metadata);
  assert.match(meta, /known-pods\.default\.svc\.cluster\.local/);
  assert.match(
    JSON.stringify(v.resources.clusters.get('inbound|9443||')),
    /"address":"127\.0\.0\.1","port_value":8443/,
  );
  // istiod: STATIC at the proxy's own IP, port 7000; meshsnap keeps the class shared across pods by
  // sending to the original destination (the pod's address) with 7000 as the upstream port.
  const podPort = v.resources.clusters.get('inbound|9444||') as {
    original_dst_lb_config?: { upstream_port_override?: number };
    upstream_bind_config?: { source_address: { address: string } };
  };
  assert.equal(podPort.original_dst_lb_config?.upstream_port_override, 7000);
  assert.equal(podPort.upstream_bind_config?.source_address.address, '127.0.0.6');
  // A unix socket: STATIC to the pipe, with the passthrough bind address as istiod sets it for every non-loopback endpoint.
  const pipe = JSON.stringify(v.resources.clusters.get('inbound|9445||'));
  assert.match(pipe, /"pipe":\{"path":"\/var\/run\/app\.sock"\}/);
  assert.match(pipe, /"upstream_bind_config":\{"source_address":\{"address":"127\.0\.0\.6"/);
  assert.doesNotMatch(JSON.stringify(v.resources.clusters.get('inbound|9443||')), /upstream_bind_config/);
  // explain follows the override: a connection to the pod's 9444 reaches the application on 7000.
  const toApp = explain(v.resources as unknown as ProxyResources, {
    direction: 'inbound',
    host: '10.1.0.9',
    port: 9444,
    destinationIp: '10.1.0.9',
    protocol: 'tcp',
    tls: false,
    method: 'GET',
    path: '/',
    headers: {},
  });
  assert.equal(toApp.clusters[0]?.name, 'inbound|9444||');
  assert.deepEqual(toApp.clusters[0]?.endpoints, [{ address: '10.1.0.9', port: 7000 }]);
  assert.deepEqual(
    result.diagnostics.filter((d) => d.code === 'unsupported-sidecar-field').map((d) => d.field),
    [],
  );
});
