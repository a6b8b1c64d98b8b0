/**
 * Services with `internalTrafficPolicy: Local` from YAML to what a node is served: istiod's
 * EndpointBuilder sends a proxy only the endpoints whose pod (`spec.nodeName`) is on the proxy's
 * node (its NODE_NAME), and a proxy without a node name only the endpoints without a node.
 */
import { nodeYaml, podYaml } from '../helpers/node-fixtures.js';
import { eastWestGatewayNode, eastWestGatewayYaml } from '../helpers/gateway-sim.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile } from '../../src/compile/index.js';
import { applyCompileDelta, IncrementalCompiler, withReplaced } from '../../src/compile/incremental.js';
import { buildInputSet, parseDocuments } from '../../src/inputs/index.js';
import { compileTexts } from '../../src/pipeline.js';
import { classById, classifyNode, resourcesForClass } from '../../src/snapshot/classify.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { served } from '../helpers/mesh.js';
import { assertSameOutput, nodeChurnDeltas } from './incremental-helpers.js';

const node = (name: string, zone?: string): string => nodeYaml(name, zone ? { region: 'r1', zone } : undefined);
const pod = podYaml;

/**
 * A node-local `agent` (a DaemonSet's Service) with pods on n1 and n2, and an endpoint without a
 * pod whose slice names n1 (istiod takes the node from the pod: it has none); `web` clients on n1
 * and on n3 (a node only a pod names). `reviews` is a plain service on the same nodes.
 */
function mesh(policy = 'Local', reviewsRule = '', zones = false): string {
  return `apiVersion: v1
kind: Service
metadata: { name: agent, namespace: shop }
spec: { selector: { app: agent }, internalTrafficPolicy: ${policy}, ports: [{ name: grpc, port: 9090 }] }
---
apiVersion: v1
kind: Service
metadata: { name: reviews, namespace: shop }
spec: { selector: { app: reviews }, ports: [{ name: http, port: 9080 }] }
---
apiVersion: v1
kind: Service
metadata: { name: web, namespace: shop }
spec: { selector: { app: web }, ports: [{ name: http, port: 8080 }] }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: agent-1, namespace: shop, labels: { kubernetes.io/service-name: agent } }
addressType: IPv4
ports: [{ name: grpc, port: 9090 }]
endpoints:
- { addresses: [10.0.0.1], nodeName: n1, targetRef: { kind: Pod, name: agent-1 } }
- { addresses: [10.0.0.2], nodeName: n2, targetRef: { kind: Pod, name: agent-2 } }
- { addresses: [10.0.0.9], nodeName: n1 }
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: reviews-1, namespace: shop, labels: { kubernetes.io/service-name: reviews } }
addressType: IPv4
ports: [{ name: http, port: 9080 }]
endpoints:
- { addresses: [10.0.2.1], targetRef: { kind: Pod, name: reviews-1 } }
- { addresses: [10.0.2.2], targetRef: { kind: Pod, name: reviews-2 } }
${reviewsRule}${node('n1', zones ? 'a' : undefined)}${node('n2', zones ? 'b' : undefined)}${pod('agent-1', '10.0.0.1', 'n1', 'agent')}${pod('agent-2', '10.0.0.2', 'n2', 'agent')}${pod('reviews-1', '10.0.2.1', 'n1', 'reviews')}${pod('reviews-2', '10.0.2.2', 'n2', 'reviews')}${pod('web-1', '10.0.1.1', 'n1', 'web')}${pod('web-3', '10.0.1.3', 'n3', 'web')}`;
}

const compileMesh = (text: string) => compileTexts([{ file: 'mesh.yaml', text }], { hasher: nodeSha256Hex });

const WEB = 'sidecar~10.0.1.1~web-1.shop~shop.svc.cluster.local';
const AGENT = 'outbound|9090||agent.shop.svc.cluster.local';
const REVIEWS = 'outbound|9080||reviews.shop.svc.cluster.local';

