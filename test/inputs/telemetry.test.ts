/**
 * Telemetry (telemetry.istio.io v1, v1alpha1) validation, as istiod's ValidateTelemetry and the
 * CRD: Istio's own valid and invalid fixtures (pkg/config/validation/testdata/crds) as facts, the
 * model kept (only what the compiler reads) and the warnings for what is not applied.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import { parseDocuments } from '../../src/inputs/parse.js';
import { retainedForStorage } from '../../src/inputs/retain.js';
import { canonicalObject } from '../../src/snapshot/stored-inputs/canonical-object.js';
import { FIXTURES } from '../helpers/paths.js';
import { errors, loadText, onlyError } from './helpers.js';

const CRD_CASES = join(FIXTURES, 'istio', 'pkg', 'config', 'validation', 'testdata', 'crds');

/** The documents of a fixture, each as YAML text without its `_err` key, with that key. */
function fixtureDocs(file: string): { text: string; err?: string; name: string }[] {
  const docs = parseAllDocuments(readFileSync(join(CRD_CASES, file), 'utf8')).map((d) => d.toJSON() as unknown);
  return docs.flatMap((raw) => {
    if (raw === null) return [];
    const o = raw as Record<string, unknown> & { metadata: { name: string } };
    const err = o._err as string | undefined;
    delete o._err;
    return [{ text: JSON.stringify(o), name: o.metadata.name, ...(err !== undefined ? { err } : {}) }];
  });
}

test("Istio's valid Telemetry fixtures load, with warnings for what meshsnap does not apply", () => {
  const docs = fixtureDocs('telemetry-valid.yaml');
  assert.ok(docs.length >= 3);
  for (const doc of docs) {
    const set = loadText(doc.text, 'telemetry-valid.yaml');
    assert.deepEqual(errors(set), [], doc.name);
    assert.equal(set.telemetries.length, 1, doc.name);
  }
  const full = loadText(docs.find((d) => d.name === 'full')!.text, 'telemetry-valid.yaml');
  assert.deepEqual(
    full.diagnostics.map((d) => `${d.severity} ${d.code} ${d.kind} ${d.namespace}/${d.name} ${d.field}`).sort(),
    [
      'warning unsupported-field Telemetry default/full spec.accessLogging[0].filter',
      'warning unsupported-field Telemetry default/full spec.metrics',
    ],
  );
  // Only what the compiler reads: providers, mode, disabled (false: absent).
  assert.deepEqual(full.telemetries[0]?.accessLogging, [{ providers: ['stdout'], mode: 'CLIENT' }]);
  // Tracing is applied: CLIENT_AND_SERVER is no mode, booleans kept as given (false too), tags by name.
  assert.deepEqual(full.telemetries[0]?.tracing, [
    {
      providers: ['otlp'],
      randomSamplingPercentage: 54.54,
      useRequestIdForTraceSampling: true,
      disableSpanReporting: false,
      customTags: {
        env: { environment: { name: 'NAME', defaultValue: 'default' } },
        header: { header: { name: 'x-name', defaultValue: 'default name' } },
        literal: { literal: 'default literal' },
      },
    },
  ]);
});

test("Istio's invalid Telemetry fixtures are refused, naming file, object and field", () => {
  const fields: Record<string, string> = {
    'bad-provider': 'spec.metrics[0].providers[0].name',
    'bad-custom-metric': 'spec.metrics[0].overrides[0].match.customMetric',
    'bad-tag-upsert': 'spec.metrics[0].overrides[0].tagOverrides.foo.value',
    'bad-tag-remove': 'spec.metrics[0].overrides[0].tagOverrides.foo.value',
  };
  const docs = fixtureDocs('telemetry-invalid.yaml');
  assert.deepEqual(docs.map((d) => d.name).sort(), Object.keys(fields).sort());
  for (const doc of docs) {
    const set = loadText(doc.text, 'telemetry-invalid.yaml');
    const e = onlyError(set);
    assert.deepEqual(
      [e.file, e.kind, e.namespace, e.name, e.field],
      ['telemetry-invalid.yaml', 'Telemetry', 'default', doc.name, fields[doc.name]],
      `${doc.name}: ${doc.err}`,
    );
    assert.equal(set.telemetries.length, 0);
  }
});

