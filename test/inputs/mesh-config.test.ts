import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import { DEFAULT_MESH_CONFIG } from '../../src/model/mesh-config.js';
import { parseDocuments } from '../../src/inputs/parse.js';
import { retainedForStorage } from '../../src/inputs/retain.js';
import { parseDurationMs } from '../../src/inputs/validate/duration.js';
import { canonicalObject } from '../../src/snapshot/stored-inputs/canonical-object.js';
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

const meshSpec = (body: string) =>
  loadText(`apiVersion: meshsnap.dev/v1alpha1\nkind: MeshConfig\nmetadata: { name: mesh }\nspec:\n${body}\n`);
const diag = (d: Diagnostic) => `${d.severity} ${d.code} ${d.field}`;

const TRACERS = `  defaultProviders: { tracing: [zipkin, ""], metrics: [prometheus] }
  extensionProviders:
  - name: zipkin
    zipkin:
      service: zipkin.istio-system.svc.cluster.local
      port: 9411
      maxTagLength: 256
      enable64bitTraceId: true
      path: /api/v2/spans
      traceContextOption: USE_B3_WITH_W3C_PROPAGATION
      timeout: 3s
      headers: [{ name: x-token, value: secret }]
  - name: otel
    opentelemetry:
      service: observability/otel-collector.observability.svc.cluster.local
      port: 4318
      maxTagLength: 100
      http:
        path: /v1/traces
        timeout: 500ms
        headers: [{ name: x-scope-orgid, value: tenant-1 }, { name: authorization, value: "Api-Token abc" }, { name: x-env, envName: COLLECTOR_TOKEN }]
      resourceDetectors: { environment: {}, dynatrace: {} }
      dynatraceSampler:
        tenant: abc123
        clusterId: -1234
        rootSpansPerMinute: 2000
        httpService:
          service: dt.example.com
          port: 443
          http: { path: /api/v2/samplingConfiguration, timeout: 1s, headers: [{ name: authorization, value: "Api-Token def" }] }
      serviceAttributeEnrichment: OTEL_SEMANTIC_CONVENTIONS
  - name: otel-grpc
    opentelemetry:
      service: otel.default.svc.cluster.local
      port: 4317
      grpc: { timeout: 2s, initialMetadata: [{ name: x-tenant, value: t1 }] }
      serviceAttributeEnrichment: ISTIO_CANONICAL
  - name: datadog
    datadog: { service: datadog-agent.default.svc.cluster.local, port: 8126, maxTagLength: 0 }
  - name: sky
    skywalking: { service: skywalking-oap.istio-system.svc.cluster.local, port: 11800, accessToken: sky-secret }
  - name: ls
    lightstep: { service: lightstep.example.com, port: 8080, accessToken: ls-secret }
  - name: prom
    prometheus: {}`;

