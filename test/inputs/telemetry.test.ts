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
      'warning unsupported-field Telemetry default/full spec.tracing',
    ],
  );
  // Only what the compiler reads: providers, mode, disabled (false: absent).
  assert.deepEqual(full.telemetries[0]?.accessLogging, [{ providers: ['stdout'], mode: 'CLIENT' }]);
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
  assert.deepEqual(
    ok.diagnostics.map((d) => `${d.code} ${d.field}`),
    ['unsupported-field spec.defaultProviders.tracing'],
  );
  const both = onlyError(
    mesh(`  extensionProviders:\n  - name: x\n    envoyFileAccessLog: { logFormat: { text: a, labels: {} } }`),
  );
  assert.equal(both.field, 'spec.extensionProviders[0].envoyFileAccessLog.logFormat');
  const notList = onlyError(mesh('  defaultProviders: { accessLogging: envoy }'));
  assert.equal(notList.field, 'spec.defaultProviders.accessLogging');
  // A mesh without them stores nothing new.
  const plain = mesh('  accessLogFile: /dev/stdout');
  assert.equal(plain.meshConfig.defaultAccessLogProviders, undefined);
  assert.equal(plain.meshConfig.accessLogFormatting, undefined);
  // Encoding without a file: kept for the built-in envoy provider.
  assert.deepEqual(mesh('  accessLogEncoding: JSON').meshConfig.accessLogFormatting, { encoding: 'JSON' });
});
