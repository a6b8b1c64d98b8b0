/**
 * DestinationRules with a workloadSelector: facts ported from istiod's TestCreateSidecarScope
 * (pilot/pkg/model/sidecar_test.go: sidecar-scope-with-matching-workloadselector-dr,
 * …-non-matching-…, …-same-workloadselector-labels-drs-should-be-merged) and from
 * SidecarScope.DestinationRule / PushContext.destinationRule (the search stops in the proxy's
 * namespace), observed on what each sidecar is served.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { served } from '../../helpers/mesh.js';
import { compileMesh, pod, proxy, view } from './scope-mesh.js';

const HTTPBIN = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: httpbin, namespace: mynamespace}
spec: {hosts: [httpbin.org], ports: [{number: 80, name: http, protocol: HTTP}], resolution: DNS, location: MESH_EXTERNAL}`;

const POOL = '{http: {maxRetries: 33}, tcp: {connectTimeout: 33s}}';
const dr = (name: string, selector: string | undefined, rest: string): string => `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: ${name}, namespace: mynamespace}
spec:
  host: httpbin.org
${selector ? `  workloadSelector: {matchLabels: ${selector}}\n` : ''}${rest}`;

/** istiod's destinationRule1, 2, 3 and nonWorkloadSelectorDr (named catch-all here). */
const RULES = [
  dr('drrule1', '{app: app1}', `  trafficPolicy: {connectionPool: ${POOL}}`),
  dr(
    'drrule2',
    '{app: app2}',
    `  trafficPolicy: {connectionPool: ${POOL}, outlierDetection: {consecutive5xxErrors: 3}}`,
  ),
  dr('drrule3', '{app: app1}', '  subsets: [{name: subset1}, {name: subset2}]'),
  dr('catch-all', undefined, `  trafficPolicy: {connectionPool: ${POOL}}`),
];
const PODS = [
  pod('mynamespace', 'app1', '10.1.0.1', '{app: app1}'),
  pod('mynamespace', 'app2', '10.1.0.2', '{app: app2}'),
  pod('mynamespace', 'other', '10.1.0.3', '{app: other}'),
];

type Json = Record<string, unknown>;
const httpbin = (v: ReturnType<typeof view>, subset = ''): Json | undefined =>
  v.resources.clusters.get(`outbound|80|${subset}|httpbin.org`);
const subsetsOf = (v: ReturnType<typeof view>) =>
  v.clusters.filter((n) => n.endsWith('|httpbin.org') && !n.startsWith('outbound|80||'));

test('a workload selected by rules of its namespace gets them: matching selector (drRule2), merged same selector (drRule1 + drRule3)', () => {
  const result = compileMesh(HTTPBIN, ...RULES, ...PODS);
  const app2 = view(result, proxy('mynamespace', { app: 'app2' }));
  assert.match(app2.classId, /dr:mynamespace\/drrule2/);
  assert.deepEqual((httpbin(app2)?.outlier_detection as Json | undefined)?.consecutive_5xx, 3);
  assert.equal(httpbin(app2)?.connect_timeout, '33s');
  assert.deepEqual(subsetsOf(app2), []);

  const app1 = view(result, proxy('mynamespace', { app: 'app1' }));
  assert.match(app1.classId, /dr:mynamespace\/drrule1,dr:mynamespace\/drrule3/);
  assert.equal(httpbin(app1)?.connect_timeout, '33s', "drRule1's traffic policy");
  assert.equal(httpbin(app1)?.outlier_detection, undefined);
  assert.deepEqual(subsetsOf(app1), ['outbound|80|subset1|httpbin.org', 'outbound|80|subset2|httpbin.org']);
  const metadata = httpbin(app1)?.metadata as { filter_metadata: { istio: { config: string } } };
  assert.equal(
    metadata.filter_metadata.istio.config,
    '/apis/networking.istio.io/v1/namespaces/mynamespace/destination-rule/drrule1',
  );
});

