import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSnapshot } from '../../src/snapshot/build.js';
import { classifyNode, resourcesForClass } from '../../src/snapshot/classify.js';
import { parseProxyNode } from '../../src/proxy-class/node-id.js';
import { A, B, INFO, inlineRouteListener, output, sampleOutput, sidecarClass, staticCluster } from './sample-output.js';
import type { CompileOutput } from '../../src/compile/types.js';

const content = buildSnapshot(sampleOutput(), INFO).content;
const id = (pod: string, ns = 'default', type = 'sidecar') => `${type}~10.1.0.1~${pod}.${ns}~${ns}.svc.cluster.local`;
const classOf = (c: ReturnType<typeof classifyNode>) => (c.ok ? c.classId : `ERR ${c.reason}`);

test('parses the Istio node id and metadata', () => {
  const p = parseProxyNode('sidecar~10.1.0.1~reviews-v1-abc.bookinfo~bookinfo.svc.cluster.local', {
    LABELS: { app: 'reviews', n: 3 },
    INSTANCE_IPS: '10.1.0.1, fd00::1',
  });
  assert.ok(p.ok);
  assert.deepEqual(p.node, {
    type: 'sidecar',
    ips: ['10.1.0.1', 'fd00::1'],
    id: 'reviews-v1-abc.bookinfo',
    podName: 'reviews-v1-abc',
    namespace: 'bookinfo',
    dnsDomain: 'bookinfo.svc.cluster.local',
    labels: { app: 'reviews' },
  });
  const meta = parseProxyNode('sidecar~10.0.0.1~pod.a~a.svc.cluster.local', { NAMESPACE: 'b', GENERATOR: 'grpc' });
  assert.ok(meta.ok);
  assert.equal(meta.node.namespace, 'b', 'NAMESPACE metadata wins');
  assert.equal(meta.node.generator, 'grpc');
  assert.deepEqual(meta.node.ips, ['10.0.0.1']);
});

test('a sidecar whose labels a service selects gets that service class', () => {
  assert.equal(
    classOf(classifyNode(content, { id: id('a-1'), metadata: { LABELS: { app: 'a', version: 'v1' } } })),
    'sidecar/default/a',
  );
});

test('a sidecar no service selects, or whose shape the compiler did not see, falls back to sidecar/<ns>/_', () => {
  assert.equal(
    classOf(classifyNode(content, { id: id('x-1'), metadata: { LABELS: { app: 'x' } } })),
    'sidecar/default/_',
  );
  assert.equal(classOf(classifyNode(content, { id: id('x-1') })), 'sidecar/default/_');
  // b selects it but there is no sidecar/default/b class in this snapshot
  assert.equal(
    classOf(classifyNode(content, { id: id('b-1'), metadata: { LABELS: { app: 'b' } } })),
    'sidecar/default/_',
  );
});

test('a workload selected by several services gets the combined class', () => {
  const base = sampleOutput();
  const both = sidecarClass(
    'sidecar/default/a,b',
    ['a.default.svc.cluster.local', 'b.default.svc.cluster.local'],
    'inbound/default/a,b',
  );
  const groups = new Map(base.groups);
  groups.set(
    'inbound/default/a,b',
    output(
      {
        g: {
          listeners: [inlineRouteListener('virtualInbound', 'inbound|9080||')],
          clusters: [staticCluster('inbound|9080||')],
        },
      },
      [],
    ).groups.get('g')!,
  );
  const out: CompileOutput = {
    groups,
    classes: [...base.classes, both],
    selectors: [
      ...base.selectors,
      { namespace: 'default', hostname: 'b.default.svc.cluster.local', selector: { tier: 'web' } },
    ],
  };
  const c = buildSnapshot(out, INFO).content;
  assert.equal(
    classOf(classifyNode(c, { id: id('ab-1'), metadata: { LABELS: { app: 'a', tier: 'web' } } })),
    'sidecar/default/a,b',
  );
  assert.equal(classOf(classifyNode(c, { id: id('a-1'), metadata: { LABELS: { app: 'a' } } })), 'sidecar/default/a');
});

test('proxyless gRPC clients get grpc/<ns>', () => {
  assert.equal(
    classOf(classifyNode(content, { id: id('client-1'), metadata: { GENERATOR: 'grpc', LABELS: { app: 'a' } } })),
    'grpc/default',
  );
  assert.equal(
    classOf(classifyNode(content, { id: id('client-1', 'other'), metadata: { GENERATOR: 'grpc' } })),
    `ERR node ${id('client-1', 'other')}: namespace "other" is not in the mesh snapshot`,
  );
});

test('unknown namespaces, gateways and malformed ids are refused with a reason', () => {
  const unknown = classifyNode(content, { id: id('p', 'nowhere') });
  assert.equal(unknown.ok, false);
  assert.match(classOf(unknown), /namespace "nowhere" is not in the mesh snapshot/);
  assert.match(classOf(classifyNode(content, { id: id('gw', 'default', 'router') })), /router/);
  assert.match(
    classOf(classifyNode(content, { id: 'sidecar~10.0.0.1~pod.default' })),
    /malformed node id.*3 '~'-separated parts/,
  );
  assert.match(
    classOf(classifyNode(content, { id: 'ingress~10.0.0.1~pod.default~default.svc.cluster.local' })),
    /unknown proxy type "ingress"/,
  );
  assert.match(classOf(classifyNode(content, { id: 'sidecar~10.0.0.1~~default.svc.cluster.local' })), /empty pod id/);
  assert.match(classOf(classifyNode(content, { id: 'sidecar~10.0.0.1~pod~' })), /no namespace/);
  assert.match(classOf(classifyNode(content, { id: '' })), /malformed/);
  assert.match(
    classOf(classifyNode(content, { id: id('p'), metadata: { GENERATOR: 'ztunnel' } })),
    /unsupported GENERATOR "ztunnel"/,
  );
});

test('resourcesForClass merges the class groups by type', () => {
  const r = resourcesForClass(content, 'sidecar/default/a');
  assert.ok(r);
  assert.deepEqual(
    [...r.clusters.keys()],
    [
      'BlackHoleCluster',
      'inbound|9080||',
      A,
      'outbound|9080||b.default.svc.cluster.local',
      'outbound|3306||db.default.svc.cluster.local',
    ].sort(),
  );
  assert.equal(r.clusters.get(A), content.groups.outbound?.clusters[A]);
  assert.deepEqual([...r.listeners.keys()], ['0.0.0.0_9080', '10.96.0.9_3306', 'virtualInbound']);
  assert.equal(r.listeners.get('virtualInbound'), content.groups['inbound/default/a']?.listeners.virtualInbound);
  const g = resourcesForClass(content, 'grpc/default');
  assert.deepEqual([...(g?.clusters.keys() ?? [])], [A, B]);
  assert.equal(resourcesForClass(content, 'sidecar/none/_'), undefined);
});

test('each snapshot classifies against its own classes (the index by id is per classes list)', () => {
  const node = { id: id('a-1'), metadata: { LABELS: { app: 'a', version: 'v1' } } };
  assert.equal(classOf(classifyNode(content, node)), 'sidecar/default/a');
  // A later snapshot without that class: the node falls back, though the first index knew the class.
  const without = { ...content, classes: content.classes.filter((c) => c.id !== 'sidecar/default/a') };
  assert.notEqual(classOf(classifyNode(without, node)), 'sidecar/default/a');
  assert.equal(classOf(classifyNode(content, node)), 'sidecar/default/a');
});