/** The class a web proxy is placed in, and the addresses of a cluster's assignment it is served. */
function addresses(
  result: ReturnType<typeof compileMesh>,
  metadata: Record<string, unknown>,
  cluster = AGENT,
  id = WEB,
): { classId: string; addresses: string[] | undefined } {
  const { classId, resources } = served(result, { id, metadata });
  const cla = resources.endpoints.get(cluster) as
    | { endpoints?: { lb_endpoints?: { endpoint?: { address?: { socket_address?: { address?: string } } } }[] }[] }
    | undefined;
  return {
    classId,
    addresses: (cla ? (cla.endpoints ?? []) : undefined)?.flatMap((l) =>
      (l.lb_endpoints ?? []).map((e) => e.endpoint?.address?.socket_address?.address ?? '?'),
    ),
  };
}

const web = (NODE_NAME?: string) => ({
  NAMESPACE: 'shop',
  LABELS: { app: 'web' },
  ...(NODE_NAME !== undefined ? { NODE_NAME } : {}),
});

test('internalTrafficPolicy Local: a proxy is served only the endpoints of its own node', () => {
  const result = compileMesh(mesh());
  assert.deepEqual(result.diagnostics, []);
  assert.deepEqual(addresses(result, web('n1')), { classId: 'sidecar/shop/web#n1', addresses: ['10.0.0.1'] });
  assert.deepEqual(addresses(result, web('n2')), { classId: 'sidecar/shop/web#n2', addresses: ['10.0.0.2'] });
  // A node only a pod names (no Node object) is a node of the mesh too; no agent runs there.
  assert.deepEqual(addresses(result, web('n3')), { classId: 'sidecar/shop/web#n3', addresses: [] });
  // No NODE_NAME: istiod matches the endpoints without a node (the slice's nodeName is not read).
  assert.deepEqual(addresses(result, web()), { classId: 'sidecar/shop/web', addresses: ['10.0.0.9'] });
  // A plain service beside it: every endpoint, whatever the node.
  assert.deepEqual(addresses(result, web('n1'), REVIEWS).addresses, ['10.0.2.1', '10.0.2.2']);
  assert.deepEqual(addresses(result, web(), REVIEWS).addresses, ['10.0.2.1', '10.0.2.2']);
  // Proxyless gRPC clients are placed by NODE_NAME as well.
  const grpc = addresses(result, { ...web('n2'), GENERATOR: 'grpc' }, AGENT, WEB);
  assert.deepEqual(grpc, { classId: 'grpc/shop#n2', addresses: ['10.0.0.2'] });
});

test('node groups: only the node-local assignments move, classes list G#, classById resolves a node class', () => {
  const { content } = compileMesh(mesh()).snapshot;
  assert.ok(content.groups.endpoints?.endpoints[REVIEWS]);
  assert.equal(content.groups.endpoints?.endpoints[AGENT], undefined);
  assert.deepEqual(
    Object.keys(content.groups).filter((g) => g.startsWith('endpoints#')),
    ['endpoints#', 'endpoints#n1', 'endpoints#n2', 'endpoints#n3'],
  );
  const cls = content.classes.find((c) => c.id === 'sidecar/shop/web');
  assert.ok(cls?.groups.includes('endpoints#'));
  assert.deepEqual(
    classById(content, 'sidecar/shop/web#n2')?.groups.filter((g) => g.startsWith('endpoints')),
    ['endpoints', 'endpoints#n2'],
  );
  assert.equal(classById(content, 'sidecar/shop/web#n9'), undefined);
  assert.equal(resourcesForClass(content, 'sidecar/shop/web#nowhere'), undefined);
  // A NODE_NAME the snapshot does not know: the assignments for no node (see README).
  const placed = classifyNode(content, { id: WEB, metadata: web('elsewhere') });
  assert.ok(placed.ok);
  assert.equal(placed.classId, 'sidecar/shop/web');
});