test('tracing extension providers and defaultProviders.tracing are read into the model', () => {
  const set = meshSpec(TRACERS);
  assert.deepEqual(errors(set), []);
  // Empty names dropped, as accessLogging's.
  assert.deepEqual(set.meshConfig.defaultTracingProviders, ['zipkin']);
  assert.deepEqual(set.meshConfig.extensionProviders, [
    {
      name: 'zipkin',
      // timeout, headers and the trace context option are not in the model: not applied (warnings below).
      zipkin: {
        service: 'zipkin.istio-system.svc.cluster.local',
        port: 9411,
        maxTagLength: 256,
        enable64bitTraceId: true,
        path: '/api/v2/spans',
      },
    },
    {
      name: 'otel',
      opentelemetry: {
        service: 'observability/otel-collector.observability.svc.cluster.local',
        port: 4318,
        maxTagLength: 100,
        // The credential and the envName headers are dropped.
        http: { path: '/v1/traces', timeoutMs: 500, headers: [{ name: 'x-scope-orgid', value: 'tenant-1' }] },
        resourceDetectors: { environment: true, dynatrace: true },
        dynatraceSampler: {
          tenant: 'abc123',
          clusterId: -1234,
          rootSpansPerMinute: 2000,
          httpService: {
            service: 'dt.example.com',
            port: 443,
            http: { path: '/api/v2/samplingConfiguration', timeoutMs: 1000 },
          },
        },
      },
    },
    {
      name: 'otel-grpc',
      opentelemetry: {
        service: 'otel.default.svc.cluster.local',
        port: 4317,
        grpc: { timeoutMs: 2000, initialMetadata: [{ name: 'x-tenant', value: 't1' }] },
      },
    },
    // maxTagLength 0 is unset (proto3).
    { name: 'datadog', datadog: { service: 'datadog-agent.default.svc.cluster.local', port: 8126 } },
    { name: 'sky', skywalking: { service: 'skywalking-oap.istio-system.svc.cluster.local', port: 11800 } },
    { name: 'ls', unbuiltTracing: 'lightstep' },
    { name: 'prom' },
  ]);
  assert.deepEqual(set.diagnostics.map(diag), [
    'warning unsupported-field spec.defaultProviders.metrics',
    'warning unsupported-field spec.extensionProviders[0].zipkin.headers',
    'warning unsupported-field spec.extensionProviders[0].zipkin.timeout',
    'warning unsupported-field spec.extensionProviders[0].zipkin.traceContextOption',
    'warning secret-not-stored spec.extensionProviders[1].opentelemetry.dynatraceSampler.httpService.http.headers[0].value',
    'warning secret-not-stored spec.extensionProviders[1].opentelemetry.http.headers[1].value',
    'warning unsupported-field spec.extensionProviders[1].opentelemetry.http.headers[2].envName',
    'warning unsupported-field spec.extensionProviders[1].opentelemetry.serviceAttributeEnrichment',
    'info unsupported-field spec.extensionProviders[4].skywalking.accessToken',
  ]);
  const message = (field: string) => set.diagnostics.find((d) => d.field === `spec.${field}`)?.message ?? '';
  for (const f of ['traceContextOption', 'timeout', 'headers'])
    assert.match(message(`extensionProviders[0].zipkin.${f}`), /pre-1\.29 ZipkinConfig/, f);
  assert.equal(
    message('extensionProviders[1].opentelemetry.http.headers[2].envName'),
    "envName reads istiod's own environment; meshsnap compiles without one: header not sent",
  );
  assert.match(
    message('extensionProviders[1].opentelemetry.serviceAttributeEnrichment'),
    /OTEL_SEMANTIC_CONVENTIONS is not applied/,
  );
  assert.match(message('extensionProviders[4].skywalking.accessToken'), /istiod.*does not send it either/);
  // The "default tracing providers are not applied" warning is gone; metrics keep theirs.
  assert.ok(!set.diagnostics.some((d) => d.field === 'spec.defaultProviders.tracing'));
  // The ConfigMap form reads the same.
  const cm = loadText(
    `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: istio, namespace: istio-system }\ndata:\n  mesh: |\n${TRACERS.split(
      '\n',
    )
      .map((l) => `  ${l}`)
      .join('\n')}\n`,
  );
  assert.deepEqual(errors(cm), []);
  assert.deepEqual(cm.meshConfig, set.meshConfig);
  // Without them, nothing new in the model.
  assert.equal(meshSpec('  defaultProviders: { tracing: [""] }').meshConfig.defaultTracingProviders, undefined);
  assert.deepEqual(meshSpec('  defaultProviders: { tracing: [] }').diagnostics, []);
});

