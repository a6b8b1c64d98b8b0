import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import {
  applyCompileDelta,
  IncrementalCompiler,
  type IncrementalResult,
  type InputKind,
  type InputObjects,
  type LayoutChange,
  withDeleted,
  withReplaced,
} from '../../src/compile/incremental.js';
import { LIST_OF_KIND } from '../../src/compile/incremental/inputs-patch.js';
import type { CompileDelta, GroupId } from '../../src/compile/types.js';
import { buildInputSet, parseDocuments } from '../../src/inputs/index.js';
import type { InputSet } from '../../src/model/inputs.js';
import { inputsDigest } from '../../src/snapshot/stored-inputs/canonical-inputs.js';
import {
  buildSnapshot,
  snapshotDocuments,
  SnapshotBuilder,
  type GroupDelta,
  type SnapshotDelta,
} from '../../src/snapshot/build.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { mulberry32 } from '../inputs/prng.js';
import { randomConfigStep } from './incremental-config-helpers.js';
import { assertSameOutput, bookinfoInputs, randomStep, type Step } from './incremental-helpers.js';

const bookinfo = (): InputSet => bookinfoInputs();

/** ns-1's Sidecar: it sees its own namespace and ns-0 (a visibility scope of its own). */
const RESTRICTED_NS_1 = `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: ns-1}
spec:
  egress: [{hosts: ["./*", "ns-0/*"]}]
`;

/** The synthetic mesh over three namespaces, one of them restricted by a Sidecar (its own visibility scope). */
function synthetic(): InputSet {
  const mesh = generateMesh({ services: 60, perNamespace: 20, seed: 5 });
  const sidecar = parseDocuments(RESTRICTED_NS_1, 'sidecar.yaml').docs;
  return buildInputSet([...mesh.docs, ...sidecar]);
}

const asSnapshotDelta = (delta: CompileDelta, layout: LayoutChange | undefined): SnapshotDelta => {
  const out: Record<GroupId, GroupDelta | null> = { ...delta };
  for (const id of layout?.removedGroups ?? []) out[id] = null;
  return out;
};

const info = (i: InputSet) => ({ inputsDigest: inputsDigest(i, nodeSha256Hex), compiler: { name: 't', version: '0' } });

/**
 * `steps` changes from `next` through one IncrementalCompiler and one SnapshotBuilder: each must be
 * a delta whose patched output, diagnostics, snapshot digest and documents are a full compile's.
 */
function churn(base: InputSet, seed: number, steps: number, next: (i: InputSet, r: () => number, n: number) => Step) {
  const rand = mulberry32(seed);
  const ic = new IncrementalCompiler();
  let inputs = base;
  let output = ic.compileFull(inputs).output;
  const builder = new SnapshotBuilder(info(inputs), { hasher: nodeSha256Hex });
  builder.build(output);
  const layouts = { classes: 0, removed: 0, changed: 0 };
  for (let n = 0; n < steps; n++) {
    const step = next(inputs, rand, n);
    inputs = step.next;
    const what = `seed ${seed} step ${n} (${step.label})`;
    const r: IncrementalResult = ic.update(inputs, step.changed);
    assert.equal(r.kind, 'delta', what);
    if (r.kind !== 'delta') continue;
    output = applyCompileDelta(output, r.delta, r.layout);
    const want = compile(inputs);
    assertSameOutput(output, want.output, what);
    assert.deepEqual(r.diagnostics, want.diagnostics, `${what}: diagnostics`);

    const built = builder.applyDelta(asSnapshotDelta(r.delta, r.layout), {
      inputsDigest: info(inputs).inputsDigest,
      ...(r.layout?.classes ? { classes: r.layout.classes } : {}),
      ...(r.layout?.selectors ? { selectors: r.layout.selectors } : {}),
    });
    const full = buildSnapshot(want.output, info(inputs), { hasher: nodeSha256Hex });
    assert.equal(built.digest, full.digest, `${what}: snapshot digest`);
    assert.deepEqual(snapshotDocuments(built.content), snapshotDocuments(full.content), `${what}: documents`);
    if (r.layout?.classes) layouts.classes++;
    if (r.layout?.removedGroups) layouts.removed++;
    if (Object.keys(r.delta).length > 0) layouts.changed++;
  }
  return layouts;
}