test('a workload no selector picks gets the rule without a selector (sidecar-scope-with-non-matching-workloadselector-dr)', () => {
  const result = compileMesh(HTTPBIN, ...RULES, ...PODS);
  const other = view(result, proxy('mynamespace', { app: 'other' }));
  assert.doesNotMatch(other.classId, /dr:/);
  assert.equal(httpbin(other)?.connect_timeout, '33s');
  assert.equal(httpbin(other)?.outlier_detection, undefined);
  assert.deepEqual(subsetsOf(other), []);
  const metadata = httpbin(other)?.metadata as { filter_metadata: { istio: { config: string } } };
  assert.match(metadata.filter_metadata.istio.config, /destination-rule\/catch-all$/);
});

test('rules with a selector reach only their own namespace; another namespace keeps the shared clusters', () => {
  const result = compileMesh(HTTPBIN, ...RULES, ...PODS, pod('default', 'client', '10.1.0.9', '{app: app2}'));
  const elsewhere = view(result, proxy('default', { app: 'app2' }));
  assert.doesNotMatch(elsewhere.classId, /dr:/);
  assert.equal(httpbin(elsewhere)?.outlier_detection, undefined);
  // The catch-all is exported: the shared view has its policy, in the groups every sidecar shares.
  assert.equal(httpbin(elsewhere)?.connect_timeout, '33s');
  const classes = result.snapshot.content.classes;
  assert.equal(classes.find((c) => c.id === 'sidecar/default/_')?.groups[0], 'outbound');
});

test("the search stops in the client's namespace: a workload no selector picks gets no rule there, the service's namespace's is not reached", () => {
  const own = `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: owner, namespace: default}
spec: {host: known.default.svc.cluster.local, trafficPolicy: {connectionPool: {tcp: {connectTimeout: 7s}}}}`;
  const selective = `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: canary-only, namespace: not-default}
spec:
  host: known.default.svc.cluster.local
  workloadSelector: {matchLabels: {track: canary}}
  trafficPolicy: {connectionPool: {tcp: {connectTimeout: 3s}}}`;
  const result = compileMesh(
    own,
    selective,
    pod('not-default', 'canary', '10.1.0.4', '{track: canary}'),
    pod('not-default', 'stable', '10.1.0.5', '{track: stable}'),
  );
  const known = (v: ReturnType<typeof view>) =>
    v.resources.clusters.get('outbound|80||known.default.svc.cluster.local');
  assert.equal(known(view(result, proxy('not-default', { track: 'canary' })))?.connect_timeout, '3s');
  const stable = view(result, proxy('not-default', { track: 'stable' }));
  assert.equal(known(stable)?.connect_timeout, '10s', "istiod's default: no rule applies");
  assert.equal(known(view(result, proxy('default')))?.connect_timeout, '7s');
  const warning = result.diagnostics.find((d) => d.code === 'selector-rule-shadows');
  assert.deepEqual(
    [warning?.severity, warning?.namespace, warning?.name, warning?.field],
    ['warning', 'not-default', 'canary-only', 'spec.workloadSelector'],
  );
  assert.match(warning?.message ?? '', /known\.default\.svc\.cluster\.local/);
  // Without the selective rule, not-default's workloads share the full view and get the owner's rule.
  const plain = compileMesh(own, pod('not-default', 'stable', '10.1.0.5', '{track: stable}'));
  const shared = view(plain, proxy('not-default', { track: 'stable' }));
  assert.equal(known(shared)?.connect_timeout, '7s');
  assert.equal(plain.snapshot.content.classes.find((c) => c.id === shared.classId)?.groups[0], 'outbound');
  // With a rule without a selector in not-default, nothing is lost, and nothing is warned.
  const local = own.replace('name: owner, namespace: default', 'name: local, namespace: not-default');
  const kept = compileMesh(own, selective, local, pod('not-default', 'stable', '10.1.0.5', '{track: stable}'));
  assert.equal(known(view(kept, proxy('not-default', { track: 'stable' })))?.connect_timeout, '7s');
  assert.ok(!kept.diagnostics.some((d) => d.code === 'selector-rule-shadows'));
});

