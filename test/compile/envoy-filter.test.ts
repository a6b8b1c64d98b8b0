/**
 * EnvoyFilter, from YAML to the resources a proxy is served: which proxies get which patches
 * (istiod's PushContext.EnvoyFilters: root namespace and own namespace, workloadSelector,
 * priority), in which context (SIDECAR_INBOUND, SIDECAR_OUTBOUND, GATEWAY), and that the rest of
 * the mesh is untouched. The patch operations themselves are tested on their own
 * (envoy-filter-patch.test.ts); here, that the compile applies them where istiod does.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile, compileOwned } from '../../src/compile/index.js';
import { applyCompileDelta, IncrementalCompiler, withReplaced } from '../../src/compile/incremental.js';
import type { EndpointSlice } from '../../src/model/k8s.js';
import { Handoff, parseInputTexts, type PipelineResult } from '../../src/pipeline.js';
import { STATE } from '../history/helpers.js';
import { compileGateway, INGRESS_NODE, PRODUCTPAGE_GATEWAY } from '../helpers/gateway-sim.js';
import {
  BOOKINFO_NODES,
  served,
  type TestNode,
  compileBookinfo,
  indentYaml,
  compileHelloworldGatewayApi,
  HELLOWORLD_GATEWAY_NODE,
} from '../helpers/mesh.js';
import { loadText } from '../inputs/helpers.js';
import { assertSameOutput, bookinfoInputs, randomStep } from './incremental-helpers.js';
import { mulberry32 } from '../inputs/prng.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- walks decoded config_dump JSON */

const indent = indentYaml;
const envoyFilter = (namespace: string, name: string, spec: string, extra = '') =>
  `apiVersion: networking.istio.io/v1alpha3\nkind: EnvoyFilter\nmetadata: { name: ${name}, namespace: ${namespace}${extra} }\nspec:\n${indent(spec, '  ')}\n`;

const bookinfo = compileBookinfo;
const problems = (r: PipelineResult) =>
  r.diagnostics
    .filter((d) => d.severity !== 'info')
    .map((d) => `${d.severity} ${d.code} ${d.kind ?? ''} ${d.namespace ?? ''}/${d.name ?? ''} ${d.field ?? ''}`);

const resources = (r: PipelineResult, node: TestNode) => served(r, node).resources;

/** The HTTP filter names of every HCM of a listener, per filter chain name. */
function httpFilters(l: any): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const chains = [...(l.filter_chains ?? []), ...(l.default_filter_chain ? [l.default_filter_chain] : [])];
  chains.forEach((c: any, i: number) => {
    for (const f of c.filters ?? [])
      if (f.name === 'envoy.filters.network.http_connection_manager')
        out.set(
          `${c.name ?? ''}#${i}`,
          (f.typed_config.http_filters ?? []).map((h: any) => h.name),
        );
  });
  return out;
}

/** A buffer filter before every gateway router. */
const GATEWAY_BUFFER = `configPatches:
- applyTo: HTTP_FILTER
  match:
    context: GATEWAY
    listener: { filterChain: { filter: { name: envoy.filters.network.http_connection_manager, subFilter: { name: envoy.filters.http.router } } } }
  patch:
    operation: INSERT_BEFORE
    value:
      name: envoy.filters.http.buffer
      typed_config: { "@type": type.googleapis.com/envoy.extensions.filters.http.buffer.v3.Buffer, max_request_bytes: 1024 }`;

const LUA = `
applyTo: HTTP_FILTER
match:
  context: SIDECAR_INBOUND
  listener:
    filterChain:
      filter:
        name: envoy.filters.network.http_connection_manager
        subFilter: { name: envoy.filters.http.router }
patch:
  operation: INSERT_BEFORE
  value:
    name: envoy.lua
    typed_config:
      "@type": type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua
      inlineCode: |
        function envoy_on_request(handle) handle:headers():add("x-lua", "1") end
`;

