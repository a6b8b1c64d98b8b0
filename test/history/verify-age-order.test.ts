/**
 * `meshsnap verify` recompiles a version from its stored inputs: whatever the compile orders by age
 * (istiod's oldest-first choices: a namespace's Sidecar and Telemetries, PeerAuthentications, which
 * of several namespaces' ServiceEntries for one host a namespace sees, which of several
 * VirtualServices for one host a sidecar uses) must survive storage, or the
 * recompile picks by name and the digest differs.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { compileTexts } from '../../src/pipeline.js';
import { storedDocument } from '../../src/snapshot/stored-inputs/index.js';
import { nodeSha256Hex, type LocalStore } from '../../src/snapshot/store/local.js';
import { publishAndVerify, STATE, tempStore } from './helpers.js';

/** Two of a kind in bookinfo's `default` namespace, the one named `b-…` created first. */
const AGED = `
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: a-narrow, namespace: default, creationTimestamp: "2024-02-01T00:00:00Z"}
spec:
  egress:
  - hosts: ["./reviews.default.svc.cluster.local"]
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: b-wide, namespace: default, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  egress:
  - hosts: ["*/*"]
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: a-off, namespace: default, creationTimestamp: "2024-02-01T00:00:00Z"}
spec:
  accessLogging:
  - disabled: true
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: b-on, namespace: default, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  accessLogging:
  - providers: [{name: envoy}]
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: a-permissive, namespace: default, creationTimestamp: "2024-02-01T00:00:00Z"}
spec:
  mtls: {mode: PERMISSIVE}
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: b-strict, namespace: default, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  mtls: {mode: STRICT}
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: a-to-ratings, namespace: default, creationTimestamp: "2024-02-01T00:00:00Z"}
spec:
  hosts: [reviews]
  http: [{route: [{destination: {host: ratings}}]}]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: b-to-details, namespace: default, creationTimestamp: "2024-01-01T00:00:00Z"}
spec:
  hosts: [reviews]
  http: [{route: [{destination: {host: details}}]}]
`;

let store: LocalStore;
let cleanup: () => void;
before(() => ({ store, cleanup } = tempStore()));
after(() => cleanup());

test('stored inputs keep the creationTimestamp of the kinds the compile orders by age', () => {
  for (const [apiVersion, kind, spec] of [
    ['networking.istio.io/v1', 'Sidecar', { egress: [{ hosts: ['*/*'] }] }],
    ['telemetry.istio.io/v1', 'Telemetry', {}],
    ['networking.istio.io/v1alpha3', 'EnvoyFilter', {}],
    ['security.istio.io/v1', 'PeerAuthentication', {}],
    [
      'networking.istio.io/v1',
      'ServiceEntry',
      { hosts: ['api.example.com'], ports: [{ number: 443, name: 'tls', protocol: 'TLS' }], resolution: 'DNS' },
    ],
    ['networking.istio.io/v1', 'VirtualService', { hosts: ['a'], http: [{ route: [{ destination: { host: 'a' } }] }] }],
  ] as const) {
    const raw = {
      apiVersion,
      kind,
      metadata: {
        name: 'x',
        namespace: 'ns',
        creationTimestamp: '2024-01-01T00:00:00Z',
        uid: 'u',
        resourceVersion: '7',
      },
      spec,
    };
    assert.deepEqual(
      storedDocument(raw, nodeSha256Hex)?.object.metadata,
      { name: 'x', namespace: 'ns', creationTimestamp: '2024-01-01T00:00:00Z' },
      kind,
    );
  }
  // Kinds whose age the compile does not read keep none (their digests do not move).
  const dr = {
    apiVersion: 'networking.istio.io/v1',
    kind: 'DestinationRule',
    metadata: { name: 'x', namespace: 'ns', creationTimestamp: '2024-01-01T00:00:00Z' },
    spec: { host: 'a' },
  };
  assert.deepEqual(storedDocument(dr, nodeSha256Hex)?.object.metadata, { name: 'x', namespace: 'ns' });
});

test('a version whose Sidecar, Telemetry, PeerAuthentication and VirtualService are chosen by age verifies byte-identically', async () => {
  const r = compileTexts(
    [
      { file: 'state.yaml', text: STATE },
      { file: 'aged.yaml', text: AGED },
    ],
    { hasher: nodeSha256Hex },
  );
  assert.equal(r.diagnostics.filter((d) => d.severity === 'error').length, 0);
  // Without the ages the compile picks other objects: the ages decide this snapshot.
  const byName = compileTexts(
    [
      { file: 'state.yaml', text: STATE },
      { file: 'aged.yaml', text: AGED.replaceAll(/, creationTimestamp: "[^"]*"/g, '') },
    ],
    { hasher: nodeSha256Hex },
  );
  assert.notEqual(byName.snapshot.digest, r.snapshot.digest);
  // The VirtualServices' ages alone decide too (b-to-details, older, routes reviews).
  const vsByName = compileTexts(
    [
      { file: 'state.yaml', text: STATE },
      {
        file: 'aged.yaml',
        text: AGED.replaceAll(/(name: [ab]-to-[a-z]+, namespace: default), creationTimestamp: "[^"]*"/g, '$1'),
      },
    ],
    { hasher: nodeSha256Hex },
  );
  assert.notEqual(vsByName.snapshot.digest, r.snapshot.digest);
  const reviewsRoute = (result: typeof r) =>
    JSON.stringify(result.diagnostics.filter((d) => d.code === 'conflicting-virtual-service').map((d) => d.name));
  assert.equal(reviewsRoute(r), '["a-to-ratings"]');
  assert.equal(reviewsRoute(vsByName), '["b-to-details"]');
  await publishAndVerify(store, r);
});
