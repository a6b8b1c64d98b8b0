/**
 * Services with traffic distribution `PreferSameNode`, from YAML to what a proxy is served. istiod
 * (GetEffectiveLbSetting) forces failoverPriority [topology.istio.io/network,
 * topology.kubernetes.io/region, topology.kubernetes.io/zone, topology.istio.io/subzone,
 * kubernetes.io/hostname] where the DestinationRule sets no locality settings, with the proxy's
 * `kubernetes.io/hostname` its NODE_NAME and an endpoint's its pod's `spec.nodeName`
 * (AugmentLabels): an endpoint's priority is 5 minus the number of leading labels it shares with
 * the proxy, priorities renumbered without gaps. meshsnap serves each node its own variant.
 */
import { nodeYaml, podYaml } from '../helpers/node-fixtures.js';
import { eastWestGatewayNode, eastWestGatewayYaml } from '../helpers/gateway-sim.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile } from '../../src/compile/index.js';
import { applyCompileDelta, IncrementalCompiler, withReplaced } from '../../src/compile/incremental.js';
import { buildInputSet, parseDocuments } from '../../src/inputs/index.js';
import { compileTexts } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { served } from '../helpers/mesh.js';
import { assertSameOutput, nodeChurnDeltas } from './incremental-helpers.js';

const node = (name: string, zone: string): string => nodeYaml(name, { region: 'r1', zone });
const pod = podYaml;

/**
 * `reviews` (PreferSameNode) with pods on a1 and a2 (zone r1/a) and b1 (zone r1/b), and an
 * endpoint without a pod (no node, no locality); `web` clients on a1 and a2. a3 (zone r1/a) runs
 * none of reviews' pods.
 */
function mesh(distribution = 'PreferSameNode', rule = ''): string {
  return `apiVersion: v1
kind: Service
metadata: { name: reviews, namespace: shop }
spec: { selector: { app: reviews }, trafficDistribution: ${distribution}, ports: [{ name: http, port: 9080 }] }
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
- { addresses: [10.0.0.1], nodeName: a1, targetRef: { kind: Pod, name: reviews-a1 } }
- { addresses: [10.0.0.2], nodeName: a2, targetRef: { kind: Pod, name: reviews-a2 } }
- { addresses: [10.0.0.3], nodeName: b1, targetRef: { kind: Pod, name: reviews-b1 } }
- { addresses: [10.0.0.9] }
${rule}${node('a1', 'a')}${node('a2', 'a')}${node('a3', 'a')}${node('b1', 'b')}${pod('reviews-a1', '10.0.0.1', 'a1', 'reviews')}${pod('reviews-a2', '10.0.0.2', 'a2', 'reviews')}${pod('reviews-b1', '10.0.0.3', 'b1', 'reviews')}${pod('web-a1', '10.0.1.1', 'a1', 'web')}${pod('web-a2', '10.0.1.2', 'a2', 'web')}`;
}

const compileMesh = (text: string) => compileTexts([{ file: 'mesh.yaml', text }], { hasher: nodeSha256Hex });

const WEB = 'sidecar~10.0.1.1~web-a1.shop~shop.svc.cluster.local';
const REVIEWS = 'outbound|9080||reviews.shop.svc.cluster.local';

interface Served {
  readonly endpoints?: readonly {
    readonly locality?: { readonly region?: string; readonly zone?: string };
    readonly priority?: number;
    readonly load_balancing_weight?: number;
    readonly lb_endpoints?: readonly { endpoint?: { address?: { socket_address?: { address?: string } } } }[];
  }[];
}

const web = (NODE_NAME?: string) => ({
  NAMESPACE: 'shop',
  LABELS: { app: 'web' },
  ...(NODE_NAME !== undefined ? { NODE_NAME } : {}),
});

/** The class a proxy is placed in, and each served endpoint's priority by address. */
function priorities(
  result: ReturnType<typeof compileMesh>,
  proxy: { id: string; metadata: Record<string, unknown> },
  cluster = REVIEWS,
): { classId: string; priorities: Record<string, number> } {
  const { classId, resources } = served(result, proxy);
  const cla = resources.endpoints.get(cluster) as Served | undefined;
  assert.ok(cla, `${classId} gets ${cluster}`);
  const out: Record<string, number> = {};
  for (const l of cla.endpoints ?? [])
    for (const e of l.lb_endpoints ?? []) out[e.endpoint?.address?.socket_address?.address ?? '?'] = l.priority ?? 0;
  return { classId, priorities: out };
}

const onNode = (name?: string) => ({ id: WEB, metadata: web(name) });

test('PreferSameNode: a proxy is served its own node first, then its zone, then its region, each node its own', () => {
  const result = compileMesh(mesh());
  assert.deepEqual(result.diagnostics, []);
  // a1: same node 0; a2 shares network, region, zone, subzone (none) but not the node: 1;
  // b1 (zone b): 3; the endpoint without locality differs at the region: 4 — renumbered 0..3.
  assert.deepEqual(priorities(result, onNode('a1')), {
    classId: 'sidecar/shop/web#a1',
    priorities: { '10.0.0.1': 0, '10.0.0.2': 1, '10.0.0.3': 2, '10.0.0.9': 3 },
  });
  assert.deepEqual(priorities(result, onNode('a2')), {
    classId: 'sidecar/shop/web#a2',
    priorities: { '10.0.0.1': 1, '10.0.0.2': 0, '10.0.0.3': 2, '10.0.0.9': 3 },
  });
  assert.deepEqual(priorities(result, onNode('b1')).priorities, {
    '10.0.0.1': 1,
    '10.0.0.2': 1,
    '10.0.0.3': 0,
    '10.0.0.9': 2,
  });
  // A node of the zone that runs none of the pods: the zone first, no endpoint on the node.
  assert.deepEqual(priorities(result, onNode('a3')).priorities, {
    '10.0.0.1': 0,
    '10.0.0.2': 0,
    '10.0.0.3': 1,
    '10.0.0.9': 2,
  });
  // No NODE_NAME: istiod's proxy has no hostname label and (here) no locality: the endpoint
  // without a node and locality matches every label (0); the others differ at the region.
  assert.deepEqual(priorities(result, onNode()), {
    classId: 'sidecar/shop/web',
    priorities: { '10.0.0.1': 1, '10.0.0.2': 1, '10.0.0.3': 1, '10.0.0.9': 0 },
  });
});