test('Telemetry checks: providers, mode, filter, selection, tracing', () => {
  const tel = (spec: string) =>
    loadText(
      `apiVersion: telemetry.istio.io/v1\nkind: Telemetry\nmetadata: { name: t, namespace: ns }\nspec: ${spec}\n`,
    );
  const err = (spec: string) => {
    const e = onlyError(tel(spec));
    return `${e.field}: ${e.message}`;
  };
  assert.match(
    err('{ accessLogging: [{ providers: [{ name: "" }] }] }'),
    /^spec.accessLogging\[0\].providers\[0\].name: providers.name may not be empty/,
  );
  assert.match(
    err('{ accessLogging: [{ match: { mode: BOTH } }] }'),
    /^spec.accessLogging\[0\].match.mode: must be one of/,
  );
  assert.match(
    err('{ accessLogging: [{ filter: { expression: "" } }] }'),
    /^spec.accessLogging\[0\].filter.expression: must be a valid CEL/,
  );
  assert.match(err('{ accessLogging: [{ disabled: maybe }] }'), /^spec.accessLogging\[0\].disabled/);
  assert.match(
    err('{ selector: { matchLabels: { app: a } }, targetRefs: [{ kind: Service, name: a }] }'),
    /^spec: only one of selector, targetRef or targetRefs/,
  );
  assert.match(
    err('{ targetRef: { kind: Gateway, name: a, namespace: other } }'),
    /^spec.targetRef.namespace: cross namespace referencing/,
  );
  assert.match(err('{ tracing: [{ randomSamplingPercentage: 101 }] }'), /randomSamplingPercentage must be in range/);
  assert.match(
    err('{ tracing: [{ customTags: { a: { literal: {} } } }] }'),
    /^spec.tracing\[0\].customTags.a.literal.value/,
  );
  assert.match(err('{ metrics: [{ reportingInterval: 0s }] }'), /greater than 1ms/);
  const unknown = tel('{ accessLogging: [{ provider: [] }] }');
  assert.deepEqual(
    unknown.diagnostics.map((d) => `${d.code} ${d.field}`),
    ['unknown-field spec.accessLogging[0].provider'],
  );

  // An empty selector selects no less than none: namespace-wide, as istiod's test (no matchLabels, no targetRefs).
  const wide = tel('{ selector: {}, accessLogging: [{ disabled: true, match: { mode: CLIENT_AND_SERVER } }] }');
  assert.deepEqual(errors(wide), []);
  assert.equal(wide.telemetries[0]?.selects, undefined);
  assert.deepEqual(wide.telemetries[0]?.accessLogging, [{ disabled: true }]);
  // A selector or a targetRef to a Gateway API Gateway is applied: no warning.
  const selecting = tel('{ selector: { matchLabels: { app: a } } }');
  assert.equal(selecting.telemetries[0]?.selects, true);
  assert.deepEqual(selecting.telemetries[0]?.matchLabels, { app: 'a' });
  assert.deepEqual(selecting.diagnostics, []);
  const gateway = tel('{ targetRef: { group: gateway.networking.k8s.io, kind: Gateway, name: gw } }');
  assert.deepEqual(gateway.diagnostics, []);
  assert.deepEqual(gateway.telemetries[0]?.targetRefs, [
    { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' },
  ]);
  // targetRefs win over targetRef (istiod's GetTargetRefs) only when both are set, which is refused; each is read alone.
  const refs = tel(
    '{ targetRefs: [{ group: gateway.networking.k8s.io, kind: Gateway, name: gw }, { kind: Service, name: svc }, { group: networking.istio.io, kind: Gateway, name: istio-gw }, { kind: Gateway, name: core-gw }] }',
  );
  assert.deepEqual(errors(refs), []);
  assert.deepEqual(
    refs.diagnostics.map((d) => `${d.severity} ${d.code} ${d.field}`),
    [
      // A Service is a waypoint's target (meshsnap serves none); an Istio Gateway or a Gateway without the Gateway API group attaches to nothing in istiod.
      'warning unsupported-field spec.targetRefs[1]',
      'warning policy-not-applied spec.targetRefs[2]',
      'warning policy-not-applied spec.targetRefs[3]',
    ],
  );
  assert.equal(refs.telemetries[0]?.targetRefs?.length, 4);
});

test('mesh config: defaultProviders.accessLogging and envoyFileAccessLog providers are read and checked', () => {
  const mesh = (body: string) =>
    loadText(`apiVersion: meshsnap.dev/v1alpha1\nkind: MeshConfig\nmetadata: { name: mesh }\nspec:\n${body}\n`);
  const ok = mesh(`  defaultProviders: { accessLogging: [envoy, json], tracing: [zipkin] }
  extensionProviders:
  - name: json
    envoyFileAccessLog: { path: /var/log/a.log, omitEmptyValues: true, logFormat: { labels: { a: "%START_TIME%", b: { c: [1, true, null] } } } }
  - name: als
    envoyHttpAls: { service: als.default.svc.cluster.local, port: 9000 }`);
  assert.deepEqual(errors(ok), []);
  assert.deepEqual(ok.meshConfig.defaultAccessLogProviders, ['envoy', 'json']);
  assert.deepEqual(ok.meshConfig.defaultTracingProviders, ['zipkin']);
  assert.deepEqual(ok.meshConfig.extensionProviders, [
    {
      name: 'json',
      envoyFileAccessLog: {
        path: '/var/log/a.log',
        logFormat: { labels: { a: '%START_TIME%', b: { c: [1, true, null] } } },
        omitEmptyValues: true,
      },
    },
    { name: 'als', unbuiltAccessLog: 'envoyHttpAls' },
  ]);
  // defaultProviders.tracing is applied now: no "not applied" warning.
  assert.deepEqual(ok.diagnostics, []);
  const both = onlyError(
    mesh(`  extensionProviders:\n  - name: x\n    envoyFileAccessLog: { logFormat: { text: a, labels: {} } }`),
  );
  assert.equal(both.field, 'spec.extensionProviders[0].envoyFileAccessLog.logFormat');
  const notList = onlyError(mesh('  defaultProviders: { accessLogging: envoy }'));
  assert.equal(notList.field, 'spec.defaultProviders.accessLogging');
  // A mesh without them stores nothing new.
  const plain = mesh('  accessLogFile: /dev/stdout');
  assert.equal(plain.meshConfig.defaultAccessLogProviders, undefined);
  assert.equal(plain.meshConfig.defaultTracingProviders, undefined);
  assert.equal(plain.meshConfig.accessLogFormatting, undefined);
  // Encoding without a file: kept for the built-in envoy provider.
  assert.deepEqual(mesh('  accessLogEncoding: JSON').meshConfig.accessLogFormatting, { encoding: 'JSON' });
});

const telemetry = (spec: string) =>
  loadText(`apiVersion: telemetry.istio.io/v1\nkind: Telemetry\nmetadata: { name: t, namespace: ns }\nspec: ${spec}\n`);
const diag = (d: Diagnostic) => `${d.severity} ${d.code} ${d.field}`;

test('Telemetry tracing is read into the model: entries in order, modes, booleans as given, custom tags of each kind', () => {
  const set = telemetry(`
  tracing:
  - match: { mode: CLIENT }
    providers: [{ name: zipkin }]
    randomSamplingPercentage: 0
    customTags: {}
  - match: { mode: SERVER }
    disableSpanReporting: true
    useRequestIdForTraceSampling: false
    enableIstioTags: false
    disableContextPropagation: false
    customTags:
      lit: { literal: { value: v } }
      env: { environment: { name: POD_NAME } }
      hdr: { header: { name: x-user, defaultValue: anon } }
      fmt: { formatter: { value: "%REQ(:PATH)%" } }
  - match: { mode: CLIENT_AND_SERVER }
    providers: [{ name: otel }]
    randomSamplingPercentage: 12.5
    enableIstioTags: true
    disableContextPropagation: true`);
  assert.deepEqual(errors(set), []);
  assert.deepEqual(set.telemetries[0]?.tracing, [
    // customTags: {} is given: it replaces the parent's tags with none.
    { mode: 'CLIENT', providers: ['zipkin'], randomSamplingPercentage: 0, customTags: {} },
    {
      mode: 'SERVER',
      disableSpanReporting: true,
      useRequestIdForTraceSampling: false,
      enableIstioTags: false,
      disableContextPropagation: false,
      customTags: {
        env: { environment: { name: 'POD_NAME' } },
        fmt: { formatter: '%REQ(:PATH)%' },
        hdr: { header: { name: 'x-user', defaultValue: 'anon' } },
        lit: { literal: 'v' },
      },
    },
    { providers: ['otel'], randomSamplingPercentage: 12.5, enableIstioTags: true, disableContextPropagation: true },
  ]);
  assert.deepEqual(set.diagnostics.map(diag), [
    'warning invalid-field spec.tracing',
    'warning unsupported-field spec.tracing[1].customTags.fmt.formatter',
    'warning unsupported-field spec.tracing[2].disableContextPropagation',
  ]);
  const [several, formatter, propagation] = set.diagnostics;
  assert.match(
    formatter!.message,
    /not applied: the Envoy API meshsnap encodes has no formatter custom tag \(Istio 1\.29\+/,
  );
  assert.match(
    propagation!.message,
    /not applied: the Envoy API meshsnap encodes has no HttpConnectionManager no_context_propagation \(Istio 1\.30\+ proxies\)/,
  );
  assert.equal(several!.message, 'multiple tracing is not currently supported');
  // The "Telemetry tracing is not applied" warning is gone; metrics keep theirs.
  const both = telemetry(
    '{ tracing: [{ providers: [{ name: zipkin }] }], metrics: [{ providers: [{ name: prometheus }] }] }',
  );
  assert.deepEqual(both.diagnostics.map(diag), ['warning unsupported-field spec.metrics']);
  assert.ok(!both.diagnostics.some((d) => /tracing is not applied/.test(d.message)));
  assert.deepEqual(both.telemetries[0]?.tracing, [{ providers: ['zipkin'] }]);
  // No tracing, or an empty list: no `tracing` on the model.
  assert.equal(telemetry('{ tracing: [] }').telemetries[0]?.tracing, undefined);
  assert.equal(telemetry('{ accessLogging: [{ disabled: true }] }').telemetries[0]?.tracing, undefined);
});

test("istiod's TestValidateTelemetry tracing cases, as facts", () => {
  // "multiple providers": a warning; istiod uses the first, the list is kept in order.
  const providers = telemetry('{ tracing: [{ providers: [{ name: a }, { name: b }] }] }');
  assert.deepEqual(errors(providers), []);
  assert.deepEqual(providers.diagnostics.map(diag), ['warning invalid-field spec.tracing[0].providers']);
  assert.match(providers.diagnostics[0]!.message, /multiple providers is not currently supported/);
  assert.deepEqual(providers.telemetries[0]?.tracing, [{ providers: ['a', 'b'] }]);
  // "multiple tracers": a warning; both (empty) entries kept.
  const tracers = telemetry('{ tracing: [{}, {}] }');
  assert.deepEqual(errors(tracers), []);
  assert.deepEqual(tracers.diagnostics.map(diag), ['warning invalid-field spec.tracing']);
  assert.deepEqual(tracers.telemetries[0]?.tracing, [{}, {}]);
  // "bad randomSamplingPercentage".
  assert.match(
    onlyError(telemetry('{ tracing: [{ randomSamplingPercentage: 101 }] }')).message,
    /randomSamplingPercentage must be in range/,
  );
  assert.equal(
    onlyError(telemetry('{ tracing: [{ randomSamplingPercentage: -1 }] }')).field,
    'spec.tracing[0].randomSamplingPercentage',
  );
  // "tracing with a good custom tag" (and "good targetRef", to a Gateway API Gateway): silent.
  const good = telemetry('{ tracing: [{ customTags: { clusterID: { environment: { name: FOO } } } }] }');
  assert.deepEqual(good.diagnostics, []);
  assert.deepEqual(good.telemetries[0]?.tracing, [{ customTags: { clusterID: { environment: { name: 'FOO' } } } }]);
  const gateway = telemetry(
    '{ targetRef: { group: gateway.networking.k8s.io, kind: Gateway, name: foo }, tracing: [{ customTags: { clusterID: { environment: { name: FOO } } } }] }',
  );
  assert.deepEqual(gateway.diagnostics, []);
  assert.equal(gateway.telemetries[0]?.tracing?.length, 1);
  // "tracing with a nil custom tag".
  const nil = onlyError(telemetry('{ tracing: [{ customTags: { clusterID: null } }] }'));
  assert.deepEqual([nil.field, nil.message], ['spec.tracing[0].customTags.clusterID', 'tag may not have a nil value']);
  // The empty-value checks of each kind (and the CRD's minLength on a formatter's value).
  for (const [tag, field] of [
    ['{ literal: { value: "" } }', 'literal.value'],
    ['{ environment: { defaultValue: d } }', 'environment.name'],
    ['{ header: { name: "" } }', 'header.name'],
    ['{ formatter: {} }', 'formatter.value'],
  ] as const)
    assert.equal(
      onlyError(telemetry(`{ tracing: [{ customTags: { a: ${tag} } }] }`)).field,
      `spec.tracing[0].customTags.a.${field}`,
    );
  assert.equal(
    onlyError(telemetry('{ tracing: [{ customTags: { "": { literal: { value: a } } } }] }')).message,
    'tag name may not be empty',
  );
});

test('Telemetry tracing custom tags: one kind each (the CRD oneOf), a tag of no kind dropped with a warning', () => {
  const two = onlyError(
    telemetry('{ tracing: [{ customTags: { a: { literal: { value: x }, header: { name: y } } } }] }'),
  );
  assert.deepEqual([two.field, two.code], ['spec.tracing[0].customTags.a', 'conflicting-fields']);
  const none = telemetry('{ tracing: [{ customTags: { a: {}, b: { literal: { value: x } } } }] }');
  assert.deepEqual(errors(none), []);
  assert.deepEqual(none.diagnostics.map(diag), ['warning invalid-field spec.tracing[0].customTags.a']);
  assert.deepEqual(none.telemetries[0]?.tracing, [{ customTags: { b: { literal: 'x' } } }]);
  // Bad values are errors naming their path.
  assert.equal(
    onlyError(telemetry('{ tracing: [{ enableIstioTags: yes please }] }')).field,
    'spec.tracing[0].enableIstioTags',
  );
  assert.equal(onlyError(telemetry('{ tracing: [{ match: { mode: BOTH } }] }')).field, 'spec.tracing[0].match.mode');
  assert.equal(
    onlyError(telemetry('{ tracing: [{ customTags: { a: { header: { name: 3 } } } }] }')).field,
    'spec.tracing[0].customTags.a.header.name',
  );
});

test('Telemetry tracing: the stored form holds what is read and reads back the same', () => {
  const text = `apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: { name: t, namespace: ns, labels: { a: b } }
spec:
  selector: { matchLabels: { app: a } }
  tracing:
  - match: { mode: SERVER }
    providers: [{ name: otel }]
    randomSamplingPercentage: 5
    disableSpanReporting: false
    customTags: { lit: { literal: { value: v } }, fmt: { formatter: { value: "%START_TIME%" } } }
    enableIstioTags: true
    useRequestIdForTraceSampling: true
    disableContextPropagation: false
    somethingElse: 1`;
  const raw = parseDocuments(text, 't.yaml').docs[0]!.object;
  const stored = canonicalObject(retainedForStorage(raw)!);
  const tracing = (stored.spec as { tracing: Record<string, unknown>[] }).tracing;
  assert.deepEqual(Object.keys(tracing[0]!).sort(), [
    'customTags',
    'disableContextPropagation',
    'disableSpanReporting',
    'enableIstioTags',
    'match',
    'providers',
    'randomSamplingPercentage',
    'useRequestIdForTraceSampling',
  ]);
  assert.deepEqual(loadText(JSON.stringify(stored)).telemetries[0]?.tracing, loadText(text).telemetries[0]?.tracing);
});

test('Telemetry tracing custom tags are bounded as the ProxyConfig ones (every tag goes on every HCM the Telemetry reaches)', () => {
  const many = Array.from({ length: 65 }, (_, i) => `t${i}: {literal: {value: v}}`).join(', ');
  const tooMany = telemetry(`{tracing: [{customTags: {${many}}}]}`);
  assert.deepEqual(tooMany.diagnostics.filter((d) => d.severity === 'error').map(diag), [
    'error too-large spec.tracing[0].customTags',
  ]);
  assert.equal(tooMany.telemetries.length, 0);
  const long = 'x'.repeat(257);
  for (const tags of [`${long}: {literal: {value: v}}`, `a: {literal: {value: ${long}}}`]) {
    const r = telemetry(`{tracing: [{customTags: {${tags}}}]}`);
    assert.deepEqual(
      r.diagnostics.filter((d) => d.severity === 'error').map((d) => d.code),
      ['too-large'],
      tags.slice(0, 20),
    );
  }
  // 64 tags of 256 characters are fine.
  const fine = Array.from({ length: 64 }, (_, i) => `t${i}: {literal: {value: ${'y'.repeat(256)}}}`).join(', ');
  assert.deepEqual(errors(telemetry(`{tracing: [{customTags: {${fine}}}]}`)), []);
});
