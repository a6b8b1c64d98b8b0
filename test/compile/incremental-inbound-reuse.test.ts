/**
 * A round where only VirtualServices changed keeps the last compile's inbound groups (sidecar
 * `inbound/…` and proxyless `grpc-inbound/…`) with their diagnostics: they read no VirtualService.
 * After an endpoint round that rebuilt an inbound group, the next VirtualService round builds them
 * all again. A Service round keeps the groups no changed service is part of (and a namespace's
 * proxyless servers when the changed services select none of its pods) and builds the others.
 * Every step equals a full compile: output, diagnostics (a named targetPort that resolves to
 * nothing is reported once per compile from the model, whichever groups read it, taken or built)
 * and snapshot.
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
  /** How many inbound groups the round takes from the round before (checked when given). */
  readonly taken?: number;
  /** The services a full compile reports an unresolved target port of, in order (checked when given). */
  readonly unresolved?: readonly string[];
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

test('VirtualService rounds keep the inbound groups, also after endpoint rounds that rebuild some of them', () => {
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
    { label: 'weight after the move', next: putVs(virtualService(70)), kept: true },
    { label: 'weight again', next: putVs(virtualService(60)), kept: true },
    {
      label: 'named-0 gets its web port (inbound groups rebuilt)',
      next: putSlice(slice('10.2.0.2', true)),
      kept: false,
    },
    { label: 'weight after the port', next: putVs(virtualService(20)), kept: true },
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
  runSteps(base, steps);
});

/**
 * The steps through one IncrementalCompiler and one SnapshotBuilder: each a delta that keeps the
 * inbound groups it should and equals a full compile (output, diagnostics, snapshot digest).
 */
function runSteps(base: InputSet, steps: readonly Step[]): void {
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
    output = applyCompileDelta(output, r.delta, r.layout);
    const want = compile(inputs);
    if (step.unresolved)
      assert.deepEqual(
        want.diagnostics.filter((d) => d.code === 'unresolved-target-port').map((d) => d.name),
        step.unresolved,
        `${step.label}: unresolved target ports`,
      );
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
      {
        ...(r.layout?.classes ? { classes: r.layout.classes } : {}),
        ...(r.layout?.selectors ? { selectors: r.layout.selectors } : {}),
      },
    );
    assert.equal(built.digest, buildSnapshot(want.output, INFO, { hasher: nodeSha256Hex }).digest, step.label);
    // After the equality checks: a rule that keeps too much fails them first.
    assert.equal(ic.inboundKept, step.kept, `${step.label}: inbound groups kept`);
    if (step.taken !== undefined) assert.equal(ic.inboundTaken, step.taken, `${step.label}: inbound groups taken`);
  }
}

/** A Service in the bench namespace: its selector's app (none: no selector) and its ports. */
function service(name: string, app: string | undefined, ports: string): string {
  return `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: bench}
spec:
${app ? `  selector: {app: ${app}}\n` : ''}  ports: [${ports}]
`;
}

const GRPC_PORT = '{name: grpc, port: 8080, protocol: TCP}';

const putService = (yaml: string) => (i: InputSet) => {
  const s = read(yaml).services[0]!;
  return { next: withReplaced(i, 'Service', s), changed: [{ kind: 'Service', namespace: 'bench', name: s.meta.name }] };
};
const deleteService = (name: string) => (i: InputSet) => ({
  next: withDeleted(i, 'Service', 'bench', name),
  changed: [{ kind: 'Service', namespace: 'bench', name }],
});

