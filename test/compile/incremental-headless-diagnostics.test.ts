import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compile } from '../../src/compile/index.js';
import { IncrementalCompiler, withReplaced } from '../../src/compile/incremental.js';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import type { InputSet } from '../../src/model/inputs.js';
import type { Endpoints } from '../../src/model/k8s.js';
import { bookinfoInputs } from './incremental-helpers.js';

/** Two headless services in front of the same pod and port: their pod-IP listeners conflict. */
const TWO_HEADLESS = `
apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: tcp-db, port: 5432, targetPort: 5432}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: db, namespace: default}
subsets:
- addresses: [{ip: 10.244.0.12}]
  ports: [{name: tcp-db, port: 5432}]
---
apiVersion: v1
kind: Service
metadata: {name: db-replica, namespace: default}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: tcp-db, port: 5432, targetPort: 5432}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: db-replica, namespace: default}
subsets:
- addresses: [{ip: 10.244.0.12}]
  ports: [{name: tcp-db, port: 5432}]
`;

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
  const base = bookinfoInputs([['headless.yaml', TWO_HEADLESS]]);
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
