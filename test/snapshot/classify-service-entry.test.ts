/**
 * Placement of proxies that ServiceEntries select (workloadSelector over Pods and WorkloadEntries),
 * through the relay's classifier on a compiled snapshot, and the inbound config they are served.
 * Facts after istiod's serviceentry controller (GetProxyServiceTargets: the workloads an entry
 * selects serve its ports) and TestPeerAuthenticationWithSidecar "service, no sidecar" (the entry's
 * workload selected by labels here, not by an inline endpoint's IP).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explain, type ProxyResources } from '../../src/explain/index.js';
import { compileTexts } from '../../src/pipeline.js';
import { classServiceName } from '../../src/proxy-class/class-id.js';
import { classifyNode } from '../../src/snapshot/classify.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { served } from '../helpers/mesh.js';

const POD = (name: string, ip: string, labels: string) => `apiVersion: v1
kind: Pod
metadata: { name: ${name}, namespace: ns1, labels: ${labels} }
spec: { serviceAccountName: ${name}, containers: [{ name: app, image: x }] }
status: { phase: Running, podIP: ${ip}, podIPs: [{ ip: ${ip} }], conditions: [{ type: Ready, status: "True" }] }`;
const ENTRY = (name: string, host: string, selector: string, ports: string) => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: ${name}, namespace: ns1 }
spec:
  hosts: [${host}]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: ${ports}
  workloadSelector: { labels: ${selector} }`;
const SERVICE = (name: string, selector: string) => `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: ns1 }
spec: { clusterIP: 10.96.0.${name.length}, selector: ${selector}, ports: [{ name: http, port: 80, targetPort: 8000 }] }`;
const VM = `apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: { name: db-vm-1, namespace: ns1, labels: { app: db } }
spec: { address: 10.0.0.50, serviceAccount: db, labels: { version: v1 } }`;
/** istiod's pa: STRICT for app=foo, port 9090 DISABLE. */
const PEER_AUTHN = `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: { name: default, namespace: ns1 }
spec:
  selector: { matchLabels: { app: foo } }
  mtls: { mode: STRICT }
  portLevelMtls: { 9090: { mode: DISABLE } }`;

const MESH = [
  POD('foo-1', '10.244.1.1', '{ app: foo }'),
  POD('both-1', '10.244.1.2', '{ app: both }'),
  POD('web-1', '10.244.1.3', '{ app: web }'),
  ENTRY(
    'foo',
    'foo.bar',
    '{ app: foo }',
    '[{ name: tls, number: 8080, protocol: TCP }, { name: plaintext, number: 9090, protocol: TCP }]',
  ),
  ENTRY('api', 'api.example.com', '{ app: both }', '[{ name: http, number: 7070, protocol: HTTP }]'),
  ENTRY('db', 'db.vm.example', '{ app: db }', '[{ name: mysql, number: 3306, protocol: TCP }]'),
  // A short entry host spelled like a Service's name: its class name must not read as the Service.
  ENTRY('short', 'web', '{ app: short }', '[{ name: tcp, number: 6060, protocol: TCP }]'),
  SERVICE('web', '{ app: web }'),
  SERVICE('both', '{ app: both }'),
  VM,
  PEER_AUTHN,
].join('\n---\n');

const result = compileTexts([{ file: 'se.yaml', text: MESH }], { hasher: nodeSha256Hex });
const { content } = result.snapshot;
const node = (name: string, ip: string, labels: Record<string, string>) => ({
  id: `sidecar~${ip}~${name}.ns1~ns1.svc.cluster.local`,
  metadata: { NAMESPACE: 'ns1', LABELS: labels, INSTANCE_IPS: ip },
});
const classOf = (n: ReturnType<typeof node>): string => {
  const c = classifyNode(content, n);
  return c.ok ? c.classId : `ERR ${c.reason}`;
};
const inboundClusters = (r: ProxyResources): string[] =>
  [...r.clusters.keys()].filter((name) => name.startsWith('inbound|')).sort();

test('the compile reports no errors for the mesh', () => {
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
});

test('a pod a ServiceEntry selects is placed in the class named by the entry host', () => {
  assert.equal(classOf(node('foo-1', '10.244.1.1', { app: 'foo' })), 'sidecar/ns1/foo.bar/peer:ns1/default');
  const { classId, resources } = served(result, node('foo-1', '10.244.1.1', { app: 'foo' }));
  assert.equal(classId, 'sidecar/ns1/foo.bar/peer:ns1/default');
  assert.deepEqual(inboundClusters(resources), ['inbound|8080||', 'inbound|9090||']);
});

