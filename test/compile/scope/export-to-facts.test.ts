/**
 * exportTo visibility facts, from istiod's PushContext (IsServiceVisible, the VirtualService and
 * DestinationRule indexes, destinationRule's lookup order: client namespace, service namespace,
 * root namespace), on the `known` / `alt-known` / `not-default` mesh.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateMesh } from '../../../bench/synthetic.js';
import { sidecarDocuments } from '../../../bench/sidecars.js';
import { indexedInputs } from '../../../src/compile/incremental.js';
import { buildInputSet } from '../../../src/inputs/index.js';
import { assertChurnMatchesFull } from '../incremental-helpers.js';
import { compileMesh, proxy, service, view, virtualService } from './scope-mesh.js';

const has = (clusters: readonly string[], host: string) => clusters.some((c) => c.endsWith(`||${host}`));
const KNOWN = 'known.default.svc.cluster.local';
const ALT = 'alt-known.default.svc.cluster.local';

test('Service exportTo annotation: "." own namespace only; a namespace name that namespace only (not even its own); "~" nobody', () => {
  const annotated = (value: string) =>
    service('private', 'default', '2.0.0.9', `, annotations: {networking.istio.io/exportTo: "${value}"}`);
  const host = 'private.default.svc.cluster.local';
  const dot = compileMesh(annotated('.'));
  assert.ok(has(view(dot, proxy('default')).clusters, host));
  assert.ok(!has(view(dot, proxy('not-default')).clusters, host));
  const named = compileMesh(annotated('not-default'));
  assert.ok(has(view(named, proxy('not-default')).clusters, host));
  assert.ok(!has(view(named, proxy('default')).clusters, host));
  const none = compileMesh(annotated('~'));
  assert.ok(!has(view(none, proxy('default')).clusters, host));
  assert.ok(!has(view(none, proxy('not-default')).clusters, host));
  // Comma-separated, trimmed, as istiod's kube controller reads it.
  const list = compileMesh(annotated(' ., not-default '));
  assert.ok(has(view(list, proxy('default')).clusters, host) && has(view(list, proxy('not-default')).clusters, host));
});

test('mesh defaultServiceExportTo ["."]: services without exportTo stay in their namespace; an explicit exportTo wins', () => {
  const mesh = `apiVersion: meshsnap.dev/v1alpha1
kind: MeshConfig
spec: {defaultServiceExportTo: ["."]}`;
  const result = compileMesh(
    mesh,
    service('public', 'default', '2.0.0.9', ', annotations: {networking.istio.io/exportTo: "*"}'),
  );
  const other = view(result, proxy('not-default')).clusters;
  assert.ok(!has(other, KNOWN) && !has(other, ALT));
  assert.ok(has(other, 'public.default.svc.cluster.local'));
  assert.ok(has(other, 'not-default.not-default.svc.cluster.local'));
  assert.ok(has(view(result, proxy('default')).clusters, KNOWN));
});

test('VirtualService exportTo ["."]: only its namespace routes by it (and defaultVirtualServiceExportTo does the same)', () => {
  const vs = virtualService('default', 'known-to-alt', KNOWN, `{host: ${ALT}, port: {number: 80}}`);
  const private_ = vs.replace('spec: {', 'spec: {exportTo: ["."], ');
  const result = compileMesh(private_);
  assert.equal(view(result, proxy('default')).routes['80']?.[`${KNOWN}:80`], `outbound|80||${ALT}`);
  assert.equal(view(result, proxy('not-default')).routes['80']?.[`${KNOWN}:80`], `outbound|80||${KNOWN}`);
  const byDefault = compileMesh(
    vs,
    `apiVersion: meshsnap.dev/v1alpha1
kind: MeshConfig
spec: {defaultVirtualServiceExportTo: ["."]}`,
  );
  assert.equal(view(byDefault, proxy('not-default')).routes['80']?.[`${KNOWN}:80`], `outbound|80||${KNOWN}`);
});

const dr = (ns: string, name: string, lb: string, extra = '') => `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: ${name}, namespace: ${ns}}
spec: {host: ${KNOWN}, trafficPolicy: {loadBalancer: {simple: ${lb}}}${extra}}`;

/** The lb_policy of known's port-80 cluster for a sidecar of `ns` (ROUND_ROBIN is proto3's default: absent in JSON). */
const lbOf = (result: ReturnType<typeof compileMesh>, ns: string) => {
  const cluster = view(result, proxy(ns)).resources.clusters.get(`outbound|80||${KNOWN}`) as { lb_policy?: string };
  return cluster.lb_policy ?? 'ROUND_ROBIN';
};