test('Service rounds keep the inbound groups of the shapes no changed service is part of', () => {
  // 8 inbound groups: one per Service with a selector (svc-0…5), pods no service selects (`_`),
  // grpc-inbound/bench. A Service with a selector has a group of its own, pods or not.
  const base = read([benchMeshYaml(6, 0), virtualService(50)].join('---\n'));
  const vsAndService = (i: InputSet) => {
    const withVs = putVs(virtualService(35))(i);
    const withService = putService(service('new-1', 'new-1', GRPC_PORT))(withVs.next);
    return { next: withService.next, changed: [...withVs.changed, ...withService.changed] };
  };
  const steps: Step[] = [
    // Its own group is built; the proxyless servers are kept (it selects no pod).
    {
      label: "a Service selecting no pod (the e2e's)",
      next: putService(service('new-0', 'new-0', GRPC_PORT)),
      kept: false,
      taken: 8,
    },
    // Built: `extra`, `extra,svc-1` (svc-1's pod), grpc-inbound/bench; 11 groups.
    {
      label: "a Service selecting svc-1's pod",
      next: putService(service('extra', 'svc-1', '{name: http, port: 80, targetPort: 8080}')),
      kept: false,
      taken: 8,
    },
    // Built: svc-2's group and grpc-inbound/bench.
    {
      label: 'svc-2 gets another target port',
      next: putService(service('svc-2', 'svc-2', '{name: grpc, port: 8080, targetPort: 9090, protocol: TCP}')),
      kept: false,
      taken: 9,
    },
    // Gone: `extra`, `extra,svc-1`; built: grpc-inbound/bench (svc-1's pod is in `svc-1` again, kept).
    { label: "the Service selecting svc-1's pod deleted", next: deleteService('extra'), kept: false, taken: 8 },
    {
      label: 'a Service without a selector',
      next: putService(service('manual', undefined, GRPC_PORT)),
      kept: true,
      taken: 9,
    },
    { label: 'a VirtualService and a Service in one round', next: vsAndService, kept: false, taken: 9 },
    // Built: `named`, `named,svc-3` (svc-3's pod), grpc-inbound/bench; 12 groups.
    {
      label: 'a named targetPort no endpoint names',
      next: putService(service('named', 'svc-3', '{name: http-web, port: 80, targetPort: web}')),
      kept: false,
      taken: 9,
      unresolved: ['named'],
    },
    {
      label: 'a new Service while it is unresolved',
      next: putService(service('new-2', 'new-2', GRPC_PORT)),
      kept: false,
      taken: 12,
      unresolved: ['named'],
    },
    // Built: `svc-3`, `named,svc-3` (which read the port), grpc-inbound/bench; taken: `named` (which reads it too).
    {
      label: 'svc-3 gets another target port while it is unresolved',
      next: putService(service('svc-3', 'svc-3', '{name: grpc, port: 8080, targetPort: 9090, protocol: TCP}')),
      kept: false,
      taken: 10,
      unresolved: ['named'],
    },
    { label: 'a weight while it is unresolved', next: putVs(virtualService(45)), kept: true, taken: 13 },
    {
      label: 'the named Service deleted',
      next: deleteService('named'),
      kept: false,
      taken: 10,
      unresolved: [],
    },
    {
      label: 'a new Service after that',
      next: putService(service('new-3', 'new-3', GRPC_PORT)),
      kept: false,
      taken: 11,
    },
  ];
  runSteps(base, steps);
});

/** A pod of namespace `shop` with an app and the `tier: web` label. */
const shopPod = (app: string, ip: string): string => `apiVersion: v1
kind: Pod
metadata: {name: ${app}-pod, namespace: shop, labels: {app: ${app}, tier: web}}
spec: {containers: [{name: app, image: app:1}]}
status: {phase: Running, podIP: ${ip}, podIPs: [{ip: ${ip}}], conditions: [{type: Ready, status: "True"}]}
`;
const shopService = (name: string, selector: string, port: string): string => `apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: shop}
spec:
  selector: {${selector}}
  ports: [${port}]
`;
const deleteShopService = (name: string) => (i: InputSet) => ({
  next: withDeleted(i, 'Service', 'shop', name),
  changed: [{ kind: 'Service', namespace: 'shop', name }],
});

/**
 * `web` selects both pods and its targetPort names no container port: the shapes `alpha,web`,
 * `tango,web` and `web` read it (no gRPC port: the proxyless servers read no port). 7 inbound
 * groups: `_`, alpha, tango, web, `alpha,web`, `tango,web`, grpc-inbound/shop. Were the port
 * reported by the first build reading it, taking one of those groups and building another would
 * report it twice or not at all.
 */
const SHOP = [
  shopPod('alpha', '10.5.0.1'),
  shopPod('tango', '10.5.0.2'),
  shopService('alpha', 'app: alpha', '{name: http, port: 80, targetPort: 8080}'),
  shopService('tango', 'app: tango', '{name: http, port: 80, targetPort: 8080}'),
  shopService('web', 'tier: web', '{name: http-web, port: 81, targetPort: web}'),
].join('---\n');

const putShopService = (name: string, selector: string, port: string) => (i: InputSet) => ({
  next: withReplaced(i, 'Service', read(shopService(name, selector, port)).services[0]!),
  changed: [{ kind: 'Service', namespace: 'shop', name }],
});

test('Service rounds that take some inbound groups and build others report an unresolved target port once', () => {
  runSteps(read(SHOP), [
    // Taken: `_`, alpha, web, `alpha,web`; built: tango, `tango,web`, grpc-inbound/shop.
    {
      label: "tango's target port changes",
      next: putShopService('tango', 'app: tango', '{name: http, port: 80, targetPort: 9090}'),
      kept: false,
      taken: 4,
      unresolved: ['web'],
    },
    // alpha's pod is in `alpha,beta,web` now. Taken: `_`, alpha, tango, web, `tango,web`; built:
    // beta, `alpha,beta,web`, grpc-inbound/shop.
    {
      label: "beta appears on alpha's pod with a named port no endpoint names",
      next: putShopService('beta', 'app: alpha', '{name: http-metrics, port: 9100, targetPort: metrics}'),
      kept: false,
      taken: 5,
      unresolved: ['beta', 'web'],
    },
    // Taken: `_`, alpha, tango, beta; built: web, `tango,web`, `alpha,beta,web`, grpc-inbound/shop.
    {
      label: "web's target port becomes a number",
      next: putShopService('web', 'tier: web', '{name: http-web, port: 81, targetPort: 8081}'),
      kept: false,
      taken: 4,
      unresolved: ['beta'],
    },
    // alpha's pod is in `alpha,web` again. Taken: `_`, alpha, tango, web, `tango,web`.
    { label: 'beta deleted', next: deleteShopService('beta'), kept: false, taken: 5, unresolved: [] },
  ]);
  runSteps(read(SHOP), [
    // alpha's pod is in `web` now: the group that read the port first (`alpha,web`) is gone, the
    // others that read it are taken. Taken: `_`, tango, web, `tango,web`; built: alpha, grpc-inbound/shop.
    {
      label: 'alpha leaves its pod',
      next: putShopService('alpha', 'app: nobody', '{name: http, port: 80, targetPort: 8080}'),
      kept: false,
      taken: 4,
      unresolved: ['web'],
    },
    // Built: alpha, `alpha,web`, grpc-inbound/shop.
    {
      label: 'alpha selects its pod again',
      next: putShopService('alpha', 'app: alpha', '{name: http, port: 80, targetPort: 8080}'),
      kept: false,
      taken: 4,
      unresolved: ['web'],
    },
  ]);
});