test('a root-namespace EnvoyFilter inserts a Lua filter before the router of every sidecar inbound HCM, and nowhere else', () => {
  const r = bookinfo(envoyFilter('istio-system', 'lua-inbound', `configPatches:\n- ${indent(LUA, '  ').trim()}`));
  assert.deepEqual(problems(r), []);
  for (const node of [BOOKINFO_NODES.productpage, BOOKINFO_NODES.reviewsV2]) {
    const { listeners } = resources(r, node);
    let inbound = 0;
    for (const [name, l] of listeners)
      for (const [chain, filters] of httpFilters(l)) {
        if (name === 'virtualInbound') {
          inbound++;
          assert.equal(filters.at(-1), 'envoy.filters.http.router', chain);
          assert.equal(filters.at(-2), 'envoy.lua', `${name} ${chain}: ${filters.join(',')}`);
        } else assert.ok(!filters.includes('envoy.lua'), `${name} ${chain}`);
      }
    assert.ok(inbound > 0, 'the inbound side has HTTP chains');
  }
  // Without the EnvoyFilter: the same mesh, nothing added (the patch is what adds it).
  const plain = bookinfo();
  for (const [, l] of resources(plain, BOOKINFO_NODES.productpage).listeners)
    for (const [, filters] of httpFilters(l)) assert.ok(!filters.includes('envoy.lua'));
});

test('a workloadSelector picks the proxies: only reviews pods get the merged cluster; the class is split and placed by labels', () => {
  const ef = envoyFilter(
    'default',
    'reviews-timeout',
    `workloadSelector:
  labels: { app: reviews }
configPatches:
- applyTo: CLUSTER
  match:
    context: SIDECAR_OUTBOUND
    cluster: { service: ratings.default.svc.cluster.local, portNumber: 9080 }
  patch:
    operation: MERGE
    value: { connect_timeout: 7s }`,
  );
  const r = bookinfo(ef);
  assert.deepEqual(problems(r), []);
  const ratings = 'outbound|9080||ratings.default.svc.cluster.local';
  const reviews = resources(r, BOOKINFO_NODES.reviewsV2).clusters.get(ratings) as any;
  const productpage = resources(r, BOOKINFO_NODES.productpage).clusters.get(ratings) as any;
  assert.equal(reviews.connect_timeout, '7s');
  assert.notEqual(productpage.connect_timeout, '7s');
  // Everything else of the cluster as it was.
  const { connect_timeout: _a, ...restReviews } = reviews;
  const { connect_timeout: _b, ...restProductpage } = productpage;
  assert.deepEqual(restReviews, restProductpage);
  assert.match(served(r, BOOKINFO_NODES.reviewsV2).classId, /envoyfilter:default\/reviews-timeout/);
  assert.doesNotMatch(served(r, BOOKINFO_NODES.productpage).classId, /envoyfilter:/);
});

test('a CLUSTER ADD is added once per proxy; a route MERGE changes only the matched route config', () => {
  const ef = envoyFilter(
    'istio-system',
    'mixed',
    `configPatches:
- applyTo: CLUSTER
  match: { context: SIDECAR_OUTBOUND }
  patch:
    operation: ADD
    value:
      name: ratelimit-service
      type: STRICT_DNS
      connect_timeout: 1s
      load_assignment:
        cluster_name: ratelimit-service
        endpoints:
        - lb_endpoints:
          - endpoint: { address: { socket_address: { address: ratelimit.istio-system.svc.cluster.local, port_value: 8081 } } }
- applyTo: ROUTE_CONFIGURATION
  match:
    context: SIDECAR_OUTBOUND
    routeConfiguration: { portNumber: 9080 }
  patch:
    operation: MERGE
    value:
      response_headers_to_add:
      - header: { key: x-patched, value: "yes" }`,
  );
  const r = bookinfo(ef);
  assert.deepEqual(problems(r), []);
  const { clusters, routes } = resources(r, BOOKINFO_NODES.productpage);
  const added = clusters.get('ratelimit-service') as any;
  assert.equal(added?.type, 'STRICT_DNS');
  assert.deepEqual(
    (routes.get('9080') as any).response_headers_to_add.map((h: any) => h.header.key),
    ['x-patched'],
  );
  for (const [name, rc] of routes)
    if (name !== '9080') assert.equal((rc as any).response_headers_to_add, undefined, name);
});

