/**
 * Per-proxy locality priorities from YAML to what a node is served: an assignment whose
 * DestinationRule turns failover on (outlier detection, Istio's default mesh localityLbSetting)
 * gets a variant per locality of the mesh, and a proxy is served its own locality's, found from
 * the Envoy node's locality, its istio-locality label or its NODE_NAME (istiod's proxy locality).
 */
import { nodeYaml, podYaml } from '../helpers/node-fixtures.js';
import { eastWestGatewayNode, eastWestGatewayYaml } from '../helpers/gateway-sim.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileTexts } from '../../src/pipeline.js';
import { classifyNode, resourcesForClass } from '../../src/snapshot/classify.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { resourceToJson } from '../../src/xds/json.js';
import { XDS_TYPE_NAME } from '../../src/xds/type-urls.js';
import { served } from '../helpers/mesh.js';

const node = (name: string, region: string, zone: string): string => nodeYaml(name, { region, zone });
const pod = podYaml;

function mesh(trafficPolicy: string, reviewsSpec = ''): string {
  return `apiVersion: v1
kind: Service
metadata: { name: reviews, namespace: shop }
spec: { selector: { app: reviews }, ports: [{ name: http, port: 9080 }]${reviewsSpec} }
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: shop }
spec: { selector: { app: web }, ports: [{ name: http, port: 8080 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: reviews-1, namespace: shop, labels: { kubernetes.io/service-name: reviews } }
addressType: IPv4
ports: [{ name: http, port: 9080 }]
endpoints:
- { addresses: [10.0.0.1], nodeName: a1, targetRef: { kind: Pod, name: reviews-a } }
- { addresses: [10.0.0.2], nodeName: b1, targetRef: { kind: Pod, name: reviews-b } }
- { addresses: [10.0.0.3], nodeName: c1, targetRef: { kind: Pod, name: reviews-c } }
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: { name: reviews, namespace: shop }
spec:
  host: reviews.shop.svc.cluster.local
  trafficPolicy: ${trafficPolicy}
${node('a1', 'r1', 'a')}${node('b1', 'r1', 'b')}${node('c1', 'r2', 'c')}${pod('reviews-a', '10.0.0.1', 'a1', 'reviews')}${pod('reviews-b', '10.0.0.2', 'b1', 'reviews')}${pod('reviews-c', '10.0.0.3', 'c1', 'reviews')}${pod('web-a', '10.0.1.1', 'a1', 'web')}`;
}

const compileMesh = (trafficPolicy: string, reviewsSpec = '', extra = '') =>
  compileTexts([{ file: 'mesh.yaml', text: mesh(trafficPolicy, reviewsSpec) + extra }], { hasher: nodeSha256Hex });

const WEB = 'sidecar~10.0.1.1~web-a.shop~shop.svc.cluster.local';
const CLUSTER = 'outbound|9080||reviews.shop.svc.cluster.local';

interface Served {
  readonly endpoints?: {
    readonly locality?: { readonly region?: string; readonly zone?: string };
    readonly priority?: number;
    readonly load_balancing_weight?: number;
    readonly lb_endpoints?: readonly unknown[];
  }[];
}

/** The class a node is placed in and the assignment it is served. */
function servedAssignment(
  result: ReturnType<typeof compileMesh>,
  metadata: Record<string, unknown>,
  locality?: { region: string; zone: string; subZone: string },
): { classId: string; cla: Served } {
  const { content, objects } = result.snapshot;
  const placed = classifyNode(content, { id: WEB, metadata, ...(locality ? { locality } : {}) });
  assert.ok(placed.ok, placed.ok ? '' : placed.reason);
  const digest = resourcesForClass(content, placed.classId)?.endpoints.get(CLUSTER);
  assert.ok(digest, `${placed.classId} gets ${CLUSTER}`);
  const cla = resourceToJson(XDS_TYPE_NAME.endpoints, objects.get(digest) as Uint8Array) as Served;
  return { classId: placed.classId, cla };
}

