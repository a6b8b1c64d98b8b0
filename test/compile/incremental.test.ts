import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import {
  applyCompileDelta,
  IncrementalCompiler,
  withDeleted,
  withMeshConfig,
  withReplaced,
  type ChangedObject,
  type IncrementalResult,
} from '../../src/compile/incremental.js';
import type { CompileOutput } from '../../src/compile/types.js';
import { buildInputSet, parseDocuments } from '../../src/inputs/index.js';
import type { InputSet } from '../../src/model/inputs.js';
import type { EndpointSlice, Pod } from '../../src/model/k8s.js';
import { inputsDigest } from '../../src/snapshot/stored-inputs/canonical-inputs.js';
import { buildSnapshot, SnapshotBuilder, type SnapshotDelta } from '../../src/snapshot/build.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { mulberry32 } from '../inputs/prng.js';
import {
  assertSameOutput,
  bookinfoInputs,
  endpointSliceYaml,
  randomStep,
  TWO_HEADLESS_ON_ONE_POD,
} from './incremental-helpers.js';

/**
 * Bookinfo plus what makes endpoints matter beyond assignments: a named targetPort (inbound
 * ports resolve through endpoints), a subset that selects nothing yet, a headless service (auto
 * mTLS on ORIGINAL_DST is all-or-nothing over its endpoints) and a second one on the same pod (their
 * pod-IP listeners conflict, and the conflict names the IP), a persistent-session service (draining
 * endpoints are sent), a service with legacy Endpoints only, and a named targetPort two slices
 * resolve (renumbering one makes the name resolve differently per pod).
 */
const EXTRAS = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default, labels: {app: web}}
spec:
  clusterIP: 10.96.20.1
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http-web}, {name: grpc-api, port: 81, targetPort: grpc-api}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-v1-5f6d7c8b9-abcde, namespace: default, labels: {app: web, version: v1, security.istio.io/tlsMode: istio}}
spec:
  serviceAccountName: web
  nodeName: node-1
  containers: [{name: web, image: web, ports: [{name: http-web, containerPort: 8080}]}]
status: {phase: Running, podIP: 10.244.1.1, podIPs: [{ip: 10.244.1.1}], conditions: [{type: Ready, status: 'True'}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-v2-5f6d7c8b9-abcde, namespace: default, labels: {app: web, version: v2}}
spec:
  serviceAccountName: web-canary
  nodeName: node-2
  containers: [{name: web, image: web, ports: [{name: http-web, containerPort: 8080}]}]
status: {phase: Running, podIP: 10.244.1.2, podIPs: [{ip: 10.244.1.2}], conditions: [{type: Ready, status: 'True'}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abcde, namespace: default, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080, protocol: TCP}]
endpoints:
- addresses: [10.244.1.1]
  conditions: {ready: true}
  targetRef: {kind: Pod, namespace: default, name: web-v1-5f6d7c8b9-abcde}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: web, namespace: default}
spec:
  host: web
  subsets: [{name: v1, labels: {version: v1}}, {name: v2, labels: {version: v2}}, {name: v3, labels: {version: v3}}]
---
${TWO_HEADLESS_ON_ONE_POD}---
# reviews' sidecars get outbound listeners of their own (a tcp match on their labels), which hold
# the headless db's per-pod listeners: the churn checks they follow the endpoints too.
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db-canary, namespace: default}
spec:
  hosts: [db]
  tcp:
  - match: [{sourceLabels: {app: reviews}}]
    route: [{destination: {host: db-replica}}]
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: default}
spec:
  clusterIP: 10.96.20.4
  selector: {app: api}
  ports: [{name: http, port: 80, targetPort: api-port}]
---
${endpointSliceYaml('api-1', 'api', { name: 'http', port: 7000 }, ['10.244.3.1'])}---
${endpointSliceYaml('api-2', 'api', { name: 'http', port: 7000 }, ['10.244.3.2'])}---
apiVersion: v1
kind: Service
metadata: {name: sticky, namespace: default, labels: {istio.io/persistent-session: cookie}}
spec:
  clusterIP: 10.96.20.3
  selector: {app: ratings}
  ports: [{name: http, port: 9080, targetPort: 9080}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: sticky-abcde, namespace: default, labels: {kubernetes.io/service-name: sticky}}