test('PreferSameNode: a locality splits per priority, each part weighted by its endpoints; weighted LB config on', () => {
  const result = compileMesh(mesh());
  const { resources } = served(result, onNode('a1'));
  const cla = resources.endpoints.get(REVIEWS) as Served;
  assert.deepEqual(
    (cla.endpoints ?? []).map((l) => [
      `${l.locality?.region ?? ''}/${l.locality?.zone ?? ''}`,
      l.priority ?? 0,
      l.load_balancing_weight,
      (l.lb_endpoints ?? []).length,
    ]),
    [
      ['/', 3, 1, 1],
      ['r1/a', 0, 1, 1],
      ['r1/a', 1, 1, 1],
      ['r1/b', 2, 1, 1],
    ],
  );
  const cluster = resources.clusters.get(REVIEWS) as { common_lb_config?: { locality_weighted_lb_config?: object } };
  assert.deepEqual(cluster.common_lb_config?.locality_weighted_lb_config, {});
});

test('PreferSameNode groups: the assignment moves to G# and one G#<node> per node; no locality groups', () => {
  const { content } = compileMesh(mesh()).snapshot;
  assert.equal(content.groups.endpoints?.endpoints[REVIEWS], undefined);
  assert.deepEqual(
    Object.keys(content.groups).filter((g) => g.startsWith('endpoints#')),
    ['endpoints#', 'endpoints#a1', 'endpoints#a2', 'endpoints#a3', 'endpoints#b1'],
  );
  assert.deepEqual(
    Object.keys(content.groups).filter((g) => g.includes('@')),
    [],
  );
  assert.ok(content.classes.find((c) => c.id === 'sidecar/shop/web')?.groups.includes('endpoints#'));
});

test("PreferSameNode under a DestinationRule's locality settings: the rule's, per locality (istiod: DR first)", () => {
  const rule = `---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: { name: reviews, namespace: shop }
spec:
  host: reviews.shop.svc.cluster.local
  trafficPolicy: { outlierDetection: { consecutive5xxErrors: 3 }, loadBalancer: { localityLbSetting: { enabled: true } } }
`;
  const result = compileMesh(mesh('PreferSameNode', rule));
  assert.deepEqual(result.diagnostics, []);
  assert.deepEqual(
    Object.keys(result.snapshot.content.groups).filter((g) => g.includes('#')),
    [],
  );
  // Locality failover: r1/a 0 (both nodes alike), r1/b 1, no locality (other region) 2.
  assert.deepEqual(priorities(result, onNode('a1')), {
    classId: 'sidecar/shop/web@r1/a/',
    priorities: { '10.0.0.1': 0, '10.0.0.2': 0, '10.0.0.3': 1, '10.0.0.9': 2 },
  });
});

test("a gateway's AUTO_PASSTHROUGH (SNI-DNAT) assignment of a PreferSameNode service has its node's priorities", () => {
  const result = compileMesh(mesh() + eastWestGatewayYaml('a2', '*.shop.svc.cluster.local'));
  const p = priorities(result, eastWestGatewayNode('a2'), 'outbound_.9080_._.reviews.shop.svc.cluster.local');
  assert.match(p.classId, /#a2$/);
  assert.deepEqual(p.priorities, { '10.0.0.1': 1, '10.0.0.2': 0, '10.0.0.3': 2, '10.0.0.9': 3 });
});

test('incremental == full on churn of a PreferSameNode service (endpoints, pods moving between nodes)', () => {
  const deltas = nodeChurnDeltas(mesh(), {
    slice: 'reviews-1',
    targets: ['reviews-a1', 'reviews-a2', 'reviews-b1', 'web-a1', undefined],
    pods: 'reviews',
    nodes: ['a1', 'a2', 'a3', 'b1', 'n4'],
    seed: 11,
  });
  // Slice edits and moves between Nodes patch the node groups in place; a move to n4 (no Node) compiles in full.
  assert.ok(deltas > 30, `${deltas} deltas`);
});

test('a Service turning PreferSameNode (and back) in a config round gives what a full compile gives', () => {
  let inputs = buildInputSet(parseDocuments(mesh('PreferSameZone'), 'mesh.yaml').docs);
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(inputs).output;
  const reviews = inputs.services.find((s) => s.meta.name === 'reviews');
  assert.ok(reviews);
  for (const distribution of ['PreferSameNode', 'PreferSameZone', 'PreferSameNode'] as const) {
    inputs = withReplaced(inputs, 'Service', { ...reviews, trafficDistribution: distribution });
    const res = ic.update(inputs, [{ kind: 'Service', namespace: 'shop', name: 'reviews' }]);
    output = res.kind === 'delta' ? applyCompileDelta(output, res.delta, res.layout) : res.output;
    assertSameOutput(output, compile(inputs).output, distribution);
    assert.equal([...output.groups.keys()].includes('endpoints#a1'), distribution === 'PreferSameNode');
  }
});