test("a Service round rebuilds a namespace's proxyless servers only for its own namespace's pods", () => {
  // 10 inbound groups: bench's 8 (svc-0…5, `_`, grpc-inbound/bench), shop's `_` and grpc-inbound/shop.
  const base = read([benchMeshYaml(6, 0), shopPod('alpha', '10.5.0.1'), shopPod('tango', '10.5.0.2')].join('---\n'));
  runSteps(base, [
    // `app: alpha` is a label of a pod in shop, not in bench: grpc-inbound/bench is taken. Built: its own group.
    {
      label: 'a bench Service selecting only a pod of another namespace',
      next: putService(service('alpha-look', 'alpha', GRPC_PORT)),
      kept: false,
      taken: 10,
    },
    // Built: alpha (its pod's shape too), grpc-inbound/shop.
    {
      label: "a shop Service selecting alpha's pod",
      next: putShopService('alpha', 'app: alpha', GRPC_PORT),
      kept: false,
      taken: 10,
    },
  ]);
});

/** Policies an inbound build reads beside its services: per workload, per namespace, per port. */
const POLICIES = `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: bench}
spec:
  mtls: {mode: STRICT}
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: svc-1, namespace: bench}
spec:
  selector: {matchLabels: {app: svc-1}}
  mtls: {mode: STRICT}
  portLevelMtls: {"8080": {mode: PERMISSIVE}}
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: svc-2-only-ns, namespace: bench}
spec:
  selector: {matchLabels: {app: svc-2}}
  action: ALLOW
  rules: [{from: [{source: {namespaces: [bench]}}], to: [{operation: {ports: ["8080"]}}]}]
---
apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: {name: deny-debug, namespace: bench}
spec:
  action: DENY
  rules: [{to: [{operation: {paths: [/debug]}}]}]
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: svc-3, namespace: bench}
spec:
  workloadSelector: {labels: {app: svc-3}}
  ingress:
  - port: {number: 8080, protocol: HTTP, name: http}
    defaultEndpoint: 127.0.0.1:9090
  egress: [{hosts: ["./*"]}]
`;

test('Service rounds beside security policies and a Sidecar equal a full compile, groups taken or built', () => {
  // Inbound builds read their workload's PeerAuthentication (port-level too), AuthorizationPolicies
  // and Sidecar ingress: none of them changes in a Service round, so a taken group must still be
  // what a full compile builds. 7 inbound groups: `_`, svc-0…4 (svc-1, svc-2 and svc-3 keyed by
  // their policy or Sidecar too), grpc-inbound/bench.
  const base = read([benchMeshYaml(5, 0), POLICIES].join('---\n'));
  runSteps(base, [
    // Built: `extra`, `extra,svc-1` (svc-1's pod, port-level PERMISSIVE), grpc-inbound/bench.
    {
      label: "a Service selecting svc-1's pod",
      next: putService(service('extra', 'svc-1', '{name: http, port: 80, targetPort: 8080}')),
      kept: false,
      taken: 6,
    },
    // Built: svc-2's group (an ALLOW on port 8080) and grpc-inbound/bench; 9 groups.
    {
      label: 'svc-2 gets another target port',
      next: putService(service('svc-2', 'svc-2', '{name: grpc, port: 8080, targetPort: 9090, protocol: TCP}')),
      kept: false,
      taken: 7,
    },
    // Built: svc-3's group (Sidecar ingress) and grpc-inbound/bench.
    {
      label: 'svc-3 gets a second port',
      next: putService(service('svc-3', 'svc-3', `${GRPC_PORT}, {name: http-admin, port: 9000, targetPort: 9000}`)),
      kept: false,
      taken: 7,
    },
    // Built: its own group only.
    {
      label: 'a Service selecting no pod',
      next: putService(service('lonely', 'lonely', GRPC_PORT)),
      kept: false,
      taken: 9,
    },
    // Gone: `extra`, `extra,svc-1`; built: grpc-inbound/bench.
    { label: "the Service beside svc-1's deleted", next: deleteService('extra'), kept: false, taken: 7 },
    {
      label: 'a Service without a selector',
      next: putService(service('manual', undefined, GRPC_PORT)),
      kept: true,
      taken: 8,
    },
  ]);
});
