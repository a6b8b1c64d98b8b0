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
