/**
 * Gateway API objects through the rest of the pipeline: the watcher's input patching (a replaced
 * HTTPRoute compiles as a rebuilt InputSet does), stored inputs (an Istio Gateway and a Gateway API
 * Gateway of one namespace/name are two stored objects; compiling the stored objects again gives
 * the same snapshot, status diagnostics included).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile } from '../../../src/compile/index.js';
import { indexedInputs, lookupInput, withDeleted, withReplaced } from '../../../src/compile/incremental.js';
import type { HTTPRoute } from '../../../src/model/gateway-api.js';
import { compileTexts } from '../../../src/pipeline.js';
import { objectKeyOf } from '../../../src/snapshot/stored-inputs/keys.js';
import { nodeSha256Hex } from '../../../src/snapshot/store/local.js';
import { assertSameOutput } from '../incremental-helpers.js';
import { compileConformance, INFRA } from './conformance-harness.js';

const ROUTE = `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
`;

test('input patching: replacing and deleting an HTTPRoute compiles as the rebuilt InputSet does', () => {
  const before = compileConformance(ROUTE).inputs;
  const indexed = indexedInputs(before);
  const route = lookupInput(indexed, 'HTTPRoute', INFRA, 'r') as HTTPRoute;
  assert.ok(route);
  const rule = route.spec.rules[0]!;
  const moved: HTTPRoute = {
    ...route,
    spec: { ...route.spec, rules: [{ ...rule, backendRefs: [{ ...rule.backendRefs[0]!, name: 'infra-backend-v2' }] }] },
  };
  const patched = withReplaced(indexed, 'HTTPRoute', moved);
  const rebuilt = compileConformance(ROUTE.replace('infra-backend-v1', 'infra-backend-v2')).inputs;
  const a = compile(patched);
  const b = compile(rebuilt);
  assertSameOutput(a.output, b.output, 'patched HTTPRoute');
  assert.deepEqual(
    a.diagnostics.filter((d) => d.code === 'gateway-api-status').map((d) => d.status),
    b.diagnostics.filter((d) => d.code === 'gateway-api-status').map((d) => d.status),
  );
  const gone = compile(withDeleted(patched, 'HTTPRoute', INFRA, 'r'));
  assertSameOutput(gone.output, compile(compileConformance().inputs).output, 'deleted HTTPRoute');
});

test('stored inputs: an Istio Gateway and a Gateway API Gateway of the same name have distinct keys', () => {
  const istio = { apiVersion: 'networking.istio.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: 'a' } };
  const k8s = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'gw', namespace: 'a' } };
  assert.deepEqual(objectKeyOf(istio), { kind: 'Gateway', namespace: 'a', name: 'gw' });
  assert.deepEqual(objectKeyOf(k8s), { kind: 'KubernetesGateway', namespace: 'a', name: 'gw' });
});

test('stored inputs compile again to the same snapshot (what `meshsnap verify` does)', () => {
  const first = compileConformance(ROUTE);
  const texts = [...first.stored.objects.values()].map((bytes, i) => ({
    file: `stored-${i}.json`,
    text: new TextDecoder().decode(bytes),
  }));
  const again = compileTexts(texts, { hasher: nodeSha256Hex });
  assert.equal(again.snapshot.digest, first.snapshot.digest);
  const status = (r: typeof first) =>
    r.diagnostics.filter((d) => d.code === 'gateway-api-status').map((d) => [d.kind, d.name, d.status]);
  assert.deepEqual(status(again), status(first));
});