test("GATEWAY patches reach the ingress gateway's HCMs; a route patch's portNumber is the Gateway server's port (istiod's PortMap)", () => {
  const ef = envoyFilter('istio-system', 'gw', GATEWAY_BUFFER);
  const routeMerge = envoyFilter(
    'istio-system',
    'gw-route',
    `configPatches:
- applyTo: ROUTE_CONFIGURATION
  match: { context: GATEWAY, routeConfiguration: { portNumber: 80 } }
  patch:
    operation: MERGE
    value: { response_headers_to_add: [{ header: { key: x-gw, value: "1" } }] }`,
  );
  // The gateway's Service binds server port 80 to the pod's 8080: the route config is http.8080.
  const service = `---
apiVersion: v1
kind: Service
metadata: { name: istio-ingressgateway, namespace: istio-system }
spec:
  clusterIP: 10.96.40.1
  selector: { istio: ingressgateway }
  ports: [{ name: http2, port: 80, targetPort: 8080 }]
`;
  const r = compileGateway(service + PRODUCTPAGE_GATEWAY + ef + '---\n' + routeMerge);
  assert.deepEqual(
    problems(r).filter((p) => p.includes('EnvoyFilter')),
    [],
  );
  const { listeners, routes } = resources(r, INGRESS_NODE);
  let gatewayHcms = 0;
  for (const [, l] of listeners)
    for (const [, filters] of httpFilters(l)) {
      gatewayHcms++;
      assert.equal(filters.at(-2), 'envoy.filters.http.buffer', filters.join(','));
    }
  assert.ok(gatewayHcms > 0);
  assert.deepEqual([...routes.keys()], ['http.8080']);
  assert.deepEqual(
    (routes.get('http.8080') as any).response_headers_to_add?.map((h: any) => h.header.key),
    ['x-gw'],
  );
});

test('a patch matching the proxy version is left out (a warning); an unknown field is dropped with a warning as istiod does; a badly typed value is an error and its patch left out; the rest applies', () => {
  const ef = envoyFilter(
    'istio-system',
    'partly',
    `configPatches:
- applyTo: CLUSTER
  match: { context: SIDECAR_OUTBOUND, proxy: { proxyVersion: '^1\\.2.*' }, cluster: { service: ratings.default.svc.cluster.local } }
  patch: { operation: MERGE, value: { connect_timeout: 9s } }
- applyTo: CLUSTER
  match: { context: SIDECAR_OUTBOUND, cluster: { service: details.default.svc.cluster.local } }
  patch: { operation: MERGE, value: { connect_timeout: 11s, no_such_field: 1 } }
- applyTo: CLUSTER
  match: { context: SIDECAR_OUTBOUND, cluster: { service: reviews.default.svc.cluster.local } }
  patch: { operation: MERGE, value: { connect_timeout: 13s } }
- applyTo: CLUSTER
  match: { context: SIDECAR_OUTBOUND, cluster: { service: productpage.default.svc.cluster.local } }
  patch: { operation: MERGE, value: { connect_timeout: 15s, lb_policy: NO_SUCH_POLICY } }`,
  );
  const r = bookinfo(ef);
  const said = problems(r);
  assert.ok(
    said.some((p) =>
      p.startsWith('warning unsupported-field EnvoyFilter istio-system/partly spec.configPatches[0].match.proxy'),
    ),
    said.join('\n'),
  );
  assert.ok(
    said.includes(
      'warning unknown-field EnvoyFilter istio-system/partly spec.configPatches[1].patch.value.no_such_field',
    ),
    said.join('\n'),
  );
  assert.ok(
    said.includes('error invalid-field EnvoyFilter istio-system/partly spec.configPatches[3].patch.value.lb_policy'),
    said.join('\n'),
  );
  const { clusters } = resources(r, BOOKINFO_NODES.productpage);
  assert.notEqual((clusters.get('outbound|9080||ratings.default.svc.cluster.local') as any).connect_timeout, '9s');
  assert.equal((clusters.get('outbound|9080||details.default.svc.cluster.local') as any).connect_timeout, '11s');
  assert.equal((clusters.get('outbound|9080||reviews.default.svc.cluster.local') as any).connect_timeout, '13s');
  assert.notEqual((clusters.get('outbound|9080||productpage.default.svc.cluster.local') as any).connect_timeout, '15s');
});