/** The served assignment's localities as `region/zone → priority`. */
function priorities(
  result: ReturnType<typeof compileMesh>,
  metadata: Record<string, unknown>,
  locality?: { region: string; zone: string; subZone: string },
): { classId: string; priorities: Record<string, number> } {
  const { classId, cla } = servedAssignment(result, metadata, locality);
  const out: Record<string, number> = {};
  for (const l of cla.endpoints ?? []) out[`${l.locality?.region}/${l.locality?.zone}`] = l.priority ?? 0;
  return { classId, priorities: out };
}

test('outlier detection turns failover on: a proxy in zone r1/a is served r1/a first, r1/b next, r2 last', () => {
  const result = compileMesh('{ outlierDetection: { consecutive5xxErrors: 3 } }');
  assert.deepEqual(result.diagnostics, []);
  // By NODE_NAME (istio-agent on a plain Kubernetes cluster sends no locality).
  const byNode = priorities(result, { NAMESPACE: 'shop', LABELS: { app: 'web' }, NODE_NAME: 'a1' });
  assert.equal(byNode.classId, 'sidecar/shop/web@r1/a/');
  assert.deepEqual(byNode.priorities, { 'r1/a': 0, 'r1/b': 1, 'r2/c': 2 });
  // The Envoy node's own locality wins over NODE_NAME.
  const byEnvoy = priorities(
    result,
    { NAMESPACE: 'shop', LABELS: { app: 'web' }, NODE_NAME: 'a1' },
    { region: 'r2', zone: 'c', subZone: '' },
  );
  assert.equal(byEnvoy.classId, 'sidecar/shop/web@r2/c/');
  assert.deepEqual(byEnvoy.priorities, { 'r1/a': 1, 'r1/b': 1, 'r2/c': 0 });
  // The istio-locality label (region.zone.subzone) when the node says none.
  const byLabel = priorities(result, { NAMESPACE: 'shop', LABELS: { app: 'web', 'istio-locality': 'r1.b' } });
  assert.equal(byLabel.classId, 'sidecar/shop/web@r1/b/');
  assert.deepEqual(byLabel.priorities, { 'r1/a': 1, 'r1/b': 0, 'r2/c': 2 });
  // A proxy of no known locality: istiod's result for an empty locality (every region differs: one priority).
  const unknown = priorities(result, { NAMESPACE: 'shop', LABELS: { app: 'web' }, NODE_NAME: 'elsewhere' });
  assert.equal(unknown.classId, 'sidecar/shop/web');
  assert.deepEqual(unknown.priorities, { 'r1/a': 0, 'r1/b': 0, 'r2/c': 0 });
});

test('failover from/to: another region than the named one drops below it', () => {
  const result = compileMesh(
    '{ outlierDetection: { consecutive5xxErrors: 3 }, loadBalancer: { localityLbSetting: { enabled: true, failover: [{ from: r2, to: r1 }] } } }',
  );
  const p = priorities(result, { NAMESPACE: 'shop', LABELS: { app: 'web' }, NODE_NAME: 'c1' });
  assert.deepEqual(p.priorities, { 'r1/a': 1, 'r1/b': 1, 'r2/c': 0 });
});

test('distribute: the weights of the rule whose from matches the proxy; localities no rule names are emptied', () => {
  const result = compileMesh(
    "{ loadBalancer: { localityLbSetting: { enabled: true, distribute: [{ from: 'r1/a/*', to: { 'r1/a/*': 80, 'r1/b/*': 20 } }] } } }",
  );
  const { classId, cla: json } = servedAssignment(result, {
    NAMESPACE: 'shop',
    LABELS: { app: 'web' },
    NODE_NAME: 'a1',
  });
  assert.equal(classId, 'sidecar/shop/web@r1/a/');
  assert.deepEqual(
    (json.endpoints ?? []).map((l) => [l.locality?.zone, l.load_balancing_weight, (l.lb_endpoints ?? []).length]),
    [
      ['a', 80, 1],
      ['b', 20, 1],
      ['c', 1, 0],
    ],
  );
});