test('bookinfo: random VirtualService, DestinationRule and Service churn, each a delta equal to a full compile', () => {
  for (const seed of [1, 2]) {
    const seen = churn(bookinfo(), seed, 40, randomConfigStep);
    // The churn adds and removes classes (services with selectors) and changes resources.
    assert.ok(seen.classes > 0 && seen.removed > 0 && seen.changed > 20, JSON.stringify(seen));
  }
});

test('synthetic mesh with a restricted namespace: random config churn, each a delta equal to a full compile', () => {
  const seen = churn(synthetic(), 3, 30, randomConfigStep);
  assert.ok(seen.classes > 0 && seen.changed > 20, JSON.stringify(seen));
});

/** `synthetic()` traced mesh-wide by a Telemetry, its collector in ns-2, which ns-1's Sidecar does not see. */
function syntheticTraced(): InputSet {
  const mesh = generateMesh({ services: 60, perNamespace: 20, seed: 5 });
  const extra = parseDocuments(
    `${RESTRICTED_NS_1}---
apiVersion: v1
kind: Service
metadata: {name: collector, namespace: ns-2}
spec: {clusterIP: 10.99.0.1, ports: [{name: grpc, port: 4317}], selector: {app: collector}}
---
apiVersion: meshsnap.dev/v1alpha1
kind: MeshConfig
metadata: {name: mesh}
spec:
  extensionProviders: [{name: otel, opentelemetry: {service: collector.ns-2.svc.cluster.local, port: 4317}}]
---
apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: mesh-default, namespace: istio-system}
spec: {tracing: [{providers: [{name: otel}], randomSamplingPercentage: 5}]}
`,
    'traced.yaml',
  ).docs;
  return buildInputSet([...mesh.docs, ...extra]);
}

test('Telemetry tracing, its collector hidden from a restricted namespace: random config churn, each a delta equal to a full compile', () => {
  const start = syntheticTraced();
  const first = compile(start);
  assert.ok(first.diagnostics.some((d) => d.code === 'tracing-not-applied' && d.namespace === 'ns-1'));
  const seen = churn(start, 6, 30, randomConfigStep);
  assert.ok(seen.classes > 0 && seen.changed > 20, JSON.stringify(seen));
});

test('config and endpoint changes interleaved: every step a delta equal to a full compile', () => {
  churn(bookinfo(), 4, 40, (inputs, rand, n) => {
    if (rand() < 0.5) return randomConfigStep(inputs, rand, n);
    // A pod relabel changes classes through a pod: a full compile by design, left out here.
    let step = randomStep(inputs, rand, n);
    while (step.label.includes('relabel')) step = randomStep(inputs, rand, n);
    return step;
  });
});

test('a VirtualService weight change: only route configurations change; classes, selectors and groups stay', () => {
  const base = bookinfo();
  const ic = new IncrementalCompiler();
  ic.compileFull(base);
  const vs = base.virtualServices.find((v) => v.meta.name === 'reviews')!;
  const http = vs.spec.http ?? [];
  const next = {
    ...vs,
    spec: {
      ...vs.spec,
      http: http.map((h) => ({ ...h, route: (h.route ?? []).map((d, i) => ({ ...d, weight: i === 0 ? 30 : 70 })) })),
    },
  };
  const inputs = withReplaced(base, 'VirtualService', next);
  const r = ic.update(inputs, [{ kind: 'VirtualService', namespace: 'default', name: 'reviews' }]);
  assert.equal(r.kind, 'delta');
  if (r.kind !== 'delta') return;
  assert.equal(r.layout, undefined, 'same classes, selectors and groups');
  const changed = Object.entries(r.delta).flatMap(([group, types]) =>
    Object.entries(types).flatMap(([type, c]) =>
      [...c.upserts.keys(), ...c.deletes].map((n) => `${group} ${type} ${n}`),
    ),
  );
  assert.ok(changed.length > 0);
  assert.ok(
    changed.every((c) => c.includes(' routes ')),
    changed.join('\n'),
  );
});