test('priority and namespaces order the patches as istiod: lower priority first, the root namespace first, then age', () => {
  const merge = (timeout: string) => `configPatches:
- applyTo: CLUSTER
  match: { context: SIDECAR_OUTBOUND, cluster: { service: ratings.default.svc.cluster.local } }
  patch: { operation: MERGE, value: { connect_timeout: ${timeout} } }`;
  const root = envoyFilter('istio-system', 'root', merge('2s'));
  const local = envoyFilter('default', 'local', merge('3s'));
  const timeout = (r: PipelineResult) =>
    (resources(r, BOOKINFO_NODES.productpage).clusters.get('outbound|9080||ratings.default.svc.cluster.local') as any)
      .connect_timeout;
  // Same priority: root first, the namespace's last (it wins).
  assert.equal(timeout(bookinfo(local, root)), '3s');
  // The root's with a higher priority number applies after.
  const rootLater = envoyFilter('istio-system', 'root', `priority: 10\n${merge('2s')}`);
  assert.equal(timeout(bookinfo(local, rootLater)), '2s');
  // Another namespace's EnvoyFilter does not apply to default's proxies.
  assert.notEqual(timeout(bookinfo(envoyFilter('other', 'elsewhere', merge('5s')))), '5s');
});

test('incremental: with an EnvoyFilter, a VirtualService change and the EnvoyFilter added equal a full compile', () => {
  const ef = envoyFilter('istio-system', 'lua-inbound', `configPatches:\n- ${indent(LUA, '  ').trim()}`);
  const added = loadText(ef).envoyFilters[0];
  assert.ok(added);
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(bookinfoInputs()).output;
  const next = withReplaced(bookinfoInputs(), 'EnvoyFilter', added);
  const r = ic.update(next, [{ kind: 'EnvoyFilter', namespace: 'istio-system', name: 'lua-inbound' }]);
  output = r.kind === 'delta' ? applyCompileDelta(output, r.delta, r.layout) : r.output;
  assertSameOutput(output, compile(next).output, 'EnvoyFilter added');
  assert.ok([...output.groups.keys()].some((g) => g.startsWith('inbound/') && g.includes('~ef-')));
  // An endpoint change with EnvoyFilters in the mesh: equal to compile().
  const slice = next.endpointSlices[0];
  assert.ok(slice);
  const moved = { ...slice, endpoints: slice.endpoints.slice(0, Math.max(0, slice.endpoints.length - 1)) };
  const after = withReplaced(next, 'EndpointSlice', moved);
  const r2 = ic.update(after, [{ kind: 'EndpointSlice', namespace: slice.meta.namespace, name: slice.meta.name }]);
  output = r2.kind === 'delta' ? applyCompileDelta(output, r2.delta, r2.layout) : r2.output;
  assertSameOutput(output, compile(after).output, 'endpoint change with an EnvoyFilter');
});

