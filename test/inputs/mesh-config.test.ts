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

test("Istio's istio ConfigMap: used fields read, trustDomain silent, others (and defaultConfig's agent fields) info", () => {
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
    enableTracing: true
`);
  assert.deepEqual(errors(inputs), []);
  assert.deepEqual(inputs.meshConfig, {
    domainSuffix: 'cluster.local',
    enableAutoMtls: false,
    rootNamespace: 'mesh-root',
    connectTimeoutMs: 1000,
    outboundTrafficPolicy: 'REGISTRY_ONLY',
  });
  assert.deepEqual(inputs.diagnostics.map((d) => [d.severity, d.code, d.field]).sort(), [
    ['info', 'ignored-field', 'data.mesh.defaultConfig.discoveryAddress'],
  ]);
});

test('defaultHttpRetryPolicy, access log fields, protocolDetectionTimeout: read from both forms', () => {
  const fields = `defaultHttpRetryPolicy: { attempts: 3, perTryTimeout: 1s, retryOn: "5xx,429", retryRemoteLocalities: true }
accessLogFile: /dev/stdout
accessLogEncoding: JSON
accessLogFormat: '{"code": "%RESPONSE_CODE%", "up": {"h": "%UPSTREAM_HOST%"}}'
protocolDetectionTimeout: 250ms`;
  const expected = {
    ...DEFAULT_MESH_CONFIG,
    defaultHttpRetryPolicy: { attempts: 3, perTryTimeoutMs: 1000, retryOn: '5xx,429', retryRemoteLocalities: true },
    accessLog: {
      path: '/dev/stdout',
      encoding: 'JSON',
      json: { code: '%RESPONSE_CODE%', up: { h: '%UPSTREAM_HOST%' } },
    },
    protocolDetectionTimeoutMs: 250,
  };
  const indent = (n: number) =>
    fields
      .split('\n')
      .map((l) => ' '.repeat(n) + l)
      .join('\n');
  const kind = loadText(`apiVersion: meshsnap.dev/v1alpha1\nkind: MeshConfig\nspec:\n${indent(2)}\n`);
  assert.deepEqual(errors(kind), []);
  assert.deepEqual(kind.meshConfig, expected);
  const cm = loadText(
    `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: istio, namespace: istio-system }\ndata:\n  mesh: |\n${indent(4)}\n`,
  );
  assert.deepEqual(cm.diagnostics, []);
  assert.deepEqual(cm.meshConfig, expected);
  // 0s (Istio's default) and an unset file leave the model as without the fields.
  const quiet = loadText(
    'apiVersion: meshsnap.dev/v1alpha1\nkind: MeshConfig\nspec: { protocolDetectionTimeout: 0s, accessLogFile: "" }',
  );
  assert.deepEqual(quiet.meshConfig, DEFAULT_MESH_CONFIG);
});

test('the new mesh fields are checked as istiod does, errors naming their path', () => {
  const cm = (mesh: string) =>
    loadText(
      `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: istio, namespace: istio-system }\ndata:\n  mesh: |\n    ${mesh}\n`,
    );
  const spec = (body: string) => loadText(`apiVersion: meshsnap.dev/v1alpha1\nkind: MeshConfig\nspec: ${body}`);
  const fieldsOf = (i: ReturnType<typeof loadText>) => errors(i).map((d) => d.field);
  assert.deepEqual(fieldsOf(cm('accessLogEncoding: XML')), ['data.mesh.accessLogEncoding']);
  // ValidateProtocolDetectionTimeout: whole milliseconds only.
  assert.deepEqual(fieldsOf(cm('protocolDetectionTimeout: 1500us')), ['data.mesh.protocolDetectionTimeout']);
  assert.deepEqual(fieldsOf(spec('{ protocolDetectionTimeout: soon }')), ['spec.protocolDetectionTimeout']);
  assert.deepEqual(fieldsOf(spec('{ defaultHttpRetryPolicy: { attempts: many } }')), [
    'spec.defaultHttpRetryPolicy.attempts',
  ]);
  assert.deepEqual(fieldsOf(spec('{ defaultHttpRetryPolicy: { perTryTimeout: 3 } }')), [
    'spec.defaultHttpRetryPolicy.perTryTimeout',
  ]);
  assert.deepEqual(fieldsOf(spec(`{ accessLogFile: /dev/stdout, accessLogFormat: "${'x'.repeat(16_385)}" }`)), [
    'spec.accessLogFormat',
  ]);
  // A JSON format istiod cannot parse: it logs an error and uses its default JSON format.
  const badJson = cm(`{ accessLogFile: /dev/stdout, accessLogEncoding: JSON, accessLogFormat: "not json" }`);
  assert.deepEqual(errors(badJson), []);
  assert.deepEqual(
    badJson.diagnostics.map((d) => [d.severity, d.field]),
    [['warning', 'data.mesh.accessLogFormat']],
  );
  assert.deepEqual(badJson.meshConfig.accessLog, { path: '/dev/stdout', encoding: 'JSON' });
  // Without a file there is no access log: the format only gets an info.
  const noFile = spec('{ accessLogFormat: "%START_TIME%" }');
  assert.deepEqual(
    noFile.diagnostics.map((d) => [d.severity, d.field]),
    [['info', 'spec.accessLogFormat']],
  );
  assert.equal(noFile.meshConfig.accessLog, undefined);
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
