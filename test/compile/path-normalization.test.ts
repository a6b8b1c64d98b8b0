/**
 * MeshConfig `pathNormalization`, as istiod turns it into xDS (pilot/pkg/networking/core/
 * listener_builder.go buildHTTPConnectionManager, which builds every sidecar and gateway HCM): from
 * the istio ConfigMap to the HCMs a sidecar (inbound and outbound) and a gateway are served, and
 * to the path `explain` says the routes and RBAC see.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeRequestPath } from '../../src/explain/path-normalize.js';
import { compile, views, type Json } from '../helpers/mesh-config-views.js';
import { loadText } from '../inputs/helpers.js';

const everyHcm = (mesh = ''): Json[] => {
  const result = compile(mesh);
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info'),
    [],
  );
  const v = views(result);
  assert.ok(v.inbound.length > 0 && v.outbound.length > 0 && v.gateway.length === 1);
  return [...v.inbound, ...v.outbound, ...v.gateway];
};

const normalization = (h: Json) => [h.normalize_path, h.merge_slashes, h.path_with_escaped_slashes_action];

test('no pathNormalization, DEFAULT and BASE: paths normalized, slashes kept (byte-identical)', () => {
  const unset = everyHcm();
  for (const h of unset) assert.deepEqual(normalization(h), [true, undefined, 'KEEP_UNCHANGED']);
  for (const mode of ['DEFAULT', 'BASE']) {
    const set = everyHcm(`pathNormalization: {normalization: ${mode}}`);
    assert.deepEqual(set, unset, mode);
  }
});

test('NONE turns normalize_path off on every HCM', () => {
  for (const h of everyHcm('pathNormalization: {normalization: NONE}'))
    assert.deepEqual(normalization(h), [false, undefined, 'KEEP_UNCHANGED']);
});

test('MERGE_SLASHES adds merge_slashes; DECODE_AND_MERGE_SLASHES also unescapes %2F and %5C', () => {
  for (const h of everyHcm('pathNormalization: {normalization: MERGE_SLASHES}'))
    assert.deepEqual(normalization(h), [true, true, 'KEEP_UNCHANGED']);
  const decoding = everyHcm('pathNormalization: {normalization: DECODE_AND_MERGE_SLASHES}');
  for (const h of decoding) assert.deepEqual(normalization(h), [true, true, 'UNESCAPE_AND_FORWARD']);
  // What the routes and the RBAC filter then see (Envoy: unescape, normalize, merge).
  assert.equal(normalizeRequestPath(decoding[0] as Json, '/public%2F..%2F%2fadmin?x=%2F'), '/admin?x=%2F');
  assert.equal(
    normalizeRequestPath(everyHcm('pathNormalization: {normalization: NONE}')[0] as Json, '/a/../b'),
    '/a/../b',
  );
});

test('pathNormalization is validated: an unknown mode is an error, an unknown key a warning', () => {
  const bad = compile('pathNormalization: {normalization: MERGE}');
  assert.ok(
    bad.diagnostics.some((d) => d.severity === 'error' && d.field === 'data.mesh.pathNormalization.normalization'),
    JSON.stringify(bad.diagnostics),
  );
  const unknown = compile('pathNormalization: {normalization: NONE, mode: x}');
  assert.ok(
    unknown.diagnostics.some((d) => d.code === 'unknown-field' && d.field === 'data.mesh.pathNormalization.mode'),
    JSON.stringify(unknown.diagnostics),
  );
  assert.ok(!unknown.diagnostics.some((d) => d.field === 'data.mesh.pathNormalization' && d.code === 'ignored-field'));
});

test('the kind MeshConfig form reads it too', () => {
  const inputs = loadText(`apiVersion: meshsnap.dev/v1alpha1
kind: MeshConfig
spec:
  pathNormalization: {normalization: DECODE_AND_MERGE_SLASHES}
`);
  assert.equal(inputs.meshConfig.pathNormalization, 'DECODE_AND_MERGE_SLASHES');
});