test('incremental: endpoint churn with EnvoyFilters stays a delta where no patched group changes, a full compile where one does; always equal to compile()', () => {
  const efs = [
    envoyFilter('istio-system', 'lua-inbound', `configPatches:\n- ${indent(LUA, '  ').trim()}`),
    envoyFilter(
      'default',
      'ratings-timeout',
      `configPatches:
- applyTo: CLUSTER
  match: { context: SIDECAR_OUTBOUND, cluster: { service: ratings.default.svc.cluster.local } }
  patch: { operation: MERGE, value: { connect_timeout: 3s } }`,
    ),
  ].join('---\n');
  let kinds = { delta: 0, full: 0 };
  let inputs = bookinfoInputs([['ef.yaml', efs]]);
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(inputs).output;
  assert.ok([...output.groups.keys()].some((g) => g.includes('~ef-')));
  const rand = mulberry32(13);
  for (let i = 0; i < 25; i++) {
    const step = randomStep(inputs, rand, i);
    inputs = step.next;
    const r = ic.update(inputs, step.changed);
    kinds = { ...kinds, [r.kind]: kinds[r.kind] + 1 };
    output = r.kind === 'delta' ? applyCompileDelta(output, r.delta, r.layout) : r.output;
    assertSameOutput(output, compile(inputs).output, `step ${i} (${step.label})`);
  }
  // EDS endpoint changes touch only the endpoints groups, which EnvoyFilters never patch.
  assert.ok(kinds.delta > 0, JSON.stringify(kinds));
});

/** A rate limit Envoy rejects (an empty stat_prefix) before every inbound router. */
const BAD_RATE_LIMIT = `configPatches:
- applyTo: HTTP_FILTER
  match:
    context: SIDECAR_INBOUND
    listener: { filterChain: { filter: { name: envoy.filters.network.http_connection_manager, subFilter: { name: envoy.filters.http.router } } } }
  patch:
    operation: INSERT_BEFORE
    value:
      name: envoy.filters.http.local_ratelimit
      typed_config:
        "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
        stat_prefix: ""`;

test('an EnvoyFilter whose patches Envoy would reject is left out (an error naming it and the rule); the others apply', () => {
  const bad = envoyFilter('istio-system', 'bad', BAD_RATE_LIMIT);
  const good = envoyFilter('istio-system', 'lua-inbound', `configPatches:\n- ${indent(LUA, '  ').trim()}`);
  const r = bookinfo(bad, good);
  const said = problems(r);
  const refusal = r.diagnostics.find((d) => d.code === 'envoyfilter-not-applied');
  assert.equal(refusal?.name, 'bad', said.join('\n'));
  assert.equal(refusal?.severity, 'error');
  assert.match(refusal?.message ?? '', /stat_prefix.*string\.min_len/);
  assert.ok(!said.some((p) => p.includes('lua-inbound')), said.join('\n'));
  for (const [name, l] of resources(r, BOOKINFO_NODES.productpage).listeners)
    for (const [chain, filters] of httpFilters(l)) {
      assert.ok(!filters.includes('envoy.filters.http.local_ratelimit'), `${name} ${chain}`);
      if (name === 'virtualInbound') assert.equal(filters.at(-2), 'envoy.lua', `${name} ${chain}`);
    }
});

test('a REMOVE that leaves a reference dangling is refused; one nothing refers to applies', () => {
  const removeCluster = envoyFilter(
    'istio-system',
    'rm-cluster',
    `configPatches:
- applyTo: CLUSTER
  match: { context: SIDECAR_OUTBOUND, cluster: { service: reviews.default.svc.cluster.local, portNumber: 9080 } }
  patch: { operation: REMOVE }`,
  );
  const removeListener = envoyFilter(
    'default',
    'rm-listener',
    `configPatches:
- applyTo: LISTENER
  match: { context: SIDECAR_OUTBOUND, listener: { portNumber: 9080, name: 0.0.0.0_9080 } }
  patch: { operation: REMOVE }`,
  );
  const r = bookinfo(removeCluster, removeListener);
  const refusal = r.diagnostics.filter((d) => d.code === 'envoyfilter-not-applied');
  assert.deepEqual(
    refusal.map((d) => d.name),
    ['rm-cluster'],
  );
  assert.match(refusal[0]?.message ?? '', /outbound\|9080\|\|reviews\.default\.svc\.cluster\.local is removed/);
  const { clusters, listeners } = resources(r, BOOKINFO_NODES.productpage);
  assert.ok(clusters.has('outbound|9080||reviews.default.svc.cluster.local'));
  assert.ok(!listeners.has('0.0.0.0_9080'));
  assert.ok(resources(bookinfo(), BOOKINFO_NODES.productpage).listeners.has('0.0.0.0_9080'));
});

