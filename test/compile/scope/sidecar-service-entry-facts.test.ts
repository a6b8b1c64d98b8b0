/**
 * Sidecar egress hosts naming ServiceEntry hosts, as istiod's SidecarScope selects them
 * (pilot/pkg/model/sidecar.go selectServices; sidecar_test.go TestSelectServices' wildcard-host
 * cases and TestContainsEgressDependencies' ServiceEntry rows), with REGISTRY_ONLY from the Sidecar:
 * a visible entry host gets its clusters and virtual host, a hidden one meets BlackHoleCluster (or
 * the block_all virtual host), walked through the served config with `explain`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explain, type ExplainRequest, type ProxyResources } from '../../../src/explain/index.js';
import { compileMesh, proxy, sidecar, view } from './scope-mesh.js';

const entry = (ns: string, name: string, host: string): string => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ${name}, namespace: ${ns}}
spec:
  hosts: ["${host}"]
  location: MESH_EXTERNAL
  resolution: DNS
  ports: [{number: 80, name: http, protocol: HTTP}, {number: 443, name: https, protocol: HTTPS}]`;

const ENTRIES = [
  entry('egress', 'api', 'api.example.com'),
  entry('egress', 'other', 'other.example.com'),
  entry('egress', 'wild', '*.wildcard.com'),
];
const registryOnly = (hosts: string): string =>
  sidecar('default', `{egress: [{hosts: ${hosts}}], outboundTrafficPolicy: {mode: REGISTRY_ONLY}}`);

const hostsSeen = (clusters: readonly string[]): string[] =>
  [
    ...new Set(
      clusters.filter((c) => c.includes('example.com') || c.includes('wildcard')).map((c) => c.split('|')[3] ?? ''),
    ),
  ].sort();

function https(r: ProxyResources, host: string): string[] {
  const req: ExplainRequest = {
    direction: 'outbound',
    host,
    port: 443,
    destinationIp: '203.0.113.7',
    protocol: 'http/1.1',
    tls: true,
    sni: host,
    alpn: ['http/1.1'],
    method: 'GET',
    path: '/',
    headers: { host },
  };
  return explain(r, req).clusters.map((c) => c.name);
}

test('egress host ns/api.example.com: that entry host is visible, the others are not', () => {
  const v = view(compileMesh(...ENTRIES, registryOnly('["./*", "egress/api.example.com"]')), proxy('default'));
  assert.deepEqual(hostsSeen(v.clusters), ['api.example.com']);
  assert.equal(v.routes['80']?.['api.example.com:80'], 'outbound|80||api.example.com');
  assert.equal(v.routes['80']?.['other.example.com:80'], undefined);
  assert.deepEqual(https(v.resources, 'api.example.com'), ['outbound|443||api.example.com']);
  assert.deepEqual(https(v.resources, 'other.example.com'), ['BlackHoleCluster']);
});

test('without a Sidecar every exported entry host is visible', () => {
  const v = view(compileMesh(...ENTRIES), proxy('default'));
  assert.deepEqual(hostsSeen(v.clusters), ['*.wildcard.com', 'api.example.com', 'other.example.com']);
  assert.deepEqual(https(v.resources, 'other.example.com'), ['outbound|443||other.example.com']);
});

test('a wildcard egress host selects the entry hosts it matches, and a wildcard entry host by its own name', () => {
  const v = view(
    compileMesh(...ENTRIES, registryOnly('["./*", "egress/*.example.com", "egress/*.wildcard.com"]')),
    proxy('default'),
  );
  assert.deepEqual(hostsSeen(v.clusters), ['*.wildcard.com', 'api.example.com', 'other.example.com']);
});

test('an egress host of another namespace does not select the entry (TestContainsEgressDependencies "Wrong Namespace")', () => {
  const v = view(compileMesh(...ENTRIES, registryOnly('["./*", "other-ns/*"]')), proxy('default'));
  assert.deepEqual(hostsSeen(v.clusters), []);
  assert.deepEqual(https(v.resources, 'api.example.com'), ['BlackHoleCluster']);
});

test('a workload-selected Sidecar applies to a VM (WorkloadEntry) an entry selects: its class keys on both', () => {
  const vmMesh = compileMesh(
    ...ENTRIES,
    `apiVersion: networking.istio.io/v1
kind: WorkloadEntry
metadata: {name: db-vm, namespace: default, labels: {app: db}}
spec: {address: 10.0.0.70, serviceAccount: db}`,
    `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: db, namespace: default}
spec:
  hosts: [db.vm.example]
  location: MESH_INTERNAL
  resolution: STATIC
  ports: [{number: 5432, name: tcp, protocol: TCP}]
  workloadSelector: {labels: {app: db}}`,
    `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: db, namespace: default}
spec:
  workloadSelector: {labels: {app: db}}
  egress: [{hosts: ["./*", "egress/api.example.com"]}]
  outboundTrafficPolicy: {mode: REGISTRY_ONLY}`,
  );
  const vm = view(vmMesh, {
    id: 'sidecar~10.0.0.70~db-vm.default~default.svc.cluster.local',
    metadata: { NAMESPACE: 'default', LABELS: { app: 'db' } },
  });
  assert.equal(vm.classId, 'sidecar/default/db.vm.example/sidecar:default/db');
  assert.ok(vm.resources.clusters.has('inbound|5432||'));
  assert.deepEqual(hostsSeen(vm.clusters), ['api.example.com']);
  const other = view(vmMesh, proxy('default'));
  assert.equal(other.classId, 'sidecar/default/_');
  assert.deepEqual(hostsSeen(other.clusters), ['*.wildcard.com', 'api.example.com', 'other.example.com']);
});
