/**
 * AuthorizationPolicy wired into sidecars: which policies apply to which workload, where their
 * filters go in the inbound chains (istiod's order: CUSTOM, then AUDIT/DENY/ALLOW, before fault,
 * cors and the router; network RBAC before tcp_proxy), classes keyed on label-selected policies,
 * mesh config providers and trust domains, and the diagnostics.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyCompileDelta, IncrementalCompiler } from '../../../src/compile/incremental.js';
import { assertSameOutput } from '../incremental-helpers.js';
import { compile } from '../../../src/compile/index.js';
import { retainedForStorage } from '../../../src/inputs/retain.js';
import { loadText } from '../../inputs/helpers.js';
import { served } from '../../helpers/mesh.js';
import { simulateInbound } from './inbound-sim.js';
import { chainFilters, compileYaml, pod, service, sidecarNode, virtualInbound } from './mesh.js';

type Json = Record<string, unknown>;

function ap(name: string, namespace: string, spec: string, annotations = '{}'): string {
  return `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: { name: ${name}, namespace: ${namespace}, annotations: ${annotations} }
spec: ${spec}`;
}

const MESH = (extra: string) => `apiVersion: v1
kind: ConfigMap
metadata: { name: istio, namespace: istio-system }
data:
  mesh: |-
${extra
  .split('\n')
  .map((l) => `    ${l}`)
  .join('\n')}`;

const FOO = { app: 'foo' };
const FOO_IP = '10.244.0.50';
const FOO_POD = pod('foo', FOO_IP, FOO);
const FOO_SVC = service('foo', FOO, [
  { port: 8000, name: 'http' },
  { port: 9000, name: 'tcp' },
]);
const NODE = sidecarNode('foo', FOO_IP, FOO);
const BAR_IP = '10.244.0.51';
const BAR_POD = pod('bar', BAR_IP, { app: 'bar' });
const BAR_NODE = sidecarNode('bar', BAR_IP, { app: 'bar' });

const RBAC = 'envoy.filters.http.rbac';
const NET_RBAC = 'envoy.filters.network.rbac';
const EXT_AUTHZ = 'envoy.filters.http.ext_authz';
const SIDECAR_TAIL = ['envoy.filters.http.fault', 'envoy.filters.http.cors', 'envoy.filters.http.router'];

const rbacOf = (filter: Json | undefined): Json => (filter?.typed_config as Json) ?? {};
const httpFiltersOf = (listener: Json, chainName: string): Json[] => {
  const chain = (listener.filter_chains as Json[]).find((c) => c.name === chainName) as Json;
  const hcm = (chain.filters as Json[])[0]?.typed_config as Json;
  return hcm.http_filters as Json[];
};

test('a namespace-wide policy: RBAC before the router in every HTTP chain, before tcp_proxy in every TCP chain', () => {
  const result = compileYaml(
    FOO_POD,
    FOO_SVC,
    ap('allow-get', 'default', '{ rules: [{ to: [{ operation: { methods: [GET] } }] }] }'),
  );
  assert.deepEqual(result.diagnostics, []);
  const listener = virtualInbound(result, NODE);
  for (const c of chainFilters(listener)) {
    if (c.name === 'virtualInbound-blackhole') assert.deepEqual(c.filters, ['envoy.filters.network.tcp_proxy']);
    else if (c.http) assert.deepEqual(c.http, [RBAC, ...SIDECAR_TAIL], c.name);
    else assert.deepEqual(c.filters, [NET_RBAC, 'envoy.filters.network.tcp_proxy'], c.name);
  }
  // The HTTP rule as istiod writes it; on TCP the method is HTTP-only, so the ALLOW rule is gone (allows nothing).
  const http = rbacOf(httpFiltersOf(listener, '0.0.0.0_8000')[0]);
  assert.deepEqual(Object.keys((http.rules as Json).policies as Json), ['ns[default]-policy[allow-get]-rule[0]']);
  const tcpChain = (listener.filter_chains as Json[]).find((c) => c.name === '0.0.0.0_9000') as Json;
  const tcp = rbacOf((tcpChain.filters as Json[])[0]);
  assert.deepEqual(tcp, {
    '@type': 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC',
    rules: {},
    shadow_rules_stat_prefix: 'istio_dry_run_allow_',
    stat_prefix: 'tcp.',
  });
  // Every sidecar of the namespace gets it, also one no service selects.
  const bare = compileYaml(
    FOO_POD,
    BAR_POD,
    ap('allow-get', 'default', '{ rules: [{ to: [{ operation: { methods: [GET] } }] }] }'),
  );
  assert.deepEqual(chainFilters(virtualInbound(bare, BAR_NODE))[1]?.http, [RBAC, ...SIDECAR_TAIL]);
});

test('other namespaces are untouched; the root namespace applies everywhere', () => {
  const other = pod('baz', '10.244.1.5', { app: 'baz' }, 'other');
  const otherNode = sidecarNode('baz', '10.244.1.5', { app: 'baz' }, 'other');
  const local = compileYaml(FOO_POD, other, ap('deny-all', 'default', '{ action: DENY, rules: [{}] }'));
  assert.deepEqual(chainFilters(virtualInbound(local, otherNode))[1]?.http, SIDECAR_TAIL);
  assert.deepEqual(chainFilters(virtualInbound(local, NODE))[1]?.http, [RBAC, ...SIDECAR_TAIL]);
  const root = compileYaml(FOO_POD, other, ap('deny-all', 'istio-system', '{ action: DENY, rules: [{}] }'));
  assert.deepEqual(chainFilters(virtualInbound(root, otherNode))[1]?.http, [RBAC, ...SIDECAR_TAIL]);
});

test("istiod's order: CUSTOM (shadow RBAC + ext_authz), then AUDIT, DENY, ALLOW; providers from the mesh config", () => {
  const authzSvc = service('ext-authz', { app: 'ext-authz' }, [{ port: 9000, name: 'grpc' }], 'authz');
  const mesh = MESH(`extensionProviders:
- name: my-ext-authz
  envoyExtAuthzGrpc:
    service: ext-authz.authz.svc.cluster.local
    port: 9000
    timeout: 2s`);
  const result = compileYaml(
    FOO_POD,
    FOO_SVC,
    authzSvc,
    mesh,
    ap(
      'ext',
      'default',
      '{ action: CUSTOM, provider: { name: my-ext-authz }, rules: [{ to: [{ operation: { paths: [/admin] } }] }] }',
    ),
    ap('audit', 'default', '{ action: AUDIT, rules: [{}] }'),
    ap('deny', 'default', '{ action: DENY, rules: [{ from: [{ source: { namespaces: [evil] } }] }] }'),
    ap('allow', 'default', '{ rules: [{}] }'),
  );
  assert.deepEqual(result.diagnostics, []);
  const listener = virtualInbound(result, NODE);
  const filters = httpFiltersOf(listener, '0.0.0.0_8000');
  assert.deepEqual(
    filters.map((f) => f.name),
    [RBAC, EXT_AUTHZ, RBAC, RBAC, RBAC, ...SIDECAR_TAIL],
  );
  const actions = filters.slice(2, 5).map((f) => ((rbacOf(f).rules as Json).action as string | undefined) ?? 'ALLOW');
  assert.deepEqual(actions, ['LOG', 'DENY', 'ALLOW']);
  const ext = rbacOf(filters[1]);
  assert.equal(
    ((ext.grpc_service as Json).envoy_grpc as Json).cluster_name,
    'outbound|9000||ext-authz.authz.svc.cluster.local',
  );
  assert.equal((ext.grpc_service as Json).timeout, '2s');
  // gRPC providers also guard TCP: network RBAC (shadow) + network ext_authz before tcp_proxy.
  const tcpChain = (listener.filter_chains as Json[]).find((c) => c.name === '0.0.0.0_9000') as Json;
  assert.deepEqual(
    (tcpChain.filters as Json[]).map((f) => f.name),
    [NET_RBAC, 'envoy.filters.network.ext_authz', NET_RBAC, NET_RBAC, NET_RBAC, 'envoy.filters.network.tcp_proxy'],
  );
});

test('a CUSTOM policy whose provider is unknown denies what it covers, with a diagnostic', () => {
  const result = compileYaml(
    FOO_POD,
    FOO_SVC,
    ap(
      'ext',
      'default',
      '{ action: CUSTOM, provider: { name: nowhere }, rules: [{ to: [{ operation: { paths: [/admin] } }] }] }',
    ),
  );
  assert.deepEqual(
    result.diagnostics.map((d) => [d.severity, d.code, d.name]),
    [['warning', 'authz-provider-failed', 'ext']],
  );
  const filters = httpFiltersOf(virtualInbound(result, NODE), '0.0.0.0_8000');
  assert.deepEqual(
    filters.map((f) => f.name),
    [RBAC, ...SIDECAR_TAIL],
  );
  const rules = rbacOf(filters[0]).rules as Json;
  assert.equal(rules.action, 'DENY');
  assert.deepEqual(Object.keys(rules.policies as Json), [
    'istio-ext-authz-nowhere-ns[default]-policy[ext]-rule[0]-deny-due-to-bad-CUSTOM-action',
  ]);
});

test('a label-selected policy keys the class of the pods it selects; the relay places nodes the same way', () => {
  const policy = ap('foo-only', 'default', '{ selector: { matchLabels: { app: foo } }, action: DENY, rules: [{}] }');
  const result = compileYaml(FOO_POD, BAR_POD, FOO_SVC, policy);
  assert.equal(served(result, NODE).classId, 'sidecar/default/foo/authz:default/foo-only');
  assert.equal(served(result, BAR_NODE).classId, 'sidecar/default/_');
  assert.deepEqual(chainFilters(virtualInbound(result, NODE))[1]?.http, [RBAC, ...SIDECAR_TAIL]);
  assert.deepEqual(chainFilters(virtualInbound(result, BAR_NODE))[1]?.http, SIDECAR_TAIL);
  // A node the policy selects that no compiled class fits is refused, never served the unprotected class.
  const stranger = sidecarNode('new', '10.244.0.99', { app: 'foo', track: 'canary' });
  const canary = ap('canary', 'default', '{ selector: { matchLabels: { track: canary } }, action: DENY, rules: [{}] }');
  const withCanary = compileYaml(FOO_POD, BAR_POD, FOO_SVC, policy, canary);
  assert.throws(() => served(withCanary, stranger), /selected by authz:default\/canary, authz:default\/foo-only/);
  assert.deepEqual(
    withCanary.diagnostics.map((d) => [d.code, d.name]),
    [['policy-selects-nothing', 'canary']],
  );
  // Without the policy, the pod-less node falls back to its service class as before.
  assert.equal(served(compileYaml(FOO_POD, FOO_SVC), stranger).classId, 'sidecar/default/foo');
});

test('diagnostics: targetRef policies, DENY with HTTP-only fields on TCP, principals on plaintext-only workloads', () => {
  const result = compileYaml(
    FOO_POD,
    FOO_SVC,
    ap('gw', 'default', '{ targetRefs: [{ kind: Gateway, group: gateway.networking.k8s.io, name: gw }], rules: [{}] }'),
    ap('no-delete', 'default', '{ action: DENY, rules: [{ to: [{ operation: { methods: [DELETE] } }] }] }'),
    ap(
      'from-ns',
      'default',
      '{ selector: { matchLabels: { app: foo } }, rules: [{ from: [{ source: { namespaces: [a] } }] }] }',
    ),
    `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: { name: plain, namespace: default }
spec: { mtls: { mode: DISABLE } }`,
  );
  assert.deepEqual(
    result.diagnostics.map((d) => [d.code, d.name, d.field]),
    [
      ['principals-without-mtls', 'from-ns', 'spec.rules'],
      ['policy-not-applied', 'gw', 'spec.targetRefs'],
      ['authz-http-only-on-tcp', 'no-delete', 'spec.rules'],
    ],
  );
  // The DENY on TCP: the method is dropped, so it denies every connection (stricter, never looser).
  const listener = virtualInbound(result, NODE);
  const tcpChain = (listener.filter_chains as Json[]).find((c) => c.name === '0.0.0.0_9000') as Json;
  const deny = (tcpChain.filters as Json[])
    .map((f) => f.typed_config as Json)
    .find((c) => (c.rules as Json | undefined)?.action === 'DENY');
  assert.deepEqual(((deny?.rules as Json).policies as Json)['ns[default]-policy[no-delete]-rule[0]'], {
    permissions: [{ and_rules: { rules: [{ any: true }] } }],
    principals: [{ and_ids: { ids: [{ any: true }] } }],
  });
  // The targetRef policy is on no sidecar.
  assert.equal(httpFiltersOf(listener, '0.0.0.0_8000').filter((f) => f.name === RBAC).length, 2);
});

test('trust domain and aliases from the mesh config rewrite principals', () => {
  const mesh = MESH('trustDomain: td1\ntrustDomainAliases: [cluster.local, old-td]');
  const result = compileYaml(
    FOO_POD,
    FOO_SVC,
    mesh,
    ap('from-sa', 'default', '{ rules: [{ from: [{ source: { principals: [cluster.local/ns/a/sa/b] } }] }] }'),
  );
  const rules = rbacOf(httpFiltersOf(virtualInbound(result, NODE), '0.0.0.0_8000')[0]).rules as Json;
  const text = JSON.stringify(rules);
  for (const td of ['td1', 'cluster.local', 'old-td']) assert.ok(text.includes(`spiffe://${td}/ns/a/sa/b`), td);
});

test('enforcement, followed through the chains: the RBAC filter sits in the chain that takes the connection', () => {
  const result = compileYaml(FOO_POD, FOO_SVC, ap('deny-all', 'default', '{ action: DENY, rules: [{}] }'));
  const listener = virtualInbound(result, NODE);
  for (const tls of ['plaintext', 'mtls'] as const) {
    const got = simulateInbound(listener, { port: 8000, protocol: 'http', tls });
    assert.ok('http' in got && got.http, tls);
    assert.equal(((got.http.http_filters as Json[])[0] as Json).name, RBAC);
  }
});

test('the dry-run annotation is kept in stored inputs (it decides enforcement); other annotations are not', () => {
  const raw = loadText('') && {
    apiVersion: 'security.istio.io/v1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'a', namespace: 'default', annotations: { 'istio.io/dry-run': 'true', other: 'x' } },
    spec: {},
  };
  const kept = retainedForStorage(raw) as { metadata: Json };
  assert.deepEqual(kept.metadata.annotations, { 'istio.io/dry-run': 'true' });
});

test('incremental: a policy change is compiled in full and handed on as a delta equal to compiling the new inputs', () => {
  const before = loadText([FOO_POD, FOO_SVC].join('\n---\n'));
  const after = loadText(
    [FOO_POD, FOO_SVC, ap('deny-all', 'default', '{ action: DENY, rules: [{}] }')].join('\n---\n'),
  );
  const inc = new IncrementalCompiler();
  const base = inc.compileFull(before).output;
  const next = inc.update(after, [{ kind: 'AuthorizationPolicy', namespace: 'default', name: 'deny-all' }]);
  assert.equal(next.kind, 'delta');
  assert.equal(inc.lastPath, 'recompiled');
  if (next.kind === 'delta')
    assertSameOutput(applyCompileDelta(base, next.delta, next.layout), compile(after).output, 'policy');
});
