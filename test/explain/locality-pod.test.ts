/**
 * `meshsnap explain --pod` answers as the pod's proxy is served: the pod announces its Kubernetes
 * Node (NODE_NAME, as istio-agent does), so it gets its locality's EDS variant, whose endpoints in
 * its own zone come first (priority 0) and the other zone's after (priority 1).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BIN } from '../helpers/paths.js';

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-locality-explain-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const STORE = join(tmp, 'store');

function bin(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 90_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const node = (zone: string) => `apiVersion: v1
kind: Node
metadata: { name: node-${zone}, labels: { topology.kubernetes.io/region: r1, topology.kubernetes.io/zone: ${zone} } }
`;
const pod = (name: string, app: string, ip: string, zone: string) => `apiVersion: v1
kind: Pod
metadata: { name: ${name}, namespace: shop, labels: { app: ${app} } }
spec: { nodeName: node-${zone} }
status: { podIP: ${ip}, conditions: [{ type: Ready, status: "True" }] }
`;
const MESH = [
  `apiVersion: v1
kind: Service
metadata: { name: reviews, namespace: shop }
spec: { clusterIP: 10.96.0.9, selector: { app: reviews }, ports: [{ name: http, port: 9080 }] }
`,
  `apiVersion: v1
kind: Service
metadata: { name: web, namespace: shop }
spec: { clusterIP: 10.96.0.8, selector: { app: web }, ports: [{ name: http, port: 8080 }] }
`,
  `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: reviews-1, namespace: shop, labels: { kubernetes.io/service-name: reviews } }
addressType: IPv4
ports: [{ name: http, port: 9080 }]
endpoints:
- { addresses: [10.0.0.1], nodeName: node-z1, targetRef: { kind: Pod, name: reviews-1 } }
- { addresses: [10.0.0.2], nodeName: node-z2, targetRef: { kind: Pod, name: reviews-2 } }
`,
  `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: { name: reviews, namespace: shop }
spec: { host: reviews.shop.svc.cluster.local, trafficPolicy: { outlierDetection: { consecutive5xxErrors: 3 } } }
`,
  node('z1'),
  node('z2'),
  pod('reviews-1', 'reviews', '10.0.0.1', 'z1'),
  pod('reviews-2', 'reviews', '10.0.0.2', 'z2'),
  pod('web-1', 'web', '10.0.1.1', 'z2'),
].join('---\n');

test('explain --pod: the pod is placed by its Node in its locality, and its zone comes first', () => {
  const file = join(tmp, 'mesh.yaml');
  writeFileSync(file, MESH);
  const compiled = bin('compile', file, '--store', STORE, '--quiet');
  assert.equal(compiled.code, 0, compiled.stderr);
  const r = bin('explain', '--pod', 'shop/web-1', '--to', 'reviews.shop.svc.cluster.local:9080', '--store', STORE);
  assert.equal(r.code, 0, r.stderr);
  const answer = JSON.parse(r.stdout) as {
    node: { id: string; metadata?: Record<string, unknown> };
    class?: string;
    clusters: { name: string; endpoints: { address: string; locality?: string; priority?: number }[] }[];
  };
  const reviews = answer.clusters.find((c) => c.name === 'outbound|9080||reviews.shop.svc.cluster.local');
  assert.ok(reviews, r.stdout);
  assert.deepEqual(
    reviews.endpoints.map((e) => [e.address, e.locality, e.priority ?? 0]),
    [
      ['10.0.0.1', 'r1/z1', 1],
      ['10.0.0.2', 'r1/z2', 0],
    ],
  );
  const text = bin(
    'explain',
    '--pod',
    'shop/web-1',
    '--to',
    'reviews.shop.svc.cluster.local:9080',
    '--text',
    '--store',
    STORE,
  );
  assert.match(text.stderr, /proxy class sidecar\/shop\/web@r1\/z2\//);
  assert.match(text.stdout, /10\.0\.0\.1:9080 r1\/z1 HEALTHY priority 1\n/);
  assert.match(text.stdout, /10\.0\.0\.2:9080 r1\/z2 HEALTHY\n/);
});
