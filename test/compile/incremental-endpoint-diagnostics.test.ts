import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile } from '../../src/compile/index.js';
import { IncrementalCompiler, withReplaced } from '../../src/compile/incremental.js';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import type { InputSet } from '../../src/model/inputs.js';
import type { Endpoints, EndpointSlice } from '../../src/model/k8s.js';
import { bookinfoInputs, endpointSliceYaml, TWO_HEADLESS_ON_ONE_POD } from './incremental-helpers.js';

/** `inputs` with the named Endpoints' addresses all at `ip`. */
function movedTo(inputs: InputSet, name: string, ip: string): InputSet {
  const e = inputs.endpoints.find((x) => x.meta.name === name && x.meta.namespace === 'default') as Endpoints;
  return withReplaced(inputs, 'Endpoints', {
    ...e,
    subsets: e.subsets.map((s) => ({ ...s, addresses: (s.addresses ?? []).map((a) => ({ ...a, ip })) })),
  });
}

const conflicts = (diagnostics: readonly Diagnostic[]): string[] =>
  diagnostics.filter((d) => d.code === 'listener-conflict').map((d) => d.message);

test('endpoint rounds that move conflicting headless listeners report what a full compile reports', () => {
  const base = bookinfoInputs([['headless.yaml', TWO_HEADLESS_ON_ONE_POD]]);
  assert.deepEqual(conflicts(compile(base).diagnostics), [
    'listener 10.244.0.12_5432 already exists for another service; this port is skipped',
  ]);
  const ic = new IncrementalCompiler();
  ic.compileFull(base);
  const steps: [what: string, names: string[], ip: string, conflicts: number][] = [
    ['both pods move: the conflict names the new IP', ['db', 'db-replica'], '10.244.0.13', 1],
    ['the replica moves away: no conflict', ['db-replica'], '10.244.0.14', 0],
    ['the replica comes back: the conflict again', ['db-replica'], '10.244.0.13', 1],
  ];
  let inputs = base;
  for (const [what, names, ip, count] of steps) {
    for (const name of names) inputs = movedTo(inputs, name, ip);
    const r = ic.update(
      inputs,
      names.map((name) => ({ kind: 'Endpoints', namespace: 'default', name })),
    );
    assert.equal(r.kind, 'delta', what);
    const want = compile(inputs);
    assert.equal(conflicts(want.diagnostics).length, count, what);
    assert.deepEqual(r.diagnostics, want.diagnostics, what);
  }
});

/** A Service whose named targetPort two slices (two Deployments) resolve: port 8080 on both at first. */
const NAMED_TWICE = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  clusterIP: 10.96.30.1
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: web}]
---
${endpointSliceYaml('web-v1', 'web', { name: 'http', port: 8080 }, ['10.244.5.1'])}---
${endpointSliceYaml('web-v2', 'web', { name: 'http', port: 8080 }, ['10.244.5.2'])}`;

test('endpoint rounds that make a named targetPort resolve differently per pod, and alike again, report what a full compile reports', () => {
  const base = bookinfoInputs([['web.yaml', NAMED_TWICE]]);
  const differs = (diagnostics: readonly Diagnostic[]) =>
    diagnostics.filter((d) => d.code === 'target-port-differs').map((d) => `${d.name} ${d.field}`);
  assert.deepEqual(differs(compile(base).diagnostics), []);
  const ic = new IncrementalCompiler();
  ic.compileFull(base);
  let inputs = base;
  for (const [what, port, want] of [
    ['v2 renumbers its container port', 9090, ['web spec.ports[0].targetPort']],
    ['v2 back on 8080', 8080, []],
  ] as const) {
    const slice = inputs.endpointSlices.find((s) => s.meta.name === 'web-v2') as EndpointSlice;
    inputs = withReplaced(inputs, 'EndpointSlice', { ...slice, ports: slice.ports.map((p) => ({ ...p, port })) });
    const r = ic.update(inputs, [{ kind: 'EndpointSlice', namespace: 'default', name: 'web-v2' }]);
    assert.equal(r.kind, 'delta', what);
    const full = compile(inputs);
    assert.deepEqual(differs(full.diagnostics), want, what);
    assert.deepEqual(r.diagnostics, full.diagnostics, what);
  }
});