test('without outlier detection nothing depends on the proxy: one assignment, no locality groups or classes', () => {
  const result = compileMesh('{ connectionPool: { tcp: { maxConnections: 10 } } }');
  const { content } = result.snapshot;
  assert.ok(content.groups.endpoints?.endpoints[CLUSTER]);
  assert.deepEqual(
    Object.keys(content.groups).filter((g) => g.includes('@')),
    [],
  );
  assert.ok(content.selectors.every((s) => s.node === undefined));
  const placed = classifyNode(content, {
    id: WEB,
    metadata: { NAMESPACE: 'shop', LABELS: { app: 'web' }, NODE_NAME: 'a1' },
  });
  assert.ok(placed.ok);
  assert.equal(placed.classId, 'sidecar/shop/web');
});

test('trafficDistribution PreferClose: same zone first without outlier detection, unhealthy endpoints sent for spill-over', () => {
  const unhealthy = `---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: reviews-2, namespace: shop, labels: { kubernetes.io/service-name: reviews } }
addressType: IPv4
ports: [{ name: http, port: 9080 }]
endpoints:
- { addresses: [10.0.0.4], nodeName: a1, conditions: { ready: false } }
`;
  const result = compileMesh(
    '{ connectionPool: { tcp: { maxConnections: 10 } } }',
    ', trafficDistribution: PreferClose',
    unhealthy,
  );
  assert.deepEqual(result.diagnostics, []);
  const metadata = { NAMESPACE: 'shop', LABELS: { app: 'web' }, NODE_NAME: 'b1' };
  const p = priorities(result, metadata);
  assert.equal(p.classId, 'sidecar/shop/web@r1/b/');
  // istiod's failoverPriority [network, region, zone]: same zone 0, same region 1, other region 2.
  assert.deepEqual(p.priorities, { 'r1/a': 1, 'r1/b': 0, 'r2/c': 2 });
  // istiod's ApplyToCluster: forced failover with failoverPriority weights localities.
  const cluster = served(result, { id: WEB, metadata }).resources.clusters.get(CLUSTER) as {
    common_lb_config?: { locality_weighted_lb_config?: object };
  };
  assert.deepEqual(cluster.common_lb_config?.locality_weighted_lb_config, {});
  const zoneA = servedAssignment(result, metadata).cla.endpoints?.find((l) => l.locality?.zone === 'a');
  assert.deepEqual(
    (zoneA?.lb_endpoints as { health_status?: string }[]).map((e) => e.health_status),
    ['HEALTHY', 'UNHEALTHY'],
  );
});

test('the traffic-distribution annotation of the namespace applies as the field does; the field wins', () => {
  const ns = (value: string) => `---
apiVersion: v1
kind: Namespace
metadata: { name: shop, annotations: { networking.istio.io/traffic-distribution: ${value} } }
`;
  const metadata = { NAMESPACE: 'shop', LABELS: { app: 'web' }, NODE_NAME: 'b1' };
  const byNamespace = compileMesh('{ connectionPool: { tcp: { maxConnections: 10 } } }', '', ns('PreferClose'));
  assert.deepEqual(priorities(byNamespace, metadata).priorities, { 'r1/a': 1, 'r1/b': 0, 'r2/c': 2 });
  // An unknown annotation value is "any": no variants.
  const unknown = compileMesh('{ connectionPool: { tcp: { maxConnections: 10 } } }', '', ns('Nearby'));
  assert.equal(priorities(unknown, metadata).classId, 'sidecar/shop/web');
});