test("a rule selecting a gateway's pod applies to that gateway (istiod's gateways use SidecarScope.DestinationRule too)", () => {
  const gateway = `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: gw, namespace: mynamespace}
spec: {selector: {istio: ingressgateway}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]}`;
  const rule = dr(
    'gw-only',
    '{istio: ingressgateway}',
    '  trafficPolicy: {outlierDetection: {consecutive5xxErrors: 4}}',
  );
  const result = compileMesh(HTTPBIN, gateway, rule, pod('mynamespace', 'gw-1', '10.1.0.7', '{istio: ingressgateway}'));
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info').map((d) => d.code),
    [],
  );
  const selected = served(result, {
    id: 'router~10.1.0.7~gw-1.mynamespace~mynamespace.svc.cluster.local',
    metadata: { NAMESPACE: 'mynamespace', LABELS: { istio: 'ingressgateway' } },
  });
  assert.match(selected.classId, /dr:mynamespace\/gw-only/);
  const cluster = selected.resources.clusters.get('outbound|80||httpbin.org') as Json | undefined;
  assert.equal((cluster?.outlier_detection as Json | undefined)?.consecutive_5xx, 4);
  // A sidecar of the namespace that the rule does not select keeps the shared cluster.
  assert.equal(httpbin(view(result, proxy('mynamespace', { app: 'app1' })))?.outlier_detection, undefined);
});

test("a gateway sees what its namespace sees (istiod's DefaultSidecarScopeForGateway): its namespace's rule first, exportTo '.' included", () => {
  const gateway = `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: gw, namespace: gwns}
spec: {selector: {istio: ingressgateway}, servers: [{port: {number: 80, name: http, protocol: HTTP}, hosts: ['*']}]}`;
  const local = `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: at-the-edge, namespace: gwns}
spec: {host: httpbin.org, exportTo: ['.'], trafficPolicy: {connectionPool: {tcp: {connectTimeout: 4s}}}}`;
  const owner = dr('owner', undefined, '  trafficPolicy: {connectionPool: {tcp: {connectTimeout: 8s}}}');
  const result = compileMesh(
    HTTPBIN,
    gateway,
    local,
    owner,
    pod('gwns', 'gw-1', '10.1.0.7', '{istio: ingressgateway}'),
  );
  const router = served(result, {
    id: 'router~10.1.0.7~gw-1.gwns~gwns.svc.cluster.local',
    metadata: { NAMESPACE: 'gwns', LABELS: { istio: 'ingressgateway' } },
  });
  assert.equal((router.resources.clusters.get('outbound|80||httpbin.org') as Json | undefined)?.connect_timeout, '4s');
  // So do the namespace's sidecars (the host has two labels: it is the ServiceEntry's, not `<name>.<namespace>`);
  // sidecars elsewhere get the service namespace's rule.
  assert.equal(httpbin(view(result, proxy('gwns', { app: 'x' })))?.connect_timeout, '4s');
  assert.equal(httpbin(view(result, proxy('mynamespace', { app: 'app1' })))?.connect_timeout, '8s');
});

test('an empty selector selects every workload of its namespace and names no class', () => {
  const everyone = dr('everyone', '{}', '  trafficPolicy: {outlierDetection: {consecutive5xxErrors: 9}}');
  const result = compileMesh(HTTPBIN, everyone, ...PODS);
  for (const app of ['app1', 'other']) {
    const v = view(result, proxy('mynamespace', { app }));
    assert.doesNotMatch(v.classId, /dr:/);
    assert.equal((httpbin(v)?.outlier_detection as Json | undefined)?.consecutive_5xx, 9, app);
  }
  assert.equal(httpbin(view(result, proxy('default')))?.outlier_detection, undefined);
});

test('no warning that the rule is ignored; a host no service has is still reported', () => {
  const ghost = dr('ghost', '{app: app1}', '').replace('host: httpbin.org', 'host: nope.example.com');
  const result = compileMesh(HTTPBIN, ...RULES, ghost, ...PODS);
  const codes = result.diagnostics.map((d) => `${d.code}:${d.name ?? ''}`);
  assert.ok(!codes.some((c) => c.startsWith('unsupported-workload-selector')), codes.join(' '));
  assert.ok(codes.includes('unknown-host:ghost'), codes.join(' '));
});