test('internalTrafficPolicy Cluster (or none) keeps one assignment for every proxy; a bad value is an error', () => {
  for (const text of [mesh('Cluster'), mesh('Cluster').replace('internalTrafficPolicy: Cluster, ', '')]) {
    const result = compileMesh(text);
    assert.deepEqual(result.diagnostics, []);
    assert.deepEqual(
      Object.keys(result.snapshot.content.groups).filter((g) => g.includes('#')),
      [],
    );
    assert.deepEqual(addresses(result, web('n1')), {
      classId: 'sidecar/shop/web',
      addresses: ['10.0.0.1', '10.0.0.2', '10.0.0.9'],
    });
  }
  const docs = parseDocuments(mesh('Nearby'), 'mesh.yaml').docs;
  const errors = buildInputSet(docs).diagnostics.filter((d) => d.severity === 'error');
  assert.equal(errors.length, 1);
  assert.equal(errors[0]?.field, 'spec.internalTrafficPolicy');
});

test('both dimensions: a proxy is served its locality variant of one service and its node variant of another', () => {
  const rule = `---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: { name: reviews, namespace: shop }
spec: { host: reviews.shop.svc.cluster.local, trafficPolicy: { outlierDetection: { consecutive5xxErrors: 3 } } }
`;
  const result = compileMesh(mesh('Local', rule, true));
  assert.deepEqual(result.diagnostics, []);
  const { classId, resources } = served(result, { id: WEB, metadata: web('n2') });
  assert.equal(classId, 'sidecar/shop/web@r1/b/#n2');
  const reviews = resources.endpoints.get(REVIEWS) as {
    endpoints?: { locality?: { zone?: string }; priority?: number }[];
  };
  assert.deepEqual(Object.fromEntries((reviews.endpoints ?? []).map((l) => [l.locality?.zone, l.priority ?? 0])), {
    a: 1,
    b: 0,
  });
  assert.deepEqual(addresses(result, web('n2')).addresses, ['10.0.0.2']);
  // The node-local service gets no locality variants: every endpoint a proxy gets is on its node.
  const located = Object.keys(result.snapshot.content.groups).filter((g) => g.includes('@'));
  assert.ok(
    located.every((g) => !result.snapshot.content.groups[g]?.endpoints[AGENT]),
    located.join(),
  );
  // n3 has no Node object, so no locality: the node variant alone.
  assert.equal(addresses(result, web('n3')).classId, 'sidecar/shop/web#n3');
});

test('incremental == full on churn of a node-local service (endpoints, pods moving between nodes)', () => {
  const deltas = nodeChurnDeltas(mesh() + node('n3'), {
    slice: 'agent-1',
    targets: ['agent-1', 'agent-2', 'web-1', 'web-3', undefined],
    pods: 'agent',
    nodes: ['n1', 'n2', 'n3', 'n4'],
    seed: 7,
  });
  // Slice edits and moves between Nodes patch the node groups in place; a move to n4 (no Node) compiles in full.
  assert.ok(deltas > 30, `${deltas} deltas`);
});

test('a Service turning node-local (and back) in a config round gives what a full compile gives', () => {
  let inputs = buildInputSet(parseDocuments(mesh('Cluster'), 'mesh.yaml').docs);
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(inputs).output;
  const agent = inputs.services.find((s) => s.meta.name === 'agent');
  assert.ok(agent);
  for (const policy of ['Local', 'Cluster'] as const) {
    inputs = withReplaced(inputs, 'Service', { ...agent, internalTrafficPolicy: policy });
    const res = ic.update(inputs, [{ kind: 'Service', namespace: 'shop', name: 'agent' }]);
    assert.ok(res.kind === 'delta', res.kind);
    output = applyCompileDelta(output, res.delta, res.layout);
    assertSameOutput(output, compile(inputs).output, policy);
    assert.equal([...output.groups.keys()].includes('endpoints#n1'), policy === 'Local');
  }
});

test("a gateway's AUTO_PASSTHROUGH (SNI-DNAT) assignment of a node-local service holds its node's endpoints only", () => {
  const gateway = eastWestGatewayYaml('n2', '*.shop.svc.cluster.local');
  const result = compileMesh(mesh() + gateway);
  const served = addresses(
    result,
    eastWestGatewayNode('n2').metadata,
    'outbound_.9090_._.agent.shop.svc.cluster.local',
    eastWestGatewayNode('n2').id,
  );
  assert.match(served.classId, /#n2$/);
  assert.deepEqual(served.addresses, ['10.0.0.2']);
});