test('a root-namespace EnvoyFilter with a workloadSelector selects workloads of other namespaces (ratings in default)', () => {
  const ef = envoyFilter(
    'istio-system',
    'ratings-everywhere',
    `workloadSelector: { labels: { app: ratings } }
configPatches:
- applyTo: CLUSTER
  match: { context: SIDECAR_INBOUND }
  patch: { operation: MERGE, value: { connect_timeout: 4s } }`,
  );
  const r = bookinfo(ef);
  assert.deepEqual(problems(r), []);
  const ratingsNode: TestNode = {
    id: 'sidecar~10.244.0.12~ratings-v1-5f6d7c8b9-abcde.default~default.svc.cluster.local',
    metadata: {
      NAMESPACE: 'default',
      LABELS: { app: 'ratings', version: 'v1', 'security.istio.io/tlsMode': 'istio' },
      INSTANCE_IPS: '10.244.0.12',
    },
  };
  const inbound = [...resources(r, ratingsNode).clusters].filter(([n]) => n.startsWith('inbound|'));
  assert.ok(inbound.length > 0);
  for (const [name, c] of inbound) assert.equal((c as any).connect_timeout, '4s', name);
  for (const [name, c] of resources(r, BOOKINFO_NODES.productpage).clusters)
    if (name.startsWith('inbound|')) assert.notEqual((c as any).connect_timeout, '4s', name);
});

test('a listener filter added without typed_config is refused (Envoy finds no implementation for it); with one it applies', () => {
  const listenerFilter = (value: string) =>
    envoyFilter(
      'istio-system',
      'proxy-protocol',
      `configPatches:
- applyTo: LISTENER_FILTER
  match: { context: SIDECAR_INBOUND, listener: { name: virtualInbound } }
  patch:
    operation: INSERT_FIRST
    value: ${value}`,
    );
  const bare = bookinfo(listenerFilter('{ name: envoy.filters.listener.proxy_protocol }'));
  const refusal = bare.diagnostics.find((d) => d.code === 'envoyfilter-not-applied');
  assert.equal(refusal?.name, 'proxy-protocol');
  assert.match(refusal?.message ?? '', /envoy\.listener_filter\.typed_config/);
  const names = (r: PipelineResult) =>
    ((resources(r, BOOKINFO_NODES.productpage).listeners.get('virtualInbound') as any).listener_filters ?? []).map(
      (f: any) => f.name,
    );
  assert.ok(!names(bare).includes('envoy.filters.listener.proxy_protocol'));
  const typed = bookinfo(
    listenerFilter(
      '{ name: envoy.filters.listener.proxy_protocol, typed_config: { "@type": type.googleapis.com/envoy.extensions.filters.listener.proxy_protocol.v3.ProxyProtocol } }',
    ),
  );
  assert.deepEqual(problems(typed), []);
  assert.equal(names(typed)[0], 'envoy.filters.listener.proxy_protocol');
});

