import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_MESH_CONFIG } from '../../src/model/mesh-config.js';
import { parseDurationMs } from '../../src/inputs/validate/duration.js';
import { errors, loadText } from './helpers.js';

test('no mesh config: the defaults', () => {
  assert.deepEqual(loadText('apiVersion: v1\nkind: Namespace\nmetadata: { name: a }').meshConfig, DEFAULT_MESH_CONFIG);
});

test('kind MeshConfig, with Istio outboundTrafficPolicy form', () => {
  const inputs = loadText(`apiVersion: meshsnap.dev/v1alpha1
kind: MeshConfig
metadata: { name: mesh }
spec:
  domainSuffix: example.internal
  outboundTrafficPolicy: { mode: REGISTRY_ONLY }
  connectTimeout: 2.5s
`);
  assert.deepEqual(errors(inputs), []);
  assert.deepEqual(inputs.meshConfig, {
    ...DEFAULT_MESH_CONFIG,
    domainSuffix: 'example.internal',
    outboundTrafficPolicy: 'REGISTRY_ONLY',
    connectTimeoutMs: 2500,
  });
});

test("Istio's istio ConfigMap: used fields read, defaultConfig/trustDomain silent, others info", () => {
  const inputs = loadText(`apiVersion: v1
kind: ConfigMap
metadata: { name: istio, namespace: istio-system }
data:
  mesh: |-
    defaultConfig:
      discoveryAddress: istiod.istio-system.svc:15012
    trustDomain: cluster.local
    enableAutoMtls: false
    rootNamespace: mesh-root
    connectTimeout: 1s
    outboundTrafficPolicy:
      mode: REGISTRY_ONLY
    accessLogFile: /dev/stdout
`);
  assert.deepEqual(errors(inputs), []);
  assert.deepEqual(inputs.meshConfig, {
    domainSuffix: 'cluster.local',
    enableAutoMtls: false,
    rootNamespace: 'mesh-root',
    connectTimeoutMs: 1000,
    outboundTrafficPolicy: 'REGISTRY_ONLY',
  });
  assert.deepEqual(
    inputs.diagnostics.map((d) => [d.severity, d.code, d.field]),
    [['info', 'ignored-field', 'data.mesh.accessLogFile']],
  );
});

test('two mesh configs: error, and a bad mode is an error', () => {
  const a = 'apiVersion: meshsnap.dev/v1alpha1\nkind: MeshConfig\nspec: { enableAutoMtls: false }';
  const b = 'apiVersion: meshsnap.dev/v1alpha1\nkind: MeshConfig\nspec: { enableAutoMtls: true }';
  const twice = loadText(`${a}\n---\n${b}`);
  assert.deepEqual(
    errors(twice).map((d) => d.code),
    ['duplicate-mesh-config'],
  );
  assert.equal(loadText(`${b}\n---\n${a}`).meshConfig.enableAutoMtls, twice.meshConfig.enableAutoMtls);
  const bad = loadText(
    'apiVersion: meshsnap.dev/v1alpha1\nkind: MeshConfig\nspec: { outboundTrafficPolicy: SOMETIMES }',
  );
  assert.deepEqual(
    errors(bad).map((d) => d.field),
    ['spec.outboundTrafficPolicy'],
  );
  assert.deepEqual(bad.meshConfig, DEFAULT_MESH_CONFIG);
});

test('Istio durations', () => {
  const cases: [string, number | undefined][] = [
    ['1s', 1000],
    ['0.5s', 500],
    ['100ms', 100],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['2.5s', 2500],
    ['1m30s', 90_000],
    ['250us', 0.25],
    ['', undefined],
    ['1', undefined],
    ['-1s', undefined],
    ['1 s', undefined],
    ['s', undefined],
    ['1d', undefined],
  ];
  for (const [text, ms] of cases) assert.equal(parseDurationMs(text), ms, text);
});