test("a DNS ServiceEntry's inline endpoints get the proxy's locality priorities too (istiod's ApplyToCluster)", () => {
  const entry = `---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: ext, namespace: shop }
spec:
  hosts: [api.example.com]
  location: MESH_EXTERNAL
  resolution: DNS
  ports: [{ number: 443, name: tls, protocol: TLS }]
  endpoints:
  - { address: a.example.com, locality: r1/a }
  - { address: b.example.com, locality: r1/b }
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: { name: ext, namespace: shop }
spec: { host: api.example.com, trafficPolicy: { outlierDetection: { consecutive5xxErrors: 3 } } }
`;
  const result = compileMesh('{ connectionPool: { tcp: { maxConnections: 10 } } }', '', entry);
  assert.deepEqual(result.diagnostics, []);
  const byZone = (nodeName: string) => {
    const { classId, resources } = served(result, {
      id: WEB,
      metadata: { NAMESPACE: 'shop', LABELS: { app: 'web' }, NODE_NAME: nodeName },
    });
    const cluster = resources.clusters.get('outbound|443||api.example.com') as {
      load_assignment?: { endpoints?: { locality?: { zone?: string }; priority?: number }[] };
    };
    return {
      classId,
      priorities: Object.fromEntries(
        (cluster.load_assignment?.endpoints ?? []).map((l) => [l.locality?.zone, l.priority ?? 0]),
      ),
    };
  };
  assert.deepEqual(byZone('a1'), { classId: 'sidecar/shop/web@r1/a/', priorities: { a: 0, b: 1 } });
  assert.deepEqual(byZone('b1'), { classId: 'sidecar/shop/web@r1/b/', priorities: { a: 1, b: 0 } });
  // A proxy of no known locality: every endpoint is in another region than its empty one.
  assert.deepEqual(byZone('nowhere').priorities, { a: 0, b: 0 });
});

test('proxies whose localities rank the endpoints alike get the same assignment (one digest)', () => {
  // r2/d has no endpoint: its proxies rank r2/c first, then r1/a and r1/b, as r2/c's do.
  const result = compileMesh('{ outlierDetection: { consecutive5xxErrors: 3 } }', '', node('d1', 'r2', 'd'));
  const c = servedAssignment(result, { NAMESPACE: 'shop', LABELS: { app: 'web' }, NODE_NAME: 'c1' });
  const d = servedAssignment(result, { NAMESPACE: 'shop', LABELS: { app: 'web' }, NODE_NAME: 'd1' });
  assert.equal(d.classId, 'sidecar/shop/web@r2/d/');
  assert.deepEqual(d.cla, c.cla);
  const { content } = result.snapshot;
  assert.equal(
    content.groups['endpoints@r2/d/']?.endpoints[CLUSTER],
    content.groups['endpoints@r2/c/']?.endpoints[CLUSTER],
  );
});

test("a gateway's AUTO_PASSTHROUGH (SNI-DNAT) assignments follow the gateway's locality too", () => {
  const gateway = eastWestGatewayYaml('b1', '*.shop.svc.cluster.local');
  const result = compileMesh('{ outlierDetection: { consecutive5xxErrors: 3 } }', '', gateway);
  assert.deepEqual(result.diagnostics, []);
  const { classId, resources } = served(result, eastWestGatewayNode('b1'));
  assert.match(classId, /@r1\/b\/$/);
  const cla = resources.endpoints.get('outbound_.9080_._.reviews.shop.svc.cluster.local') as Served;
  const priorities = Object.fromEntries(
    (cla.endpoints ?? []).map((l) => [`${l.locality?.region}/${l.locality?.zone}`, l.priority ?? 0]),
  );
  assert.deepEqual(priorities, { 'r1/a': 1, 'r1/b': 0, 'r2/c': 2 });
});

test('a Node topology label that is not a label value is reported and left out of its locality (it names groups and classes)', () => {
  const result = compileMesh('{ outlierDetection: { consecutive5xxErrors: 3 } }', '', node('bad1', 'r1', 'z@1#x'));
  assert.deepEqual(
    result.diagnostics.map((d) => [d.severity, d.code, d.kind, d.name, d.field]),
    [['warning', 'invalid-field', 'Node', 'bad1', 'metadata.labels.topology.kubernetes.io/zone']],
  );
  const groups = Object.keys(result.snapshot.content.groups).filter((g) => g.startsWith('endpoints@'));
  assert.ok(groups.includes('endpoints@r1//'), groups.join(' '));
  assert.ok(
    groups.every((g) => !/[#]|@.*@/.test(g)),
    groups.join(' '),
  );
});