/**
 * Policy, scope and registry kinds (AuthorizationPolicy, PeerAuthentication, RequestAuthentication,
 * Sidecar, Telemetry, ServiceEntry, Gateway) put, edited and deleted: rounds of these kinds are
 * compiled in full and handed on as deltas too (a full build of ~150k resources at 10k services
 * for one policy otherwise).
 */
const POLICY_OBJECTS: readonly ((n: number) => string)[] = [
  (n) => `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-${n % 3}, namespace: ns-${n % 3}}
spec:
  ${n % 2 ? 'selector: {matchLabels: {app: svc-1}}' : ''}
  action: DENY
  rules: [{to: [{operation: {paths: ["/admin${n}"]}}]}]
`,
  (n) => `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: ns-${n % 3}}
spec: {mtls: {mode: ${n % 2 ? 'STRICT' : 'PERMISSIVE'}}}
`,
  (n) => `apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: {name: jwt, namespace: ns-${n % 3}}
spec:
  jwtRules: [{issuer: "https://issuer-${n}.example.com", jwksUri: "https://issuer.example.com/jwks"}]
`,
  (n) => `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: default, namespace: ns-${n % 3}}
spec:
  egress: [{hosts: ["./*", "ns-${(n + 1) % 3}/*"]}]
`,
  (n) => `apiVersion: telemetry.istio.io/v1
kind: Telemetry
metadata: {name: logs, namespace: ns-${n % 3}}
spec: {accessLogging: [{providers: [{name: envoy}]${n % 2 ? ', disabled: true' : ''}}]}
`,
  (n) => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: ext-${n % 2}, namespace: ns-${n % 3}}
spec:
  hosts: [api-${n % 4}.example.com]
  ports: [{number: 443, name: tls, protocol: TLS}]
  resolution: DNS
  location: MESH_EXTERNAL
`,
  (n) => `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns-0}
spec:
  selector: {istio: ingressgateway}
  servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ["*/svc-${n % 5}.example.com"]}]
`,
];

function policyStep(inputs: InputSet, rand: () => number, n: number): Step {
  const yaml = (POLICY_OBJECTS[Math.floor(rand() * POLICY_OBJECTS.length)] as (n: number) => string)(n);
  const set = buildInputSet(parseDocuments(yaml, 'policy.yaml').docs);
  assert.deepEqual(
    set.diagnostics.filter((d) => d.severity === 'error'),
    [],
    yaml,
  );
  const kind = (Object.keys(LIST_OF_KIND) as InputKind[]).find(
    (k) => (set[LIST_OF_KIND[k]] as readonly unknown[]).length === 1,
  ) as InputKind;
  const object = (set[LIST_OF_KIND[kind]] as readonly InputObjects[InputKind][])[0] as InputObjects[InputKind];
  const { namespace, name } = object.meta;
  const existing = (inputs[LIST_OF_KIND[kind]] as readonly InputObjects[InputKind][]).some(
    (o) => o.meta.namespace === namespace && o.meta.name === name,
  );
  if (existing && rand() < 0.3)
    return {
      next: withDeleted(inputs, kind, namespace, name),
      changed: [{ kind, namespace, name }],
      label: `delete ${kind} ${namespace}/${name}`,
    };
  return {
    next: withReplaced(inputs, kind, object),
    changed: [{ kind, namespace, name }],
    label: `put ${kind} ${namespace}/${name}`,
  };
}

test('policy, Sidecar, Telemetry, ServiceEntry and Gateway churn: each a delta equal to a full compile', () => {
  const seen = churn(synthetic(), 7, 30, policyStep);
  // Label-selected policies and Sidecars change the classes; every kind changes resources.
  assert.ok(seen.classes > 0 && seen.changed > 15, JSON.stringify(seen));
});