test("targetRefs to a Gateway API Gateway attach the EnvoyFilter to that gateway's pods only (istiod's ShouldAttachPolicy); other kinds are warned", () => {
  const helloworld = compileHelloworldGatewayApi;
  const GW_NODE = HELLOWORLD_GATEWAY_NODE;
  const ref = (kind: string, name: string, group = 'gateway.networking.k8s.io') =>
    envoyFilter(
      'default',
      'gw-buffer',
      `targetRefs: [{ group: ${group}, kind: ${kind}, name: ${name} }]\n${GATEWAY_BUFFER}`,
    );
  const buffered = (r: PipelineResult, node: TestNode) =>
    [...resources(r, node).listeners.values()].some((l) =>
      [...httpFilters(l).values()].some((f) => f.includes('envoy.filters.http.buffer')),
    );
  const attached = helloworld(ref('Gateway', 'helloworld-gateway'));
  assert.deepEqual(
    attached.diagnostics.filter((d) => d.kind === 'EnvoyFilter' && d.severity !== 'info'),
    [],
  );
  assert.match(served(attached, GW_NODE).classId, /envoyfilter:default\/gw-buffer/);
  assert.ok(buffered(attached, GW_NODE));
  // Sidecars of the namespace: targetRefs never select them.
  assert.ok(!buffered(attached, BOOKINFO_NODES.productpage));
  const other = helloworld(ref('Gateway', 'other-gateway'));
  assert.ok(!buffered(other, GW_NODE));
  const waypoint = helloworld(ref('Service', 'helloworld', '""'));
  assert.ok(!buffered(waypoint, GW_NODE));
  assert.ok(
    waypoint.diagnostics.some(
      (d) => d.code === 'unsupported-field' && d.kind === 'EnvoyFilter' && d.field === 'spec.targetRefs[0]',
    ),
  );
});

/** A Service whose targetPort names a container port (`http`), its slice naming it on `port`, and its pod. */
const namedPortService = (port: number, ip: string) => `apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.96.77.1, selector: {app: web}, ports: [{name: http-web, port: 80, targetPort: http}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default, labels: {app: web}}
spec: {containers: [{name: web, ports: [{name: http, containerPort: ${port}}]}]}
status: {phase: Running, podIP: ${ip}, podIPs: [{ip: ${ip}}], conditions: [{type: Ready, status: "True"}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-a, namespace: default, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http-web, port: ${port}, protocol: TCP}]
endpoints: [{addresses: [${ip}], conditions: {ready: true}, targetRef: {kind: Pod, namespace: default, name: web-0}}]
`;

