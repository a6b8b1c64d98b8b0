/**
 * Gateway API mesh routes (GAMMA) from a consumer namespace, as istiod applies them: the converted
 * VirtualServices keep the mesh's default exportTo (pilot/pkg/config/kube/gateway/route_collections.go
 * sets none), a sidecar takes its own namespace's Gateway API routes first (model/virtualservice.go
 * SelectVirtualServices, push_context.go "consumer override"), and an HTTP virtual host is built from
 * one only for a service of the route's namespace (producer) or a client of it (consumer)
 * (networking/core/route/route.go buildSidecarVirtualHostsForVirtualService); tcp routes are not
 * filtered by namespace (networking/core/listener.go). Also the conformance test MeshConsumerRoute
 * (conformance/tests/mesh-consumer-route.go): a consumer route changes only its namespace's requests.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateMesh } from '../../../bench/synthetic.js';
import { indexedInputs } from '../../../src/compile/incremental.js';
import { compile } from '../../../src/compile/index.js';
import { buildInputSet } from '../../../src/inputs/index.js';
import { parseDocuments } from '../../../src/inputs/parse.js';
import { compileTexts, type PipelineResult } from '../../../src/pipeline.js';
import { nodeSha256Hex } from '../../../src/snapshot/store/local.js';
import type { TestNode } from '../../helpers/mesh.js';
import { assertChurnMatchesFull } from '../incremental-helpers.js';
import { proxy, service, view } from '../scope/scope-mesh.js';

const ECHO = 'echo.svc.svc.cluster.local';
const cluster = (name: string, port = 80) => `outbound|${port}||${name}.svc.svc.cluster.local`;

/** `echo` and its versions in `svc` (HTTP on 80 and 8080), a TCP `db` with versions, and the namespaces `client`, `other`, `aaa`. */
const BASE = [
  service('echo', 'svc', '2.0.1.0'),
  service('echo-v1', 'svc', '2.0.1.1'),
  service('echo-v2', 'svc', '2.0.1.2'),
  service('echo-v3', 'svc', '2.0.1.3'),
  ...['db', 'db-v1', 'db-v2'].map(
    (name, i) => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: svc}
spec: {clusterIP: 2.0.2.${i}, ports: [{port: 9000, name: tcp}]}`,
  ),
  service('local', 'client', '2.0.1.8'),
  service('local', 'other', '2.0.1.9'),
  'apiVersion: v1\nkind: Namespace\nmetadata: {name: aaa}',
].join('\n---\n');

/** An HTTPRoute of `ns` whose parent is the Service `echo` of `svc`, sending to `backend` (of `svc`). */
const httpRoute = (ns: string, name: string, backend: string, rule = '') => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${ns}}
spec:
  parentRefs: [{group: "", kind: Service, name: echo, namespace: svc}]
  rules: [{${rule}backendRefs: [{name: ${backend}, namespace: svc, port: 80}]}]`;

const tcpRoute = (ns: string, name: string, backend: string) => `apiVersion: gateway.networking.k8s.io/v1alpha2
kind: TCPRoute
metadata: {name: ${name}, namespace: ${ns}}
spec:
  parentRefs: [{group: "", kind: Service, name: db, namespace: svc}]
  rules: [{backendRefs: [{name: ${backend}, namespace: svc, port: 9000}]}]`;

function compileWith(...docs: string[]): PipelineResult {
  return compileTexts([{ file: 'mesh.yaml', text: [BASE, ...docs].join('\n---\n') }], { hasher: nodeSha256Hex });
}

/** The cluster of the first route of echo's virtual host in route config `rc`, for a sidecar of `ns` (or another node). */
const echoFrom = (result: PipelineResult, node: string | TestNode, rc = '80') =>
  view(result, typeof node === 'string' ? proxy(node) : node).routes[rc]?.[`${ECHO}:80`];

const conflicts = (result: PipelineResult) =>
  result.diagnostics.filter((d) => d.code === 'conflicting-virtual-service').map((d) => `${d.namespace}/${d.name}`);

test('producer route in svc, consumer route in client: client uses its own, svc and a third namespace the producer route (no conflict reported)', () => {
  const routes = [httpRoute('svc', 'echo', 'echo-v1'), httpRoute('client', 'echo-override', 'echo-v2')].join('\n---\n');
  const result = compileWith(routes);
  assert.equal(echoFrom(result, 'client'), cluster('echo-v2'));
  assert.equal(echoFrom(result, 'svc'), cluster('echo-v1'));
  assert.equal(echoFrom(result, 'other'), cluster('echo-v1'));
  // The route without a port applies to every port of the Service.
  assert.equal(view(result, proxy('client')).routes['8080']?.[`${ECHO}:8080`], cluster('echo-v2'));
  assert.equal(view(result, proxy('other')).routes['8080']?.[`${ECHO}:8080`], cluster('echo-v1'));
  assert.deepEqual(conflicts(result), []);
  // Only the consumer namespace needs a view of its own; svc and other share what every sidecar gets.
  const scopes = new Set(
    [...compile(buildInputSet(parseDocuments(BASE + '\n---\n' + routes, 'mesh.yaml').docs)).output.groups.keys()]
      .filter((id) => id.startsWith('scope/'))
      .map((id) => id.split('/')[1]),
  );
  assert.deepEqual([...scopes], ['client']);
});

test('MeshConsumerRoute: a consumer route alone changes only requests from its namespace (others get the default route)', () => {
  const setHeader =
    'filters: [{type: ResponseHeaderModifier, responseHeaderModifier: {set: [{name: X-Header-Set, value: set}]}}], ';
  const result = compileWith(httpRoute('client', 'echo-override', 'echo', setHeader));
  const echoRoute = (ns: string) => {
    const rc = view(result, proxy(ns)).resources.routes.get('80') as {
      virtual_hosts: {
        name: string;
        routes: { route?: { cluster?: string }; response_headers_to_add?: unknown[] }[];
      }[];
    };
    return rc.virtual_hosts.find((h) => h.name === `${ECHO}:80`)?.routes[0];
  };
  const consumer = echoRoute('client');
  assert.equal(consumer?.route?.cluster, cluster('echo'));
  assert.match(JSON.stringify(consumer?.response_headers_to_add), /"key":"x-header-set","value":"set"/);
  for (const ns of ['svc', 'other']) {
    const plain = echoRoute(ns);
    assert.equal(plain?.route?.cluster, cluster('echo'), ns);
    assert.equal(plain?.response_headers_to_add, undefined, ns);
  }
  assert.deepEqual(conflicts(result), []);
});

test('a namespace takes its own Gateway API routes before any other VirtualService for the host; elsewhere the usual order', () => {
  // No creationTimestamps: `echo` sorts before `svc~echo…` by name (istiod's tie-break), so sidecars of other namespaces use it.
  const ordinary = `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: echo, namespace: aaa}
spec: {hosts: [${ECHO}], http: [{route: [{destination: {host: ${ECHO.replace('echo.', 'echo-v3.')}, port: {number: 80}}}]}]}`;
  const result = compileWith(
    ordinary,
    httpRoute('svc', 'echo', 'echo-v1'),
    httpRoute('client', 'echo-override', 'echo-v2'),
  );
  assert.equal(echoFrom(result, 'client'), cluster('echo-v2'));
  assert.equal(echoFrom(result, 'svc'), cluster('echo-v1'));
  assert.equal(echoFrom(result, 'other'), cluster('echo-v3'));
  assert.equal(echoFrom(result, 'aaa'), cluster('echo-v3'));
  // The producer route is reported (ignored outside svc), naming who uses it; the consumer route is not.
  const reported = result.diagnostics.filter((d) => d.code === 'conflicting-virtual-service');
  assert.deepEqual(
    reported.map((d) => `${d.namespace}/${d.name}`),
    ['svc/svc~echo.svc.svc.cluster.local'],
  );
  assert.match(reported[0]?.message ?? '', /sidecars of svc use this Gateway API route/);
});

test('several consumer namespaces: each uses its own route, the producer namespace none of them', () => {
  const result = compileWith(
    httpRoute('client', 'echo-override', 'echo-v2'),
    httpRoute('other', 'echo-override', 'echo-v3'),
  );
  assert.equal(echoFrom(result, 'client'), cluster('echo-v2'));
  assert.equal(echoFrom(result, 'other'), cluster('echo-v3'));
  assert.equal(echoFrom(result, 'svc'), cluster('echo'));
  assert.deepEqual(conflicts(result), []);
});

test('Sidecars with equal imports in a consumer and a third namespace do not share a scope; egress listeners with a port too', () => {
  const egress = `{egress: [{hosts: ["*/${ECHO}", "*/echo-v1.svc.svc.cluster.local", "*/echo-v2.svc.svc.cluster.local"]}]}`;
  const sidecar = (ns: string, spec: string) => `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: ${ns}}
spec: ${spec}`;
  const routes = [httpRoute('svc', 'echo', 'echo-v1'), httpRoute('client', 'echo-override', 'echo-v2')];
  const result = compileWith(...routes, sidecar('client', egress), sidecar('other', egress));
  assert.equal(echoFrom(result, 'client'), cluster('echo-v2'));
  assert.equal(echoFrom(result, 'other'), cluster('echo-v1'));
  const ported = `{egress: [{port: {number: 80, protocol: HTTP, name: http}, hosts: ["*/*"]}]}`;
  const perListener = compileWith(...routes, sidecar('client', ported));
  assert.equal(echoFrom(perListener, 'client'), cluster('echo-v2'));
  assert.equal(echoFrom(perListener, 'other'), cluster('echo-v1'));
});

test('proxyless gRPC clients follow the same rule', () => {
  const result = compileWith(httpRoute('svc', 'echo', 'echo-v1'), httpRoute('client', 'echo-override', 'echo-v2'));
  const grpc = (ns: string): TestNode => ({
    id: `sidecar~10.1.0.2~client.${ns}~${ns}.svc.cluster.local`,
    metadata: { NAMESPACE: ns, GENERATOR: 'grpc' },
  });
  const first = (ns: string) => {
    const rc = view(result, grpc(ns)).resources.routes.get(`${ECHO}:80`) as {
      virtual_hosts: { routes: { route?: { cluster?: string } }[] }[];
    };
    return rc.virtual_hosts[0]?.routes[0]?.route?.cluster;
  };
  assert.equal(first('client'), cluster('echo-v2'));
  assert.equal(first('svc'), cluster('echo-v1'));
  assert.equal(first('other'), cluster('echo-v1'));
});

test('TCPRoutes are not filtered by namespace (istiod): the consumer namespace takes its own first, the others the oldest (then first by name)', () => {
  const tcpCluster = (result: PipelineResult, ns: string) => {
    const listener = view(result, proxy(ns)).resources.listeners.get('2.0.2.0_9000');
    return JSON.stringify(listener).match(/outbound\|9000\|\|db[a-z0-9-]*\.svc\.svc\.cluster\.local/)?.[0];
  };
  const db = (name: string) => `outbound|9000||${name}.svc.svc.cluster.local`;
  const both = compileWith(tcpRoute('svc', 'db', 'db-v1'), tcpRoute('client', 'db-override', 'db-v2'));
  assert.equal(tcpCluster(both, 'client'), db('db-v2'));
  assert.equal(tcpCluster(both, 'svc'), db('db-v1'));
  // No creationTimestamps: `client~…` sorts before `svc~…` by name, istiod's tie-break of its oldest-first order.
  assert.equal(tcpCluster(both, 'other'), db('db-v2'));
  const consumerOnly = compileWith(tcpRoute('client', 'db-override', 'db-v2'));
  for (const ns of ['client', 'svc', 'other']) assert.equal(tcpCluster(consumerOnly, ns), db('db-v2'), ns);
});

test('endpoint churn with a consumer route: every change a delta, each result equals a full compile', () => {
  const mesh = generateMesh({ services: 200, seed: 7 }).docs;
  const svc = (mesh.map((d) => d.object) as { kind?: string; metadata?: { name: string; namespace: string } }[]).find(
    (o) => o.kind === 'Service' && o.metadata?.namespace === 'ns-0',
  )?.metadata?.name;
  assert.ok(svc);
  const route = `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: override, namespace: ns-1}
spec:
  parentRefs: [{group: "", kind: Service, name: ${svc}, namespace: ns-0}]
  rules: [{backendRefs: [{name: ${svc}, namespace: ns-0, port: 8080}], timeouts: {request: 3s}}]`;
  const extra = parseDocuments(route, 'route.yaml').docs;
  assertChurnMatchesFull(indexedInputs(buildInputSet([...mesh, ...extra])), 13, 30, (output) =>
    assert.ok([...output.groups.keys()].some((id) => id.startsWith('scope/ns-1'))),
  );
});