test('DestinationRule exportTo ["."]: the service namespace keeps its rule, other namespaces do not see it', () => {
  const result = compileMesh(dr('default', 'known', 'RANDOM', ', exportTo: ["."]'));
  assert.equal(lbOf(result, 'default'), 'RANDOM');
  assert.equal(lbOf(result, 'not-default'), 'LEAST_REQUEST');
});

test("DestinationRule lookup: the client's namespace first, then the service's, then the root namespace", () => {
  const result = compileMesh(
    dr('default', 'producer', 'RANDOM'),
    dr('not-default', 'consumer', 'ROUND_ROBIN'),
    'apiVersion: v1\nkind: Namespace\nmetadata: {name: third}',
  );
  assert.equal(lbOf(result, 'not-default'), 'ROUND_ROBIN');
  assert.equal(lbOf(result, 'default'), 'RANDOM');
  assert.equal(lbOf(result, 'third'), 'RANDOM');
  // A rule in a namespace that is neither the client's, the service's nor the root applies in that namespace only.
  const foreign = compileMesh(
    dr('not-default', 'consumer', 'ROUND_ROBIN'),
    'apiVersion: v1\nkind: Namespace\nmetadata: {name: third}',
  );
  assert.equal(lbOf(foreign, 'not-default'), 'ROUND_ROBIN');
  assert.equal(lbOf(foreign, 'third'), 'LEAST_REQUEST');
  assert.equal(lbOf(foreign, 'default'), 'LEAST_REQUEST');
  const root = compileMesh(dr('istio-system', 'mesh-wide', 'RANDOM'));
  assert.equal(lbOf(root, 'not-default'), 'RANDOM');
});

test('endpoint churn with restricted scopes: every change a delta (scope groups patched too), each result equals a full compile', () => {
  const mesh = generateMesh({ services: 300, seed: 5 }).docs;
  const extra = [
    ...sidecarDocuments(mesh).filter((_, i) => i % 2 === 0),
    // A client-namespace rule (its namespace gets its own view of that service) and a private Service.
    {
      file: 'extra.yaml',
      index: 0,
      object: {
        apiVersion: 'networking.istio.io/v1',
        kind: 'DestinationRule',
        metadata: { name: 'foreign', namespace: 'ns-1' },
        spec: {
          host: `${firstService(mesh)}.ns-0.svc.cluster.local`,
          trafficPolicy: { loadBalancer: { simple: 'RANDOM' } },
        },
      },
    },
  ];
  assertChurnMatchesFull(indexedInputs(buildInputSet([...mesh, ...extra])), 11, 40, (output) =>
    assert.ok([...output.groups.keys()].some((id) => id.startsWith('scope/'))),
  );
});

const firstService = (docs: readonly { object: unknown }[]): string =>
  docs
    .map((d) => d.object as { kind?: string; metadata?: { name: string; namespace: string } })
    .find((o) => o.kind === 'Service' && o.metadata?.namespace === 'ns-0')?.metadata?.name ?? 'missing';

test('proxyless gRPC clients: exportTo and their namespace Sidecar limit their clusters and listeners too', () => {
  const result = compileMesh(
    service('private', 'default', '2.0.0.9', ', annotations: {networking.istio.io/exportTo: "."}'),
    `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: not-default}
spec: {egress: [{hosts: ["./*", "default/known.default.svc.cluster.local"]}]}`,
    'apiVersion: v1\nkind: Namespace\nmetadata: {name: third}',
  );
  const grpc = (ns: string) => ({
    id: `sidecar~10.1.0.2~client.${ns}~${ns}.svc.cluster.local`,
    metadata: { NAMESPACE: ns, GENERATOR: 'grpc' },
  });
  const third = view(result, grpc('third'));
  assert.ok(!has(third.clusters, 'private.default.svc.cluster.local'));
  assert.ok(has(third.clusters, ALT));
  assert.ok(has(view(result, grpc('default')).clusters, 'private.default.svc.cluster.local'));
  const scoped = view(result, grpc('not-default'));
  assert.deepEqual(scoped.listeners, [
    'known.default.svc.cluster.local:80',
    'known.default.svc.cluster.local:8080',
    'not-default.not-default.svc.cluster.local:80',
    'not-default.not-default.svc.cluster.local:8080',
  ]);
});