test('incremental: an endpoint round that rebuilds a patched group (named target ports, a headless service) makes its copies again: a delta equal to compile()', () => {
  const efs = [
    envoyFilter('istio-system', 'lua-inbound', `configPatches:\n- ${indent(LUA, '  ').trim()}`),
    envoyFilter(
      'istio-system',
      'outbound-hcm',
      `configPatches:
- applyTo: NETWORK_FILTER
  match: { context: SIDECAR_OUTBOUND, listener: { filterChain: { filter: { name: envoy.filters.network.http_connection_manager } } } }
  patch:
    operation: MERGE
    value: { typed_config: { "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager, common_http_protocol_options: { idle_timeout: 30s } } }
- applyTo: LISTENER
  match: { context: SIDECAR_OUTBOUND }
  patch: { operation: MERGE, value: { per_connection_buffer_limit_bytes: 65536 } }`,
    ),
  ].join('---\n');
  const headless = `apiVersion: v1
kind: Service
metadata: {name: db, namespace: default}
spec: {clusterIP: None, selector: {app: db}, ports: [{name: tcp-db, port: 5432, targetPort: 5432}]}
`;
  const dbSlice = (ips: readonly string[]) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: db-a, namespace: default, labels: {kubernetes.io/service-name: db}}
addressType: IPv4
ports: [{name: tcp-db, port: 5432, protocol: TCP}]
endpoints:
${ips.map((ip) => `- {addresses: [${ip}], conditions: {ready: true}}`).join('\n')}
`;
  let inputs = bookinfoInputs([
    ['ef.yaml', efs],
    ['web.yaml', namedPortService(8000, '10.244.7.1')],
    ['db.yaml', `${headless}---\n${dbSlice(['10.244.8.1'])}`],
  ]);
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(inputs).output;
  // Every class's inbound group and the outbound listeners are patched copies; the originals are gone.
  assert.ok([...output.groups.keys()].some((g) => g.startsWith('outbound-listeners') && g.includes('~ef-')));
  assert.ok(![...output.groups.keys()].includes('outbound-listeners'));
  const steps: [string, EndpointSlice][] = [
    ['the named port moves', loadText(namespedSlice(9000)).endpointSlices[0]!],
    ['a headless pod joins', loadText(dbSlice(['10.244.8.1', '10.244.8.2'])).endpointSlices[0]!],
    ['the named port moves back', loadText(namespedSlice(8000)).endpointSlices[0]!],
    ['a headless pod leaves', loadText(dbSlice(['10.244.8.2'])).endpointSlices[0]!],
  ];
  for (const [label, slice] of steps) {
    inputs = withReplaced(inputs, 'EndpointSlice', slice);
    const r = ic.update(inputs, [{ kind: 'EndpointSlice', namespace: 'default', name: slice.meta.name }]);
    assert.equal(r.kind, 'delta', label);
    if (r.kind !== 'delta') continue;
    // The copies changed, not only originals no class lists.
    assert.ok(
      Object.keys(r.delta).some((g) => g.includes('~ef-')),
      `${label}: ${Object.keys(r.delta).join(' ')}`,
    );
    output = applyCompileDelta(output, r.delta, r.layout);
    const want = compile(inputs);
    assertSameOutput(output, want.output, label);
    assert.deepEqual(r.diagnostics, want.diagnostics, `${label}: diagnostics`);
  }
});

/** The named-port service's slice with its endpoint on `port`. */
const namespedSlice = (port: number) =>
  namedPortService(port, '10.244.7.1')
    .split('---\n')
    .find((d) => d.includes('kind: EndpointSlice')) as string;

test('incremental: with an EnvoyFilter left out for some class, an endpoint round that rebuilds a patched group compiles in full (only that says what applies then)', () => {
  const efs = [
    envoyFilter('istio-system', 'lua-inbound', `configPatches:\n- ${indent(LUA, '  ').trim()}`),
    envoyFilter('istio-system', 'bad', BAD_RATE_LIMIT),
  ].join('---\n');
  let inputs = bookinfoInputs([
    ['ef.yaml', efs],
    ['web.yaml', namedPortService(8000, '10.244.7.1')],
  ]);
  const ic = new IncrementalCompiler();
  assert.ok(ic.compileFull(inputs).diagnostics.some((d) => d.code === 'envoyfilter-not-applied'));
  const slice = loadText(namespedSlice(9000)).endpointSlices[0]!;
  inputs = withReplaced(inputs, 'EndpointSlice', slice);
  const r = ic.update(inputs, [{ kind: 'EndpointSlice', namespace: 'default', name: slice.meta.name }]);
  assert.equal(r.kind, 'full');
  if (r.kind === 'full') assertSameOutput(r.output, compile(inputs).output, 'full');
});

test('compileOwned: inputs handed over are taken once; its collection runs only where the mesh has EnvoyFilters, before the copies are made', () => {
  const lua = envoyFilter('istio-system', 'lua-inbound', `configPatches:\n- ${indent(LUA, '  ').trim()}`);
  const inputsOf = (extra: string[]) =>
    parseInputTexts([{ file: 'state.yaml', text: STATE }, ...extra.map((text, i) => ({ file: `${i}.yaml`, text }))]);
  for (const [extra, collects] of [
    [[lua], true],
    [[], false],
  ] as const) {
    let called = 0;
    const handed = new Handoff(inputsOf([...extra]));
    const owned = compileOwned(handed, { collect: () => called++ });
    assert.equal(called, collects ? 1 : 0);
    assert.throws(() => handed.take(), /already taken/);
    // The same output and diagnostics as the InputSet given.
    const given = compileOwned(inputsOf([...extra]));
    assert.deepEqual(owned.diagnostics, given.diagnostics);
    assert.deepEqual([...owned.output.groups.keys()], [...given.output.groups.keys()]);
    assert.deepEqual(owned.output.classes, given.output.classes);
  }
});
