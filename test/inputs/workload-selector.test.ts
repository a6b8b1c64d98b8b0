/**
 * Workload selectors of the policies and of DestinationRules, as istiod's validateWorkloadSelector
 * (pkg/config/validation/validation.go) checks them for AuthorizationPolicy, PeerAuthentication,
 * RequestAuthentication, Telemetry and DestinationRule: an empty key or a `*` in a key or a value
 * refuses the object; a selector without labels is a warning.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadText } from './helpers.js';

const KINDS: readonly { kind: string; apiVersion: string; field: string; spec: string }[] = [
  { kind: 'AuthorizationPolicy', apiVersion: 'security.istio.io/v1', field: 'selector', spec: '' },
  { kind: 'PeerAuthentication', apiVersion: 'security.istio.io/v1', field: 'selector', spec: '' },
  { kind: 'RequestAuthentication', apiVersion: 'security.istio.io/v1', field: 'selector', spec: '' },
  { kind: 'Telemetry', apiVersion: 'telemetry.istio.io/v1', field: 'selector', spec: '' },
  { kind: 'DestinationRule', apiVersion: 'networking.istio.io/v1', field: 'workloadSelector', spec: 'host: a, ' },
];

const doc = (k: (typeof KINDS)[number], selector: string): string => `apiVersion: ${k.apiVersion}
kind: ${k.kind}
metadata: {name: p, namespace: ns}
spec: {${k.spec}${k.field}: ${selector}}`;

/** What the load made of the object: kept or refused, and its diagnostics at the selector. */
function load(k: (typeof KINDS)[number], selector: string) {
  const inputs = loadText(doc(k, selector));
  const all = Object.entries(inputs).flatMap(([key, v]) => (key !== 'diagnostics' && Array.isArray(v) ? v : []));
  const kept = all.some((o) => (o as { kind?: string }).kind === k.kind);
  const at = inputs.diagnostics
    .filter((d) => d.field?.startsWith(`spec.${k.field}`))
    .map((d) => [d.severity, d.message] as const);
  return { kept, at };
}

for (const k of KINDS) {
  test(`${k.kind}: istiod's selector checks`, () => {
    assert.deepEqual(load(k, '{matchLabels: {app: web}}'), { kept: true, at: [] });

    const wildValue = load(k, '{matchLabels: {app: "*"}}');
    assert.equal(wildValue.kept, false);
    assert.deepEqual(wildValue.at, [['error', 'wildcard is not supported in selector: "app=*"']]);

    const wildKey = load(k, '{matchLabels: {"app*": web}}');
    assert.equal(wildKey.kept, false);
    assert.deepEqual(wildKey.at, [['error', 'wildcard is not supported in selector: "app*=web"']]);

    const emptyKey = load(k, '{matchLabels: {"": web}}');
    assert.equal(emptyKey.kept, false);
    assert.deepEqual(emptyKey.at, [['error', 'empty key is not supported in selector: "=web"']]);

    const none = load(k, '{}');
    assert.equal(none.kept, true);
    assert.deepEqual(none.at, [['warning', 'workload selector specified without labels']]);
  });
}