addressType: IPv4
ports: [{name: http, port: 9080, protocol: TCP}]
endpoints:
- addresses: [10.244.0.12]
  conditions: {ready: false, serving: true, terminating: true}
  targetRef: {kind: Pod, namespace: default, name: ratings-v1-5f6d7c8b9-abcde}
`;

function bookinfo(): InputSet {
  const inputs = bookinfoInputs([['extras.yaml', EXTRAS]]);
  assert.deepEqual(
    inputs.diagnostics.filter((d) => d.severity === 'error'),
    [],
  );
  return inputs;
}

function applyResult(prev: CompileOutput, r: IncrementalResult): CompileOutput {
  return r.kind === 'full' ? r.output : applyCompileDelta(prev, r.delta);
}

/** Runs `steps` random changes; after each, the patched output and diagnostics must be a full compile's. */
function churn(base: InputSet, seed: number, steps: number): { deltas: number; fulls: number } {
  const rand = mulberry32(seed);
  const ic = new IncrementalCompiler();
  const first = ic.compileFull(base);
  const reference = compile(base);
  assertSameOutput(first.output, reference.output, 'initial');
  assert.deepEqual(first.diagnostics, reference.diagnostics);

  let inputs = base;
  let output = first.output;
  let deltas = 0;
  let fulls = 0;
  for (let n = 0; n < steps; n++) {
    const step = randomStep(inputs, rand, n);
    const r = ic.update(step.next, step.changed);
    if (r.kind === 'delta') deltas++;
    else fulls++;
    output = applyResult(output, r);
    inputs = step.next;
    const want = compile(inputs);
    assertSameOutput(output, want.output, `seed ${seed} step ${n} (${step.label}, ${r.kind})`);
    assert.deepEqual(r.diagnostics, want.diagnostics, `seed ${seed} step ${n} (${step.label}) diagnostics`);
  }
  return { deltas, fulls };
}

test('bookinfo: random endpoint churn, patched output equals a full compile at every step', () => {
  for (const seed of [1, 2, 3]) {
    const { deltas, fulls } = churn(bookinfo(), seed, 80);
    assert.ok(deltas > 60, `seed ${seed}: only ${deltas} deltas (${fulls} full)`);
  }
});

test('synthetic mesh: random endpoint churn, patched output equals a full compile at every step', () => {
  const mesh = generateMesh({ services: 80, perNamespace: 30, seed: 7 });
  const { deltas } = churn(buildInputSet(mesh.docs), 11, 50);
  assert.ok(deltas > 35, `only ${deltas} deltas`);
});

test('an IP change yields only the changed assignments and clusters; an identical slice yields an empty delta', () => {
  const base = bookinfo();
  const ic = new IncrementalCompiler();
  ic.compileFull(base);
  const slice = base.endpointSlices.find((s) => s.meta.name === 'details-abcde') as EndpointSlice;
  const moved: EndpointSlice = {
    ...slice,
    endpoints: slice.endpoints.map((e) => ({ ...e, addresses: ['10.244.9.9'] })),
  };
  const r = ic.update(withReplaced(base, 'EndpointSlice', moved), [
    { kind: 'EndpointSlice', namespace: 'default', name: 'details-abcde' },
  ]);
  assert.equal(r.kind, 'delta');
  if (r.kind !== 'delta') return;
  // Only EDS changes (same pod, same service account: same clusters), and not the still empty v2 subset.
  assert.deepEqual(Object.keys(r.delta), ['endpoints']);
  assert.deepEqual([...(r.delta['endpoints']?.endpoints?.upserts.keys() ?? [])].sort(), [
    'outbound|9080|v1|details.default.svc.cluster.local',
    'outbound|9080||details.default.svc.cluster.local',
  ]);

  const again = ic.update(withReplaced(withReplaced(base, 'EndpointSlice', moved), 'EndpointSlice', { ...moved }), [
    { kind: 'EndpointSlice', namespace: 'default', name: 'details-abcde' },
  ]);
  assert.equal(again.kind, 'delta');
  if (again.kind === 'delta') assert.deepEqual(again.delta, {});
});

test('a new service account behind a service changes its SANs; a named targetPort moving renames the inbound cluster', () => {
  const base = bookinfo();
  const ic = new IncrementalCompiler();
  const prev = ic.compileFull(base).output;
  const slice = base.endpointSlices.find((s) => s.meta.name === 'web-abcde') as EndpointSlice;
  const next = withReplaced(base, 'EndpointSlice', {
    ...slice,
    ports: [{ name: 'http', port: 9090, protocol: 'TCP' }],
    endpoints: [
      ...slice.endpoints,
      {
        addresses: ['10.244.1.2'],
        ready: true,
        serving: true,
        terminating: false,
        targetRef: { kind: 'Pod', namespace: 'default', name: 'web-v2-5f6d7c8b9-abcde' },
      },
    ],
  });
  const r = ic.update(next, [{ kind: 'EndpointSlice', namespace: 'default', name: 'web-abcde' }]);
  assert.equal(r.kind, 'delta');
  if (r.kind !== 'delta') return;
  assert.ok(r.delta['outbound']?.clusters?.upserts.has('outbound|80||web.default.svc.cluster.local'));
  const inbound = r.delta['inbound/default/web'];
  assert.deepEqual([...(inbound?.clusters?.deletes ?? [])], ['inbound|8080||']);
  assert.ok(inbound?.clusters?.upserts.has('inbound|9090||'));
  // v2 now has an endpoint: its subset-no-endpoints warning is gone, v3's stays.
  const empty = r.diagnostics.filter((d) => d.code === 'subset-no-endpoints' && d.name === 'web').map((d) => d.message);
  assert.deepEqual(empty, ['subset v3 selects no endpoint of web.default.svc.cluster.local']);
  assertSameOutput(applyCompileDelta(prev, r.delta), compile(next).output, 'after');
});

test('changes outside the endpoint layer: Services, Namespaces and relabelled pods as deltas, a mesh config change the full path', () => {
  const base = bookinfo();
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(base).output;
  const svc = base.services.find((s) => s.meta.name === 'details')!;
  const next = withReplaced(base, 'Service', { ...svc, meta: { ...svc.meta, labels: { ...svc.meta.labels, x: 'y' } } });
  const r = ic.update(next, [{ kind: 'Service', namespace: 'default', name: 'details' }]);
  assert.equal(r.kind, 'delta');
  if (r.kind === 'delta')
    assertSameOutput((output = applyCompileDelta(output, r.delta, r.layout)), compile(next).output, 'service');
  const ns = buildInputSet(
    parseDocuments('apiVersion: v1\nkind: Namespace\nmetadata: {name: default, labels: {team: a}}\n', 'ns.yaml').docs,
  ).namespaces[0]!;
  const namespaced = withReplaced(next, 'Namespace', ns);
  const n = ic.update(namespaced, [{ kind: 'Namespace', namespace: '', name: 'default' }]);
  assert.equal(n.kind, 'delta');
  if (n.kind === 'delta')
    assertSameOutput((output = applyCompileDelta(output, n.delta, n.layout)), compile(namespaced).output, 'namespace');
  // A pod relabelled out of its service.
  const pod = base.pods[0]!;
  const relabelled = withReplaced(namespaced, 'Pod', { ...pod, meta: { ...pod.meta, labels: { app: 'other' } } });
  const p = ic.update(relabelled, [{ kind: 'Pod', namespace: pod.meta.namespace, name: pod.meta.name }]);
  assert.equal(p.kind, 'delta');
  if (p.kind === 'delta')
    assertSameOutput((output = applyCompileDelta(output, p.delta, p.layout)), compile(relabelled).output, 'pod');
  const meshed = withMeshConfig(relabelled, { ...relabelled.meshConfig, tracingDisabled: true });
  const m = ic.update(meshed, []);
  assert.equal(m.kind, 'full');
  if (m.kind === 'full') assertSameOutput(m.output, compile(meshed).output, 'mesh config');
});

test('deltas feed SnapshotBuilder.applyDelta: the same snapshot digest as building a full compile', () => {
  const rand = mulberry32(99);
  let inputs = bookinfo();
  const ic = new IncrementalCompiler();
  const info = (i: InputSet) => ({
    inputsDigest: inputsDigest(i, nodeSha256Hex),
    compiler: { name: 'test', version: '0' },
  });
  const builder = new SnapshotBuilder(info(inputs), { hasher: nodeSha256Hex });
  builder.build(ic.compileFull(inputs).output);
  for (let n = 0; n < 25; n++) {
    const step = randomStep(inputs, rand, n);
    inputs = step.next;
    const r = ic.update(inputs, step.changed);
    const delta: SnapshotDelta = r.kind === 'delta' ? r.delta : {};
    const built =
      r.kind === 'delta'
        ? builder.applyDelta(delta, { inputsDigest: info(inputs).inputsDigest })
        : builder.build(r.output, info(inputs));
    assert.equal(
      built.digest,
      buildSnapshot(compile(inputs).output, info(inputs), { hasher: nodeSha256Hex }).digest,
      `step ${n} (${step.label})`,
    );
  }
});

test('scale-ups and scale-downs: a pod of a shape its namespace keeps is an endpoint change; one that adds or removes a shape is compiled in full; each equals a full compile', () => {
  let inputs = buildInputSet(generateMesh({ services: 30, perNamespace: 10, seed: 11 }).docs);
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(inputs).output;
  const paths: string[] = [];
  const round = (next: InputSet, changed: ChangedObject[], what: string): void => {
    const r = ic.update(next, changed);
    output = r.kind === 'full' ? r.output : applyCompileDelta(output, r.delta, r.layout);
    inputs = next;
    const want = compile(next);
    assertSameOutput(output, want.output, what);
    assert.deepEqual(r.diagnostics, want.diagnostics, `${what}: diagnostics`);
    paths.push(`${what}: ${ic.lastPath}`);
  };
  const podChange = (p: Pod): ChangedObject[] => [{ kind: 'Pod', namespace: p.meta.namespace, name: p.meta.name }];
  for (let i = 0; i < 6; i++) {
    const like = inputs.pods[(i * 7) % inputs.pods.length] as Pod;
    const slice = inputs.endpointSlices.find((s) => s.endpoints.some((e) => e.targetRef?.name === like.meta.name));
    assert.ok(slice, like.meta.name);
    const newShape = i % 2 === 1;
    const labels = newShape ? { ...like.meta.labels, version: 'v9' } : like.meta.labels;
    const pending: Pod = {
      ...like,
      meta: { ...like.meta, name: `${like.meta.name}-new${i}`, labels },
      ips: [],
      phase: 'Pending',
      ready: false,
    };
    round(withReplaced(inputs, 'Pod', pending), podChange(pending), `pending ${i}`);
    const running: Pod = { ...pending, ips: [`10.77.0.${i + 1}`], phase: 'Running', ready: true };
    round(withReplaced(inputs, 'Pod', running), podChange(running), `running ${i}${newShape ? ' (new shape)' : ''}`);
    const grown: EndpointSlice = {
      ...slice,
      endpoints: [
        ...slice.endpoints,
        {
          addresses: [`10.77.0.${i + 1}`],
          ready: true,
          serving: true,
          terminating: false,
          targetRef: { kind: 'Pod', namespace: running.meta.namespace, name: running.meta.name },
          ...(running.nodeName ? { nodeName: running.nodeName } : {}),
        },
      ],
    };
    round(
      withReplaced(inputs, 'EndpointSlice', grown),
      [{ kind: 'EndpointSlice', namespace: slice.meta.namespace, name: slice.meta.name }],
      `slice ${i}`,
    );
    if (i >= 4)
      round(withDeleted(inputs, 'Pod', running.meta.namespace, running.meta.name), podChange(running), `deleted ${i}`);
  }
  const pathOf = (what: string) => paths.find((p) => p.startsWith(`${what}:`))?.split(': ')[1];
  for (const i of [0, 2, 4]) {
    assert.equal(pathOf(`pending ${i}`), 'endpoints', paths.join('\n'));
    assert.equal(pathOf(`running ${i}`), 'endpoints', paths.join('\n'));
  }
  for (const i of [1, 3, 5]) assert.equal(pathOf(`running ${i} (new shape)`), 'recompiled', paths.join('\n'));
  // A scale-down: the shape is still held by the pod it copied; the last pod of a shape is not.
  assert.equal(pathOf('deleted 4'), 'endpoints', paths.join('\n'));
  assert.equal(pathOf('deleted 5'), 'recompiled', paths.join('\n'));
});