test('a pod the compile did not see, with labels an entry selects, gets the entry class', () => {
  assert.equal(classOf(node('api-9', '10.244.1.9', { app: 'both', extra: 'x' })), 'sidecar/ns1/api.example.com,both');
});

test('a pod selected by a ServiceEntry and a Service gets both, in hostname order', () => {
  const { classId, resources } = served(result, node('both-1', '10.244.1.2', { app: 'both' }));
  assert.equal(classId, 'sidecar/ns1/api.example.com,both');
  assert.deepEqual(inboundClusters(resources), ['inbound|7070||', 'inbound|8000||']);
});

test('a VM (WorkloadEntry) sidecar is placed by its labels in the class of the entry selecting it', () => {
  // The VM connects with its WorkloadEntry's labels (metadata merged over spec, as istiod).
  const vm = node('db-vm-1', '10.0.0.50', { app: 'db', version: 'v1' });
  assert.equal(classOf(vm), 'sidecar/ns1/db.vm.example');
  assert.deepEqual(inboundClusters(served(result, vm).resources), ['inbound|3306||']);
  assert.ok(
    content.classes.some((c) => c.id === 'sidecar/ns1/db.vm.example'),
    'the compile makes a class for the WorkloadEntry',
  );
});

test('Kubernetes-only classes keep their ids; a short entry host never reads as a Service name', () => {
  assert.equal(classOf(node('web-1', '10.244.1.3', { app: 'web' })), 'sidecar/ns1/web');
  assert.equal(classOf(node('short-1', '10.244.1.4', { app: 'short' })), 'sidecar/ns1/web.');
  assert.equal(classOf(node('none-1', '10.244.1.5', { app: 'none' })), 'sidecar/ns1/_');
  const ids = content.classes.map((c) => c.id);
  assert.equal(new Set(ids).size, ids.length);
  const webClass = content.classes.find((c) => c.id === 'sidecar/ns1/web');
  const shortClass = content.classes.find((c) => c.id === 'sidecar/ns1/web.');
  assert.deepEqual(webClass?.services, ['web.ns1.svc.cluster.local']);
  assert.deepEqual(shortClass?.services, ['web']);
});

test('class names: a Service by its name, an entry host as written, a dotless entry host with a trailing dot', () => {
  assert.equal(classServiceName('reviews.default.svc.cluster.local', false), 'reviews');
  assert.equal(classServiceName('api.example.com', true), 'api.example.com');
  assert.equal(classServiceName('*.wikipedia.org', true), '*.wikipedia.org');
  // An entry host in the cluster domain stays whole: it never collides with the Service `reviews`.
  assert.equal(classServiceName('reviews.default.svc.cluster.local', true), 'reviews.default.svc.cluster.local');
  assert.equal(classServiceName('reviews', true), 'reviews.');
});

test('entry selectors carry the ServiceEntry flag; Service selectors do not', () => {
  const bySelector = (hostname: string) => content.selectors.find((s) => s.hostname === hostname);
  assert.equal(bySelector('foo.bar')?.serviceEntry, true);
  assert.equal(bySelector('web.ns1.svc.cluster.local')?.serviceEntry, undefined);
});

/** istiod's TestPeerAuthenticationWithSidecar, "service, no sidecar": calls into the entry's workload. */
test('peer authentication on an entry-selected workload: STRICT 8080, DISABLE 9090', () => {
  const r = served(result, node('foo-1', '10.244.1.1', { app: 'foo' })).resources;
  const call = (port: number, tls: boolean) =>
    explain(r, {
      direction: 'inbound',
      host: '10.244.1.1',
      port,
      destinationIp: '10.244.1.1',
      protocol: 'tcp',
      tls,
      ...(tls ? { alpn: ['istio-peer-exchange', 'istio'] } : {}),
      method: 'GET',
      path: '/',
      headers: {},
    });
  assert.equal(call(8080, false).outcome, 'no_filter_chain', 'plaintext on tls port');
  assert.deepEqual(
    call(8080, true).clusters.map((c) => c.name),
    ['inbound|8080||'],
    'tls on tls port',
  );
  assert.deepEqual(
    call(9090, false).clusters.map((c) => c.name),
    ['inbound|9090||'],
    'plaintext on plaintext port',
  );
  assert.deepEqual(
    call(9090, true).clusters.map((c) => c.name),
    ['inbound|9090||'],
    'tls on plaintext port',
  );
});
