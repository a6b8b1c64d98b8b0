/** The AuthorizationPolicy validator: what it accepts, and the diagnostics naming what it refuses. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readAuthorizationPolicy } from '../../src/inputs/validate/authorization-policy.js';
import { Reader } from '../../src/inputs/validate/reader.js';
import type { Diagnostic } from '../../src/model/diagnostics.js';

function read(spec: unknown, annotations: Record<string, string> = {}) {
  const diagnostics: Diagnostic[] = [];
  const r = new Reader({ kind: 'AuthorizationPolicy', file: 'p.yaml', index: 0 }, diagnostics);
  const raw = {
    apiVersion: 'security.istio.io/v1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'p', namespace: 'foo', annotations },
    spec,
  };
  const policy = readAuthorizationPolicy(r, raw, { file: 'p.yaml', index: 0 }, 'security.istio.io/v1');
  return {
    policy,
    errors: diagnostics.filter((d) => d.severity === 'error'),
    warnings: diagnostics.filter((d) => d.severity === 'warning'),
  };
}

test('a full policy is read into the model, field by field', () => {
  const { policy, errors } = read({
    selector: { matchLabels: { app: 'httpbin' } },
    action: 'DENY',
    rules: [
      {
        from: [{ source: { principals: ['cluster.local/ns/a/sa/b'], notIpBlocks: ['10.0.0.0/8'] } }],
        to: [{ operation: { methods: ['GET'], notPaths: ['/admin/*'], ports: ['8080'] } }],
        when: [
          { key: 'request.headers[x-id]', values: ['a'] },
          { key: 'destination.port', notValues: ['9000'] },
        ],
      },
      null,
    ],
  });
  assert.deepEqual(errors, []);
  assert.deepEqual(policy?.spec, {
    selector: { matchLabels: { app: 'httpbin' } },
    action: 'DENY',
    rules: [
      {
        from: [{ source: { principals: ['cluster.local/ns/a/sa/b'], notIpBlocks: ['10.0.0.0/8'] } }],
        to: [{ operation: { methods: ['GET'], notPaths: ['/admin/*'], ports: ['8080'] } }],
        when: [
          { key: 'request.headers[x-id]', values: ['a'] },
          { key: 'destination.port', notValues: ['9000'] },
        ],
      },
      null,
    ],
  });
});

test('an absent spec is an ALLOW policy without rules (it allows nothing)', () => {
  const { policy, errors } = read(null);
  assert.deepEqual(errors, []);
  assert.deepEqual(policy?.spec, {});
});

test('CUSTOM needs a provider, and only CUSTOM may name one', () => {
  assert.deepEqual(
    read({ action: 'CUSTOM', rules: [{}] }).errors.map((e) => [e.field, e.code]),
    [['spec.provider', 'missing-field']],
  );
  assert.deepEqual(
    read({ provider: { name: 'x' }, rules: [{}] }).errors.map((e) => [e.field, e.code]),
    [['spec.provider', 'conflicting-fields']],
  );
  const ok = read({ action: 'CUSTOM', provider: { name: 'ext' }, rules: [{}] });
  assert.deepEqual(ok.errors, []);
  assert.deepEqual(ok.policy?.spec.provider, { name: 'ext' });
});

test('refused values are named by file, kind, namespace, name and field', () => {
  const { policy, errors } = read({
    action: 'REJECT',
    rules: [
      {
        from: [{ source: { ipBlocks: ['10.0.0.300'] } }, { source: {} }],
        to: [{ operation: { ports: ['http'] } }],
        when: [
          { key: 'request.colour', values: ['red'] },
          { key: 'source.ip', values: [] },
        ],
      },
    ],
  });
  assert.equal(policy, undefined);
  assert.deepEqual(
    errors.map((e) => [e.field, e.code]),
    [
      ['spec.action', 'invalid-field'],
      ['spec.rules[0].from[0].source.ipBlocks[0]', 'invalid-field'],
      ['spec.rules[0].from[1].source', 'missing-field'],
      ['spec.rules[0].to[0].operation.ports[0]', 'invalid-field'],
      ['spec.rules[0].when[0].key', 'unknown-attribute'],
      ['spec.rules[0].when[1]', 'missing-field'],
    ],
  );
  for (const e of errors)
    assert.deepEqual([e.file, e.kind, e.namespace, e.name], ['p.yaml', 'AuthorizationPolicy', 'foo', 'p']);
});

test('selector and targetRef(s) exclude each other; targetRefs are read', () => {
  assert.deepEqual(
    read({ selector: { matchLabels: { a: 'b' } }, targetRef: { kind: 'Gateway', name: 'gw' } }).errors.map(
      (e) => e.code,
    ),
    ['conflicting-fields'],
  );
  const { policy, errors } = read({
    targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }],
  });
  assert.deepEqual(errors, []);
  assert.deepEqual(policy?.spec.targetRefs, [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }]);
});

test('the dry-run annotation must be a boolean', () => {
  assert.deepEqual(read({ rules: [{}] }, { 'istio.io/dry-run': 'true' }).errors, []);
  assert.deepEqual(
    read({ rules: [{}] }, { 'istio.io/dry-run': 'maybe' }).errors.map((e) => e.field),
    ['metadata.annotations.istio.io/dry-run'],
  );
});

test('unknown fields are warned about, not silently dropped', () => {
  const { warnings } = read({ rules: [{ from: [{ source: { principal: ['x'], principals: ['y'] } }] }] });
  assert.deepEqual(
    warnings.map((w) => [w.field, w.code]),
    [['spec.rules[0].from[0].source.principal', 'unknown-field']],
  );
});
