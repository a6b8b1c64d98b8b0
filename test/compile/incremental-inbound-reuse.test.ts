/**
 * A round where only VirtualServices changed keeps the last compile's inbound groups (sidecar
 * `inbound/…` and proxyless `grpc-inbound/…`) with their diagnostics: they read no VirtualService.
 * After an endpoint round that rebuilt an inbound group, the next VirtualService round builds them
 * all again. Every step equals a full compile: output, diagnostics (a named targetPort that
 * resolves to nothing is reported once per compile, whichever group reads it) and snapshot.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchMeshYaml } from '../../bench/relay-mesh.js';
import { compile } from '../../src/compile/index.js';
import {
  applyCompileDelta,
  IncrementalCompiler,
  withDeleted,
  withReplaced,
  type ChangedObject,
} from '../../src/compile/incremental.js';
import type { CompileOutput } from '../../src/compile/types.js';
import { buildInputSet, parseDocuments } from '../../src/inputs/index.js';
import type { InputSet } from '../../src/model/inputs.js';
import { buildSnapshot, SnapshotBuilder } from '../../src/snapshot/build.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { assertSameOutput } from './incremental-helpers.js';

const INFO = { inputsDigest: 'sha256:' + '0'.repeat(64), compiler: { name: 't', version: '0' } };
const read = (yaml: string): InputSet => buildInputSet(parseDocuments(yaml, 'change.yaml').docs);

/** Two services whose named targetPort no endpoint names, both selecting svc-1's pod. */
const NAMED = [0, 1]
  .map(
    (i) => `apiVersion: v1
kind: Service
metadata: {name: named-${i}, namespace: bench}
spec:
  clusterIP: 10.97.0.${i + 1}
  selector: {app: svc-1}
  ports:
  - {name: http-web, port: 80, targetPort: web}
`,
  )
  .join('---\n');

function virtualService(weight: number, host = 1, exportTo = ''): string {
  return `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: vs, namespace: bench}
spec:
  hosts: [svc-0.bench.svc.cluster.local, svc-${host}.bench.svc.cluster.local]
${exportTo}  http:
  - route:
    - {destination: {host: svc-0.bench.svc.cluster.local}, weight: ${weight}}
    - {destination: {host: named-0.bench.svc.cluster.local}, weight: ${100 - weight}}
`;
}

/** svc-0's slice with a new pod IP; `web`: a slice for named-0 that names the `web` port. */
function slice(ip: string, web = false): string {
  const service = web ? 'named-0' : 'svc-0';
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ${service}-a, namespace: bench, labels: {kubernetes.io/service-name: ${service}}}
addressType: IPv4
ports: [{name: ${web ? 'http-web' : 'grpc'}, port: ${web ? 9000 : 8080}, protocol: TCP}]
endpoints: [{addresses: [${ip}], conditions: {ready: true}}]
`;
}

interface Step {
  readonly label: string;
  readonly next: (i: InputSet) => { next: InputSet; changed: ChangedObject[] };
  /** Whether the round keeps the inbound groups. */
  readonly kept: boolean;
}

const putVs = (yaml: string) => (i: InputSet) => {
  const vs = read(yaml).virtualServices[0]!;
  return {
    next: withReplaced(i, 'VirtualService', vs),
    changed: [{ kind: 'VirtualService', namespace: 'bench', name: 'vs' }],
  };
};
const putSlice = (yaml: string) => (i: InputSet) => {
  const s = read(yaml).endpointSlices[0]!;
  return {
    next: withReplaced(i, 'EndpointSlice', s),
    changed: [{ kind: 'EndpointSlice', namespace: 'bench', name: s.meta.name }],
  };
};

test('VirtualService rounds keep the inbound groups; endpoint rounds that rebuild one make the next build them all', () => {
  const base = read([benchMeshYaml(6, 0), NAMED, virtualService(50)].join('---\n'));
  assert.ok(
    compile(base).diagnostics.some((d) => d.code === 'unresolved-target-port'),
    'the mesh reports an unresolved target port',
  );
  const steps: Step[] = [
    { label: 'weight', next: putVs(virtualService(30)), kept: true },
    { label: 'second host', next: putVs(virtualService(30, 2)), kept: true },
    { label: 'exportTo', next: putVs(virtualService(30, 2, '  exportTo: ["."]\n')), kept: true },
    { label: 'svc-0 moves (proxyless server listeners rebuilt)', next: putSlice(slice('10.3.0.1')), kept: false },
    { label: 'weight after the move', next: putVs(virtualService(70)), kept: false },
    { label: 'weight again', next: putVs(virtualService(60)), kept: true },
    {
      label: 'named-0 gets its web port (inbound groups rebuilt)',
      next: putSlice(slice('10.2.0.2', true)),
      kept: false,
    },
    { label: 'weight after the port', next: putVs(virtualService(20)), kept: false },
    { label: 'weight after that', next: putVs(virtualService(25)), kept: true },
    {
      label: 'delete',
      next: (i) => ({
        next: withDeleted(i, 'VirtualService', 'bench', 'vs'),
        changed: [{ kind: 'VirtualService', namespace: 'bench', name: 'vs' }],
      }),
      kept: true,
    },
    { label: 'back', next: putVs(virtualService(40)), kept: true },
  ];
  const ic = new IncrementalCompiler();
  let inputs = base;
  let output: CompileOutput = ic.compileFull(inputs).output;
  const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
  builder.build(output);
  for (const step of steps) {
    const { next, changed } = step.next(inputs);
    inputs = next;
    const r = ic.update(inputs, changed);
    assert.equal(r.kind, 'delta', step.label);
    if (r.kind !== 'delta') continue;
    assert.equal(ic.inboundKept, step.kept, `${step.label}: inbound groups kept`);
    output = applyCompileDelta(output, r.delta, r.layout);
    const want = compile(inputs);
    if (step.label === 'weight after that')
      assert.deepEqual(
        want.diagnostics.filter((d) => d.code === 'unresolved-target-port').map((d) => d.name),
        ['named-1'],
        'named-0 resolved, named-1 still not',
      );
    assertSameOutput(output, want.output, step.label);
    assert.deepEqual(r.diagnostics, want.diagnostics, `${step.label}: diagnostics`);
    const built = builder.applyDelta(
      Object.fromEntries([...Object.entries(r.delta), ...(r.layout?.removedGroups ?? []).map((g) => [g, null])]),
      { ...(r.layout?.classes ? { classes: r.layout.classes } : {}) },
    );
    assert.equal(built.digest, buildSnapshot(want.output, INFO, { hasher: nodeSha256Hex }).digest, step.label);
  }
});