test('tracing extension providers: service and port required, and the other checks', () => {
  const fieldsOf = (body: string) => errors(meshSpec(body)).map((d) => `${d.code} ${d.field}`);
  const provider = (body: string) => `  extensionProviders:\n  - name: p\n    ${body}`;
  // istiod's TestValidateExtensionProviderTracing*: "missing port", and a missing service.
  for (const kind of ['zipkin', 'datadog', 'skywalking', 'opentelemetry']) {
    assert.deepEqual(
      fieldsOf(provider(`${kind}: { service: a.b.svc }`)),
      [`missing-field spec.extensionProviders[0].${kind}.port`],
      kind,
    );
    assert.deepEqual(
      fieldsOf(provider(`${kind}: { port: 80 }`)),
      [`missing-field spec.extensionProviders[0].${kind}.service`],
      kind,
    );
    assert.deepEqual(
      fieldsOf(provider(`${kind}: { service: "", port: 80 }`)),
      [`missing-field spec.extensionProviders[0].${kind}.service`],
      kind,
    );
    assert.deepEqual(
      fieldsOf(provider(`${kind}: { service: a, port: 70000 }`)),
      [`invalid-field spec.extensionProviders[0].${kind}.port`],
      kind,
    );
  }
  // istiod's "set both grpc and http".
  assert.deepEqual(fieldsOf(provider('opentelemetry: { service: a, port: 4317, grpc: {}, http: {} }')), [
    'conflicting-fields spec.extensionProviders[0].opentelemetry',
  ]);
  // An empty http block still selects OTLP over HTTP.
  assert.deepEqual(
    meshSpec(provider('opentelemetry: { service: a, port: 4318, http: {} }')).meshConfig.extensionProviders,
    [{ name: 'p', opentelemetry: { service: 'a', port: 4318, http: {} } }],
  );
  // The sampler's own API endpoint needs a service and a port.
  assert.deepEqual(
    fieldsOf(provider('opentelemetry: { service: a, port: 1, dynatraceSampler: { httpService: { service: dt } } }')),
    ['missing-field spec.extensionProviders[0].opentelemetry.dynatraceSampler.httpService.port'],
  );
  // Headers: a oneof of value and envName, a name, no CR/LF, at most 64.
  const header = (h: string) => provider(`opentelemetry: { service: a, port: 1, http: { headers: [${h}] } }`);
  const at = 'spec.extensionProviders[0].opentelemetry.http.headers';
  assert.deepEqual(fieldsOf(header('{ name: a, value: b, envName: C }')), [`conflicting-fields ${at}[0]`]);
  assert.deepEqual(fieldsOf(header('{ value: b }')), [`missing-field ${at}[0].name`]);
  assert.deepEqual(fieldsOf(header('{ name: a, value: "b\\r\\nx: y" }')), [`invalid-field ${at}[0].value`]);
  assert.deepEqual(fieldsOf(header(Array.from({ length: 65 }, (_, i) => `{ name: h${i}, value: v }`).join(', '))), [
    `too-large ${at}`,
  ]);
  assert.deepEqual(fieldsOf(provider(`zipkin: { service: a, port: 1, path: /${'p'.repeat(4096)} }`)), [
    'invalid-field spec.extensionProviders[0].zipkin.path',
  ]);
  // Enums and durations.
  assert.deepEqual(fieldsOf(provider('zipkin: { service: a, port: 1, traceContextOption: W3C }')), [
    'invalid-field spec.extensionProviders[0].zipkin.traceContextOption',
  ]);
  assert.deepEqual(fieldsOf(provider('opentelemetry: { service: a, port: 1, grpc: { timeout: soon } }')), [
    'invalid-field spec.extensionProviders[0].opentelemetry.grpc.timeout',
  ]);
  assert.deepEqual(fieldsOf(provider('opentelemetry: { service: a, port: 1, serviceAttributeEnrichment: OTHER }')), [
    'invalid-field spec.extensionProviders[0].opentelemetry.serviceAttributeEnrichment',
  ]);
  // USE_B3 (the default) is applied: no warning.
  assert.deepEqual(meshSpec(provider('zipkin: { service: a, port: 1, traceContextOption: USE_B3 }')).diagnostics, []);
  // Unknown fields are named.
  assert.deepEqual(meshSpec(provider('datadog: { service: a, port: 1, address: b }')).diagnostics.map(diag), [
    'warning unknown-field spec.extensionProviders[0].datadog.address',
  ]);
  // defaultProviders.tracing: a list of strings, bounded.
  assert.deepEqual(fieldsOf('  defaultProviders: { tracing: zipkin }'), [
    'invalid-field spec.defaultProviders.tracing',
  ]);
  assert.deepEqual(
    fieldsOf(`  defaultProviders: { tracing: [${Array.from({ length: 65 }, (_, i) => `p${i}`).join(', ')}] }`),
    ['too-large spec.defaultProviders.tracing'],
  );
});

test('tracing extension providers: the stored form holds what is read, not the credentials meshsnap does not use', () => {
  const text = `apiVersion: meshsnap.dev/v1alpha1\nkind: MeshConfig\nmetadata: { name: mesh }\nspec:\n${TRACERS}\n`;
  const raw = parseDocuments(text, 'mesh.yaml').docs[0]!.object;
  const stored = canonicalObject(retainedForStorage(raw)!);
  const json = JSON.stringify(stored);
  // Read again, the stored form gives the same mesh config.
  assert.deepEqual(loadText(json).meshConfig, loadText(text).meshConfig);
  assert.deepEqual((stored.spec as { defaultProviders: unknown }).defaultProviders, {
    tracing: ['zipkin', ''],
    metrics: ['prometheus'],
  });
  // skywalking's and lightstep's access tokens, zipkin's (unapplied) header values and credential headers are not stored.
  for (const secret of ['sky-secret', 'ls-secret', '"secret"', 'Api-Token']) assert.ok(!json.includes(secret), secret);
  assert.ok(json.includes('tenant-1'));
  assert.match(
    loadText(text).diagnostics.find((d) => d.code === 'secret-not-stored')?.message ?? '',
    /header "authorization" carries a credential: meshsnap stores and serves no secrets/,
  );
});

test("Istio's mesh ConfigMap: its mesh text is stored as what is read of it (JSON), without the secrets the text holds", () => {
  const mesh = TRACERS.split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
  const text = `apiVersion: v1\nkind: ConfigMap\nmetadata: { name: istio, namespace: istio-system }\ndata:\n  mesh: |\n${mesh}\n  other: kept-out\n`;
  const raw = parseDocuments(text, 'cm.yaml').docs[0]!.object;
  const stored = retainedForStorage(raw)!;
  const json = JSON.stringify(stored);
  for (const secret of ['sky-secret', 'ls-secret', '"secret"', 'Api-Token', 'kept-out'])
    assert.ok(!json.includes(secret), secret);
  const storedMesh = (stored.data as { mesh: string }).mesh;
  assert.doesNotThrow(() => JSON.parse(storedMesh));
  // The stored form reads back to the same mesh config, and storing it again changes nothing.
  const again = JSON.stringify(stored);
  assert.deepEqual(loadText(again).meshConfig, loadText(text).meshConfig);
  assert.deepEqual(retainedForStorage(JSON.parse(again)), stored);
});
