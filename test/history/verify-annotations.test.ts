/**
 * Annotations the compile reads must survive storage, or `meshsnap verify` recompiles a version
 * without them and the digest differs: a Service's `networking.istio.io/exportTo` (istiod's kube
 * controller), and `networking.istio.io/traffic-distribution` on a Service, a ServiceEntry or a
 * Namespace. Other annotations are still dropped.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { compileTexts } from '../../src/pipeline.js';
import { storedDocument, storedEntryRead } from '../../src/snapshot/stored-inputs/index.js';
import { nodeSha256Hex, type LocalStore } from '../../src/snapshot/store/local.js';
import { publishAndVerify, STATE, tempStore } from './helpers.js';

const ANNOTATED = `
apiVersion: v1
kind: Namespace
metadata: {name: zoned, annotations: {networking.istio.io/traffic-distribution: PreferClose, note: dropped}}
---
apiVersion: v1
kind: Service
metadata: {name: private, namespace: zoned, annotations: {networking.istio.io/exportTo: ".", note: dropped}}
spec: {clusterIP: 10.96.77.1, selector: {app: private}, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Service
metadata: {name: close, namespace: default, annotations: {networking.istio.io/traffic-distribution: PreferClose}}
spec: {clusterIP: 10.96.77.2, selector: {app: close}, ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: close-1, namespace: default, labels: {kubernetes.io/service-name: close}}
addressType: IPv4
ports: [{name: http, port: 80}]
endpoints:
- {addresses: [10.244.9.1], conditions: {ready: false}}
- {addresses: [10.244.9.2], conditions: {ready: true}}
---
apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext, namespace: default, annotations: {networking.istio.io/traffic-distribution: PreferClose}}
spec:
  hosts: [ext.example.com]
  location: MESH_EXTERNAL
  resolution: STATIC
  ports: [{number: 80, name: http, protocol: HTTP}]
  endpoints: [{address: 192.0.2.10}]
`;

let store: LocalStore;
let cleanup: () => void;
before(() => ({ store, cleanup } = tempStore()));
after(() => cleanup());

test('stored inputs keep the annotations the compile reads, and only those', () => {
  const service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 's',
      namespace: 'n',
      annotations: {
        'networking.istio.io/exportTo': '.',
        'networking.istio.io/traffic-distribution': 'PreferClose',
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
        note: 'x',
      },
    },
    spec: { ports: [{ port: 80 }] },
  };
  assert.deepEqual(storedDocument(service, nodeSha256Hex)?.object.metadata, {
    name: 's',
    namespace: 'n',
    annotations: { 'networking.istio.io/exportTo': '.', 'networking.istio.io/traffic-distribution': 'PreferClose' },
  });
  const namespace = {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'n', annotations: { 'networking.istio.io/traffic-distribution': 'PreferClose', note: 'x' } },
  };
  assert.deepEqual(storedDocument(namespace, nodeSha256Hex)?.object.metadata, {
    name: 'n',
    annotations: { 'networking.istio.io/traffic-distribution': 'PreferClose' },
  });
  // The watcher reads each object as stored (storedEntryRead): it reads these annotations too.
  const watched = storedEntryRead(service, nodeSha256Hex)?.read?.value as
    { meta: { annotations: Record<string, string> } } | undefined;
  assert.deepEqual(watched?.meta.annotations, {
    'networking.istio.io/exportTo': '.',
    'networking.istio.io/traffic-distribution': 'PreferClose',
  });
  // Without one, a Service keeps no annotations at all (the fast stored path).
  const plain = { ...service, metadata: { name: 's', namespace: 'n', annotations: { note: 'x' } } };
  assert.deepEqual(storedDocument(plain, nodeSha256Hex)?.object.metadata, { name: 's', namespace: 'n' });
});

test('a version whose exportTo and traffic distribution come from annotations verifies byte-identically', async () => {
  const texts = (extra: string) => [
    { file: 'state.yaml', text: STATE },
    { file: 'annotated.yaml', text: extra },
  ];
  const r = compileTexts(texts(ANNOTATED), { hasher: nodeSha256Hex });
  assert.deepEqual(
    r.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  // The annotations decide this snapshot.
  const without = compileTexts(texts(ANNOTATED.replaceAll(/networking\.istio\.io\/[a-zA-Z-]+: [^,}]+, ?/g, '')), {
    hasher: nodeSha256Hex,
  });
  assert.notEqual(without.snapshot.digest, r.snapshot.digest);
  await publishAndVerify(store, r);
});
