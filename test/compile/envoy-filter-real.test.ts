/**
 * EnvoyFilters real users write, from public sources (Istio's samples, its integration and unit
 * tests' testdata, its API reference and docs), compiled against the bookinfo cluster state
 * (sidecars) or the gateway simulator's ingress gateway. Only names, namespaces and selectors are
 * adapted (so they select those workloads); the patch values are kept as the source writes them
 * (camelCase and snake_case, `@type` URLs, TypedStruct, quoted strings).
 *
 * Each test: the compile says nothing (no warning, no error) — or exactly what meshsnap documents
 * where it deliberately differs from istiod —, the matching proxy is served the patch where istiod
 * applies it, and a proxy the EnvoyFilter does not select is served exactly what it is served
 * without the EnvoyFilter.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type PipelineResult } from '../../src/pipeline.js';
import { messageFromJson } from '../../src/xds/json-message.js';
import { decodeMessage } from '../../src/xds/proto.js';
import { compileGateway, gatewayYaml, INGRESS_NODE, PRODUCTPAGE_GATEWAY } from '../helpers/gateway-sim.js';
import { BOOKINFO_NODES, served, type TestNode, compileBookinfo } from '../helpers/mesh.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- walks decoded config_dump JSON */

const HCM = 'envoy.filters.network.http_connection_manager';
const ROUTER = 'envoy.filters.http.router';

const bookinfo = compileBookinfo;

const gateway = (...texts: string[]) => compileGateway(PRODUCTPAGE_GATEWAY + texts.map((t) => `---\n${t}\n`).join(''));

const said = (r: PipelineResult) =>
  r.diagnostics
    .filter((d) => d.severity !== 'info')
    .map(
      (d) =>
        `${d.severity} ${d.code} ${d.kind ?? ''} ${d.namespace ?? ''}/${d.name ?? ''} ${d.field ?? ''}: ${d.message}`,
    );

const resources = (r: PipelineResult, node: TestNode) => served(r, node).resources;

/** A proxy the EnvoyFilter does not select is served exactly what it is served without it. */
function assertUntouched(withFilter: PipelineResult, without: PipelineResult, node: TestNode) {
  const a = resources(withFilter, node);
  const b = resources(without, node);
  for (const type of Object.keys(b) as (keyof typeof b)[])
    assert.deepEqual(Object.fromEntries(a[type]), Object.fromEntries(b[type]), `${node.id}: ${type}`);
}

const RATINGS: TestNode = {
  id: 'sidecar~10.244.0.12~ratings-v1-5f6d7c8b9-abcde.default~default.svc.cluster.local',
  metadata: {
    NAMESPACE: 'default',
    LABELS: { app: 'ratings', version: 'v1', 'security.istio.io/tlsMode': 'istio' },
    INSTANCE_IPS: '10.244.0.12',
  },
};

/** A sidecar of gateway-sim's mesh (namespace default): no gateway EnvoyFilter selects it. */
const SIM_SIDECAR: TestNode = {
  id: 'sidecar~10.244.0.50~a-0.default~default.svc.cluster.local',
  metadata: { NAMESPACE: 'default', LABELS: { app: 'a' } },
};

interface Hcm {
  readonly listener: string;
  readonly chain: any;
  readonly config: any;
}

/** Every HTTP connection manager of a proxy's listeners, with its listener and filter chain. */
function hcms(r: PipelineResult, node: TestNode): Hcm[] {
  const out: Hcm[] = [];
  for (const [name, l] of resources(r, node).listeners as Map<string, any>)
    for (const chain of [...(l.filter_chains ?? []), ...(l.default_filter_chain ? [l.default_filter_chain] : [])])
      for (const f of chain.filters ?? [])
        if (f.name === HCM) out.push({ listener: name, chain, config: f.typed_config });
  assert.ok(out.length > 0, `${node.id} has HTTP connection managers`);
  return out;
}
const httpFilterNames = (h: Hcm): string[] => (h.config.http_filters ?? []).map((f: any) => f.name);
const httpFilter = (h: Hcm, name: string): any => (h.config.http_filters ?? []).find((f: any) => f.name === name);
const inbound = (h: Hcm) => h.listener === 'virtualInbound';

/** A Duration as config_dump writes it ("10s", "0.500s"), in seconds. */
const seconds = (d: unknown): number => {
  assert.equal(typeof d, 'string', `a duration: ${JSON.stringify(d)}`);
  return Number((d as string).replace(/s$/, ''));
};

// istio/istio samples/bookinfo/policy/productpage_envoy_ratelimit.yaml (the same EnvoyFilters as
// istio.io's "Enabling Rate Limits using Envoy" task, global rate limit): the ratelimit HTTP filter
// before the router of the ingress gateway's HCMs, the rate limit service's cluster ADDed, and the
// rate limit actions MERGEd into every virtual host (vhost name "" matches any).
const GLOBAL_RATELIMIT = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: filter-ratelimit
  namespace: istio-system
spec:
  workloadSelector:
    # select by label in the same namespace
    labels:
      istio: ingressgateway
  configPatches:
    # The Envoy config you want to modify
    - applyTo: HTTP_FILTER
      match:
        context: GATEWAY
        listener:
          filterChain:
            filter:
              name: "envoy.filters.network.http_connection_manager"
              subFilter:
                name: "envoy.filters.http.router"
      patch:
        operation: INSERT_BEFORE
        value:
          name: envoy.ratelimit
          typed_config:
            "@type": type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit
            # domain can be anything! Match it to the ratelimter service config
            domain: productpage-ratelimit
            failure_mode_deny: true
            rate_limit_service:
              grpc_service:
                envoy_grpc:
                  cluster_name: rate_limit_cluster
            timeout: 10s
    - applyTo: CLUSTER
      match:
        cluster:
          service: ratelimit.default.svc.cluster.local
      patch:
        operation: ADD
        value:
          name: rate_limit_cluster
          type: STRICT_DNS
          connect_timeout: 10s
          lb_policy: ROUND_ROBIN
          http2_protocol_options: {}
          load_assignment:
            cluster_name: rate_limit_cluster
            endpoints:
            - lb_endpoints:
              - endpoint:
                  address:
                    socket_address:
                      address: ratelimit.default.svc.cluster.local
                      port_value: 8081
---
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: filter-ratelimit-svc
  namespace: istio-system
spec:
  workloadSelector:
    labels:
      istio: ingressgateway
  configPatches:
    - applyTo: VIRTUAL_HOST
      match:
        context: GATEWAY
        routeConfiguration:
          vhost:
            name: ""
            route:
              action: ANY
      patch:
        operation: MERGE
        value:
          rate_limits:
            - actions: # any actions in here
              - request_headers:
                  header_name: ":path"
                  descriptor_key: "PATH"
`;

test('global rate limit at the ingress gateway (istio samples/bookinfo/policy/productpage_envoy_ratelimit.yaml)', () => {
  const r = gateway(GLOBAL_RATELIMIT);
  assert.deepEqual(said(r), []);
  for (const h of hcms(r, INGRESS_NODE)) {
    const names = httpFilterNames(h);
    assert.equal(names.at(-1), ROUTER);
    assert.equal(names.at(-2), 'envoy.ratelimit', names.join(','));
    const rl = httpFilter(h, 'envoy.ratelimit').typed_config;
    assert.equal(rl['@type'], 'type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit');
    assert.equal(rl.domain, 'productpage-ratelimit');
    assert.equal(rl.failure_mode_deny, true);
    assert.equal(rl.rate_limit_service.grpc_service.envoy_grpc.cluster_name, 'rate_limit_cluster');
    assert.equal(seconds(rl.timeout), 10);
  }
  const { clusters, routes } = resources(r, INGRESS_NODE);
  const added = clusters.get('rate_limit_cluster') as any;
  assert.equal(added?.type, 'STRICT_DNS');
  assert.equal(seconds(added.connect_timeout), 10);
  assert.deepEqual(added.http2_protocol_options, {});
  assert.deepEqual(added.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address, {
    address: 'ratelimit.default.svc.cluster.local',
    port_value: 8081,
  });
  const vhosts = [...routes.values()].flatMap((rc: any) => rc.virtual_hosts);
  assert.ok(vhosts.length > 0);
  for (const vh of vhosts)
    assert.deepEqual(vh.rate_limits, [
      { actions: [{ request_headers: { header_name: ':path', descriptor_key: 'PATH' } }] },
    ]);
  assertUntouched(r, gateway(), SIM_SIDECAR);
});

/** The routes of the inbound virtual host `name` in the HCMs of a sidecar's virtualInbound. */
function inboundVhosts(r: PipelineResult, node: TestNode, name: string): any[] {
  const out = hcms(r, node)
    .filter(inbound)
    .flatMap((h) => h.config.route_config?.virtual_hosts ?? [])
    .filter((vh: any) => vh.name === name);
  assert.ok(out.length > 0, `${node.id} has inbound virtual hosts ${name}`);
  return out;
}

// istio/istio samples/ratelimit/local-rate-limit-service.yaml: a local rate limit filter (TypedStruct,
// no token bucket) first in productpage's inbound HCMs, and per route the rate limit actions and the
// filter's per-route config (token bucket, runtime fractions, descriptors). Adapted: the vhost
// "inbound|http|8000" is productpage's "inbound|http|9080".
const LOCAL_RATELIMIT_SERVICE = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: filter-local-ratelimit-svc
  namespace: istio-system
spec:
  workloadSelector:
    labels:
      app: productpage
  configPatches:
    - applyTo: HTTP_FILTER
      match:
        context: SIDECAR_INBOUND
        listener:
          filterChain:
            filter:
              name: "envoy.filters.network.http_connection_manager"
      patch:
        operation: INSERT_BEFORE
        value:
          name: envoy.filters.http.local_ratelimit
          typed_config:
            "@type": type.googleapis.com/udpa.type.v1.TypedStruct
            type_url: type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
            value:
              stat_prefix: http_local_rate_limiter
    - applyTo: HTTP_ROUTE
      match:
        context: SIDECAR_INBOUND
        routeConfiguration:
          vhost:
            name: "inbound|http|9080"
            route:
              action: ANY
      patch:
        operation: MERGE
        value:
          route:
            rate_limits:
              - actions:
                  - remote_address: {}
              - actions:
                  - header_value_match:
                      descriptor_value: "productpage"
                      expect_match: true
                      headers:
                        - name: :path
                          string_match:
                            prefix: /productpage
                            ignore_case: true

          typed_per_filter_config:
            envoy.filters.http.local_ratelimit:
              "@type": type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
              stat_prefix: test_enabled
              token_bucket:
                max_tokens: 100
                tokens_per_fill: 100
                fill_interval: 60s
              enable_x_ratelimit_headers: DRAFT_VERSION_03 # This adds the ability to see headers for how many tokens are left in the bucket, how often the bucket refills, and what is the token bucket max.
              filter_enabled:
                runtime_key: test_enabled
                default_value:
                  numerator: 100
                  denominator: HUNDRED
              filter_enforced:
                runtime_key: test_enabled
                default_value:
                  numerator: 100
                  denominator: HUNDRED
              response_headers_to_add:
                - append: false
                  header:
                    key: x-local-rate-limit
                    value: "true"
              descriptors:
                - entries:
                    - key: header_match
                      value: productpage
                  token_bucket:
                    max_tokens: 10
                    tokens_per_fill: 10
                    fill_interval: 60s
`;

test('local rate limit per route on productpage (istio samples/ratelimit/local-rate-limit-service.yaml)', () => {
  const r = bookinfo(LOCAL_RATELIMIT_SERVICE);
  assert.deepEqual(said(r), []);
  for (const h of hcms(r, BOOKINFO_NODES.productpage)) {
    const names = httpFilterNames(h);
    if (!inbound(h)) {
      assert.ok(!names.includes('envoy.filters.http.local_ratelimit'), `${h.listener}: ${names.join(',')}`);
      continue;
    }
    // INSERT_BEFORE without a sub filter match: first (istiod).
    assert.equal(names[0], 'envoy.filters.http.local_ratelimit', names.join(','));
    assert.deepEqual(httpFilter(h, 'envoy.filters.http.local_ratelimit').typed_config, {
      '@type': 'type.googleapis.com/udpa.type.v1.TypedStruct',
      type_url: 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
      value: { stat_prefix: 'http_local_rate_limiter' },
    });
  }
  for (const vh of inboundVhosts(r, BOOKINFO_NODES.productpage, 'inbound|http|9080')) {
    assert.ok(vh.routes.length > 0);
    for (const route of vh.routes) {
      assert.ok(route.route.cluster, 'the route action kept its cluster (a MERGE)');
      assert.deepEqual(route.route.rate_limits, [
        { actions: [{ remote_address: {} }] },
        {
          actions: [
            {
              header_value_match: {
                descriptor_value: 'productpage',
                expect_match: true,
                headers: [{ name: ':path', string_match: { prefix: '/productpage', ignore_case: true } }],
              },
            },
          ],
        },
      ]);
      const lrl = route.typed_per_filter_config['envoy.filters.http.local_ratelimit'];
      assert.equal(lrl['@type'], 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit');
      assert.equal(lrl.stat_prefix, 'test_enabled');
      assert.equal(lrl.token_bucket.max_tokens, 100);
      assert.equal(lrl.token_bucket.tokens_per_fill, 100);
      assert.equal(seconds(lrl.token_bucket.fill_interval), 60);
      assert.equal(lrl.enable_x_ratelimit_headers, 'DRAFT_VERSION_03');
      for (const f of [lrl.filter_enabled, lrl.filter_enforced]) {
        assert.equal(f.runtime_key, 'test_enabled');
        assert.equal(f.default_value.numerator, 100);
        // HUNDRED is the enum's 0: proto3 leaves it out of the bytes and config_dump.
        assert.equal(f.default_value.denominator ?? 'HUNDRED', 'HUNDRED');
      }
      assert.deepEqual(lrl.response_headers_to_add, [
        { append: false, header: { key: 'x-local-rate-limit', value: 'true' } },
      ]);
      assert.deepEqual(lrl.descriptors[0].entries, [{ key: 'header_match', value: 'productpage' }]);
      assert.equal(lrl.descriptors[0].token_bucket.max_tokens, 10);
    }
  }
  // The catch-all inbound virtual host is another one: not patched.
  for (const vh of inboundVhosts(r, BOOKINFO_NODES.productpage, 'inbound|http|0'))
    for (const route of vh.routes) assert.equal(route.typed_per_filter_config, undefined);
  assertUntouched(r, bookinfo(), BOOKINFO_NODES.reviewsV2);
});

// istio/istio tests/integration/telemetry/policy/testdata/enable_envoy_local_ratelimit.yaml (istio.io's
// local rate limit task's first EnvoyFilter, with its match left out): a patch without match reaches
// every HCM of the selected proxy, inbound and outbound, and goes first. Adapted: app clt → productpage.
const LOCAL_RATELIMIT_NO_MATCH = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: filter-local-ratelimit-svc
  namespace: istio-system
spec:
  workloadSelector:
    labels:
      app: productpage
  configPatches:
    - applyTo: HTTP_FILTER
      patch:
        operation: INSERT_BEFORE
        value:
          name: envoy.filters.http.local_ratelimit
          typed_config:
            "@type": type.googleapis.com/udpa.type.v1.TypedStruct
            type_url: type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
            value:
              stat_prefix: http_local_rate_limiter
              token_bucket:
                max_tokens: 1
                tokens_per_fill: 1
                fill_interval: 600s
              filter_enabled:
                runtime_key: local_rate_limit_enabled
                default_value:
                  numerator: 100
                  denominator: HUNDRED
              filter_enforced:
                runtime_key: local_rate_limit_enforced
                default_value:
                  numerator: 100
                  denominator: HUNDRED
              response_headers_to_add:
                - append: false
                  header:
                    key: x-local-rate-limit
                    value: 'true'
`;

test('local rate limit on every HCM of a workload, no match (istio tests/integration/telemetry/policy/testdata/enable_envoy_local_ratelimit.yaml)', () => {
  const r = bookinfo(LOCAL_RATELIMIT_NO_MATCH);
  assert.deepEqual(said(r), []);
  const all = hcms(r, BOOKINFO_NODES.productpage);
  assert.ok(all.some(inbound) && all.some((h) => !inbound(h)));
  for (const h of all) {
    assert.equal(httpFilterNames(h)[0], 'envoy.filters.http.local_ratelimit', `${h.listener}`);
    const ts = httpFilter(h, 'envoy.filters.http.local_ratelimit').typed_config;
    assert.equal(ts['@type'], 'type.googleapis.com/udpa.type.v1.TypedStruct');
    assert.equal(ts.type_url, 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit');
    // A TypedStruct's value is a Struct: kept as written (the duration stays a string, numbers numbers).
    assert.deepEqual(ts.value.token_bucket, { max_tokens: 1, tokens_per_fill: 1, fill_interval: '600s' });
    assert.deepEqual(ts.value.filter_enabled, {
      runtime_key: 'local_rate_limit_enabled',
      default_value: { numerator: 100, denominator: 'HUNDRED' },
    });
    assert.equal(ts.value.response_headers_to_add[0].header.value, 'true');
  }
  assertUntouched(r, bookinfo(), BOOKINFO_NODES.reviewsV2);
});

// istio/istio tests/integration/telemetry/policy/testdata/enable_envoy_local_ratelimit_sa.yaml: a local
// rate limit with a descriptor on the client's SPIFFE identity, inbound only, and per route a rate
// limit action computed by a CEL descriptor extension (TypedStruct). Adapted: app srv → reviews, vhost
// "inbound|http|80" → "inbound|http|9080", the templated namespace → default.
const LOCAL_RATELIMIT_SA = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: filter-local-ratelimit-svc-sa
  namespace: istio-system
spec:
  workloadSelector:
    labels:
      app: reviews
  configPatches:
    - applyTo: HTTP_FILTER
      match:
        context: SIDECAR_INBOUND
      patch:
        operation: INSERT_BEFORE
        value:
          name: envoy.filters.http.local_ratelimit
          typed_config:
            "@type": type.googleapis.com/udpa.type.v1.TypedStruct
            type_url: type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit
            value:
              stat_prefix: http_local_rate_limiter
              token_bucket:
                max_tokens: 1000
                tokens_per_fill: 1000
                fill_interval: 1s
              filter_enabled:
                runtime_key: local_rate_limit_enabled
                default_value:
                  numerator: 100
                  denominator: HUNDRED
              filter_enforced:
                runtime_key: local_rate_limit_enforced
                default_value:
                  numerator: 100
                  denominator: HUNDRED
              response_headers_to_add:
                - append: false
                  header:
                    key: x-local-rate-limit
                    value: 'true'
              descriptors:
                - entries:
                  - key: client_id
                    value: "spiffe://cluster.local/ns/default/sa/clt"
                  token_bucket:
                    max_tokens: 1
                    tokens_per_fill: 1
                    fill_interval: 600s
    - applyTo: HTTP_ROUTE
      match:
        context: SIDECAR_INBOUND
        routeConfiguration:
          vhost:
            name: "inbound|http|9080"
      patch:
        operation: MERGE
        value:
          route:
            rate_limits:
            - actions:
              - extension:
                  name: custom
                  typed_config:
                    "@type": type.googleapis.com/udpa.type.v1.TypedStruct
                    type_url: type.googleapis.com/envoy.extensions.rate_limit_descriptors.expr.v3.Descriptor
                    value:
                      descriptor_key: client_id
                      text: connection.uri_san_peer_certificate
`;

test('local rate limit by client identity, a descriptor extension per route (istio tests/integration/telemetry/policy/testdata/enable_envoy_local_ratelimit_sa.yaml)', () => {
  const r = bookinfo(LOCAL_RATELIMIT_SA);
  assert.deepEqual(said(r), []);
  for (const h of hcms(r, BOOKINFO_NODES.reviewsV2)) {
    const names = httpFilterNames(h);
    if (inbound(h)) assert.equal(names[0], 'envoy.filters.http.local_ratelimit', names.join(','));
    else assert.ok(!names.includes('envoy.filters.http.local_ratelimit'), `${h.listener}: ${names.join(',')}`);
  }
  const [first] = hcms(r, BOOKINFO_NODES.reviewsV2).filter(inbound);
  assert.deepEqual(httpFilter(first as Hcm, 'envoy.filters.http.local_ratelimit').typed_config.value.descriptors, [
    {
      entries: [{ key: 'client_id', value: 'spiffe://cluster.local/ns/default/sa/clt' }],
      token_bucket: { max_tokens: 1, tokens_per_fill: 1, fill_interval: '600s' },
    },
  ]);
  for (const vh of inboundVhosts(r, BOOKINFO_NODES.reviewsV2, 'inbound|http|9080'))
    for (const route of vh.routes)
      assert.deepEqual(route.route.rate_limits, [
        {
          actions: [
            {
              extension: {
                name: 'custom',
                typed_config: {
                  '@type': 'type.googleapis.com/udpa.type.v1.TypedStruct',
                  type_url: 'type.googleapis.com/envoy.extensions.rate_limit_descriptors.expr.v3.Descriptor',
                  value: { descriptor_key: 'client_id', text: 'connection.uri_san_peer_certificate' },
                },
              },
            },
          ],
        },
      ]);
  assertUntouched(r, bookinfo(), BOOKINFO_NODES.productpage);
});

// istio/istio tests/integration/telemetry/policy/testdata/enable_envoy_ratelimit.yaml: global rate limit
// on a sidecar's outbound side: the filter before the router of the outbound HCMs, the service's
// cluster ADDed (dns_refresh_rate 500ms), rate limit actions on one outbound virtual host. Adapted:
// app clt → productpage, the templated namespaces → default, vhost srv…:80 → reviews…:9080.
const SIDECAR_RATELIMIT = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: filter-ratelimit
  namespace: istio-system
spec:
  workloadSelector:
    labels:
      app: productpage
  configPatches:
    # The Envoy config you want to modify
    - applyTo: HTTP_FILTER
      match:
        context: SIDECAR_OUTBOUND
        listener:
          filterChain:
            filter:
              name: "envoy.filters.network.http_connection_manager"
              subFilter:
                name: "envoy.filters.http.router"
      patch:
        operation: INSERT_BEFORE
        value:
          name: envoy.filters.http.ratelimit
          typed_config:
            "@type": type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit
            # domain can be anything! Match it to the ratelimter service config
            domain: echo-ratelimit
            failure_mode_deny: true
            rate_limit_service:
              grpc_service:
                envoy_grpc:
                  cluster_name: rate_limit_cluster
              transport_api_version: V3
            timeout: 10s
    - applyTo: CLUSTER
      match:
        context: SIDECAR_OUTBOUND
        cluster:
          service: ratelimit.default.svc.cluster.local
      patch:
        operation: ADD
        value:
          name: rate_limit_cluster
          type: STRICT_DNS
          connect_timeout: 10s
          lb_policy: ROUND_ROBIN
          http2_protocol_options: {}
          dns_refresh_rate: 500ms
          load_assignment:
            cluster_name: rate_limit_cluster
            endpoints:
            - lb_endpoints:
              - endpoint:
                  address:
                    socket_address:
                      address: ratelimit.default.svc.cluster.local
                      port_value: 8081
---
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: filter-ratelimit-svc
  namespace: istio-system
spec:
  workloadSelector:
    labels:
      app: productpage
  configPatches:
    - applyTo: VIRTUAL_HOST
      match:
        context: SIDECAR_OUTBOUND
        routeConfiguration:
          vhost:
            name: "reviews.default.svc.cluster.local:9080"
            route:
              action: ANY
      patch:
        operation: MERGE
        value:
          rate_limits:
            - actions: # any actions in here
              - request_headers:
                  header_name: ":path"
                  descriptor_key: "PATH"
`;

test('global rate limit on a sidecar outbound (istio tests/integration/telemetry/policy/testdata/enable_envoy_ratelimit.yaml)', () => {
  const r = bookinfo(SIDECAR_RATELIMIT);
  assert.deepEqual(said(r), []);
  for (const h of hcms(r, BOOKINFO_NODES.productpage)) {
    const names = httpFilterNames(h);
    if (inbound(h)) {
      assert.ok(!names.includes('envoy.filters.http.ratelimit'), names.join(','));
      continue;
    }
    assert.deepEqual(names.slice(-2), ['envoy.filters.http.ratelimit', ROUTER], `${h.listener}`);
    const rl = httpFilter(h, 'envoy.filters.http.ratelimit').typed_config;
    assert.equal(rl.domain, 'echo-ratelimit');
    assert.equal(rl.rate_limit_service.transport_api_version, 'V3');
  }
  const { clusters, routes } = resources(r, BOOKINFO_NODES.productpage);
  const added = clusters.get('rate_limit_cluster') as any;
  assert.equal(added?.type, 'STRICT_DNS');
  assert.equal(seconds(added.dns_refresh_rate), 0.5);
  assert.equal(added.lb_policy ?? 'ROUND_ROBIN', 'ROUND_ROBIN');
  let patched = 0;
  for (const [name, rc] of routes as Map<string, any>)
    for (const vh of rc.virtual_hosts) {
      if (vh.name === 'reviews.default.svc.cluster.local:9080') {
        patched++;
        assert.deepEqual(vh.rate_limits, [
          { actions: [{ request_headers: { header_name: ':path', descriptor_key: 'PATH' } }] },
        ]);
      } else assert.equal(vh.rate_limits, undefined, `${name} ${vh.name}`);
    }
  assert.equal(patched, 1);
  assertUntouched(r, bookinfo(), BOOKINFO_NODES.reviewsV2);
});

// istio/istio tests/testdata/networking/envoyfilter-without-service/configs.yaml (test-lua): a Lua filter
// (camelCase inlineCode) before the router, context omitted: the selected workload's inbound and
// outbound HCMs. Adapted: app envoyfilter-test-app → ratings.
const TEST_LUA = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: test-lua
  namespace: istio-system
spec:
  workloadSelector:
    labels:
      app: ratings
  configPatches:
  - applyTo: HTTP_FILTER
    match:
      listener:
        filterChain:
          filter:
            name: "envoy.filters.network.http_connection_manager"
            subFilter:
              name: "envoy.filters.http.router"
    patch:
      operation: INSERT_BEFORE
      value: # lua filter specification
        name: envoy.lua
        typed_config:
          "@type": "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua"
          inlineCode: |
            function envoy_on_request(request_handle)
              request_handle:logWarn("Hello World")
            end
`;

test('a Lua filter on every HCM of a workload, context omitted (istio tests/testdata/networking/envoyfilter-without-service/configs.yaml)', () => {
  const r = bookinfo(TEST_LUA);
  assert.deepEqual(said(r), []);
  const all = hcms(r, RATINGS);
  assert.ok(all.some(inbound) && all.some((h) => !inbound(h)));
  for (const h of all) {
    assert.deepEqual(httpFilterNames(h).slice(-2), ['envoy.lua', ROUTER], h.listener);
    assert.deepEqual(httpFilter(h, 'envoy.lua').typed_config, {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua',
      inline_code: 'function envoy_on_request(request_handle)\n  request_handle:logWarn("Hello World")\nend\n',
    });
  }
  assertUntouched(r, bookinfo(), BOOKINFO_NODES.productpage);
});

// Istio's bookinfo gateway (samples/bookinfo/networking/bookinfo-gateway.yaml, host "*"): in the bookinfo
// cluster state it gives the ingress gateway (istio-system) listeners, so it is a proxy a
// namespace-default EnvoyFilter does not reach.
const BOOKINFO_GATEWAY = `
apiVersion: networking.istio.io/v1
kind: Gateway
metadata: { name: bookinfo-gateway, namespace: default }
spec:
  selector: { istio: ingressgateway }
  servers: [{ port: { number: 8080, name: http, protocol: HTTP }, hosts: ["*"] }]
---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: bookinfo, namespace: default }
spec:
  hosts: ["*"]
  gateways: [bookinfo-gateway]
  http: [{ match: [{ uri: { exact: /productpage } }], route: [{ destination: { host: productpage, port: { number: 9080 } } }] }]
`;

// istio/istio pkg/config/validation/testdata/crds/envoyfilter-valid.yaml (add-cluster,
// merge-and-replace-list): a cluster ADD with only a name (context ANY: sidecars' outbound side), and
// a MERGE_AND_REPLACE_LIST of the HCM on the TLS filter chains. Adapted: namespace default.
const VALID_CRDS = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: add-cluster
  namespace: default
spec:
  configPatches:
    - applyTo: CLUSTER
      patch:
        operation: ADD
        value: # cluster specification
          name: "lua_cluster"
---
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: merge-and-replace-list
  namespace: default
spec:
  configPatches:
    - applyTo: NETWORK_FILTER
      match:
        listener:
          filterChain:
            transportProtocol: tls
      patch:
        operation: MERGE_AND_REPLACE_LIST
        value:
          name: envoy.filters.network.http_connection_manager
          typed_config:
            "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
            upgrade_configs:
              - upgrade_type: websocket
`;

test('a bare cluster ADD and an HCM MERGE_AND_REPLACE_LIST on TLS chains (istio pkg/config/validation/testdata/crds/envoyfilter-valid.yaml)', () => {
  const r = bookinfo(BOOKINFO_GATEWAY, VALID_CRDS);
  assert.deepEqual(said(r), []);
  const base = bookinfo(BOOKINFO_GATEWAY);
  for (const node of [BOOKINFO_NODES.productpage, BOOKINFO_NODES.reviewsV2]) {
    const { clusters } = resources(r, node);
    assert.deepEqual(clusters.get('lua_cluster'), {
      '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
      name: 'lua_cluster',
    });
    const before = hcms(base, node);
    const after = hcms(r, node);
    assert.equal(after.length, before.length);
    let tls = 0;
    after.forEach((h, i) => {
      if (h.chain.filter_chain_match?.transport_protocol === 'tls') {
        tls++;
        // Replaced, not appended to: the generated HCM already upgrades websockets, a MERGE would list it twice.
        assert.deepEqual(h.config.upgrade_configs, [{ upgrade_type: 'websocket' }]);
      } else assert.deepEqual(h.config, before[i]?.config, h.listener);
    });
    assert.ok(tls > 0, 'the inbound side has TLS chains with an HCM');
  }
  assertUntouched(r, base, INGRESS_NODE);
});

// istio/api networking/v1alpha3/envoy_filter.proto, the API reference's first example
// (custom-protocol; istio.io/docs/reference/config/networking/envoy-filter), its second patch (the
// first one's value is elided in the docs, `config: ...`): a 30s idle timeout on every HCM of
// sidecars and gateways. Adapted: the root namespace istio-config → istio-system.
const HCM_IDLE_TIMEOUT = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: custom-protocol
  namespace: istio-system # as defined in meshConfig resource.
spec:
  configPatches:
  - applyTo: NETWORK_FILTER # http connection manager is a filter in Envoy
    match:
      # context omitted so that this applies to both sidecars and gateways
      listener:
        filterChain:
          filter:
            name: "envoy.filters.network.http_connection_manager"
    patch:
      operation: MERGE
      value:
        name: "envoy.filters.network.http_connection_manager"
        typed_config:
          "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
          common_http_protocol_options:
            idle_timeout: 30s
`;

test('an idle timeout MERGEd into every HCM of sidecars and gateways (istio/api envoy_filter.proto, custom-protocol)', () => {
  const r = bookinfo(BOOKINFO_GATEWAY, HCM_IDLE_TIMEOUT);
  assert.deepEqual(said(r), []);
  const base = bookinfo(BOOKINFO_GATEWAY);
  for (const node of [BOOKINFO_NODES.productpage, BOOKINFO_NODES.reviewsV2, RATINGS, INGRESS_NODE]) {
    const before = hcms(base, node);
    const after = hcms(r, node);
    assert.equal(after.length, before.length);
    after.forEach((h, i) => {
      assert.equal(seconds(h.config.common_http_protocol_options?.idle_timeout), 30, `${node.id} ${h.listener}`);
      // The rest of the HCM as generated (a MERGE).
      const { common_http_protocol_options: _a, ...rest } = h.config;
      const { common_http_protocol_options: _b, ...restBefore } = before[i]?.config ?? {};
      assert.deepEqual(rest, restBefore);
    });
    // Nothing but listeners changes.
    assert.deepEqual(
      Object.fromEntries(resources(r, node).clusters),
      Object.fromEntries(resources(base, node).clusters),
    );
  }
});

// istio/istio tests/integration/pilot/common/routing.go (ingressgateway-redirect-config): the
// gateway's HCM trusts one X-Forwarded-For hop and normalizes paths (a BoolValue written bare).
const GATEWAY_XFF = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: ingressgateway-redirect-config
  namespace: istio-system
spec:
  configPatches:
  - applyTo: NETWORK_FILTER
    match:
      context: GATEWAY
      listener:
        filterChain:
          filter:
            name: envoy.filters.network.http_connection_manager
    patch:
      operation: MERGE
      value:
        typed_config:
          '@type': type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          xff_num_trusted_hops: 1
          normalize_path: true
  workloadSelector:
    labels:
      istio: ingressgateway
`;

test("the gateway HCM's X-Forwarded-For trusted hops and path normalization (istio tests/integration/pilot/common/routing.go)", () => {
  const r = gateway(GATEWAY_XFF);
  assert.deepEqual(said(r), []);
  const base = gateway();
  const before = hcms(base, INGRESS_NODE);
  const after = hcms(r, INGRESS_NODE);
  assert.equal(after.length, before.length);
  after.forEach((h, i) => {
    assert.equal(h.config.xff_num_trusted_hops, 1);
    assert.equal(h.config.normalize_path, true);
    const { xff_num_trusted_hops: _a, normalize_path: _b, ...rest } = h.config;
    const { xff_num_trusted_hops: _c, normalize_path: _d, ...restBefore } = before[i]?.config ?? {};
    assert.deepEqual(rest, restBefore);
  });
  assertUntouched(r, base, SIM_SIDECAR);
});

// istio/istio tests/integration/pilot/common/routing.go (envoyFilterCases): one EnvoyFilter for the
// caller's outbound side (Lua before the router, a request header on every virtual host, HTTP/2 to
// every cluster) and one for the callee's inbound side (the same, SIDECAR_INBOUND). Adapted: app a →
// productpage, app b → reviews, namespace default.
const ROUTING_CASES = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: outbound
  namespace: default
spec:
  workloadSelector:
    labels:
      app: productpage
  configPatches:
  - applyTo: HTTP_FILTER
    match:
      context: SIDECAR_OUTBOUND
      listener:
        filterChain:
          filter:
            name: "envoy.filters.network.http_connection_manager"
            subFilter:
              name: "envoy.filters.http.router"
    patch:
      operation: INSERT_BEFORE
      value:
       name: envoy.lua
       typed_config:
          "@type": "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua"
          inlineCode: |
            function envoy_on_request(request_handle)
              request_handle:headers():add("x-lua-outbound", "hello world")
            end
  - applyTo: VIRTUAL_HOST
    match:
      context: SIDECAR_OUTBOUND
    patch:
      operation: MERGE
      value:
        request_headers_to_add:
        - header:
            key: x-vhost-outbound
            value: "hello world"
  - applyTo: CLUSTER
    match:
      context: SIDECAR_OUTBOUND
      cluster: {}
    patch:
      operation: MERGE
      value:
        http2_protocol_options: {}
---
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: inbound
  namespace: default
spec:
  workloadSelector:
    labels:
      app: reviews
  configPatches:
  - applyTo: HTTP_FILTER
    match:
      context: SIDECAR_INBOUND
      listener:
        filterChain:
          filter:
            name: "envoy.filters.network.http_connection_manager"
            subFilter:
              name: "envoy.filters.http.router"
    patch:
      operation: INSERT_BEFORE
      value:
       name: envoy.lua
       typed_config:
          "@type": "type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua"
          inlineCode: |
            function envoy_on_request(request_handle)
              request_handle:headers():add("x-lua-inbound", "hello world")
            end
  - applyTo: VIRTUAL_HOST
    match:
      context: SIDECAR_INBOUND
    patch:
      operation: MERGE
      value:
        request_headers_to_add:
        - header:
            key: x-vhost-inbound
            value: "hello world"
  - applyTo: CLUSTER
    match:
      context: SIDECAR_INBOUND
      cluster: {}
    patch:
      operation: MERGE
      value:
        http2_protocol_options: {}
`;

test('outbound and inbound Lua, virtual host headers and HTTP/2 clusters (istio tests/integration/pilot/common/routing.go envoyFilterCases)', () => {
  const r = bookinfo(ROUTING_CASES);
  assert.deepEqual(said(r), []);
  const headerKeys = (vh: any): string[] => (vh.request_headers_to_add ?? []).map((h: any) => h.header.key);
  const luaCode = (h: Hcm): string => httpFilter(h, 'envoy.lua')?.typed_config.inline_code ?? '';

  // The caller: its outbound side only.
  for (const h of hcms(r, BOOKINFO_NODES.productpage)) {
    if (inbound(h)) assert.ok(!httpFilterNames(h).includes('envoy.lua'), h.listener);
    else {
      assert.deepEqual(httpFilterNames(h).slice(-2), ['envoy.lua', ROUTER], h.listener);
      assert.match(luaCode(h), /x-lua-outbound/);
    }
  }
  const caller = resources(r, BOOKINFO_NODES.productpage);
  for (const [, rc] of caller.routes as Map<string, any>)
    for (const vh of rc.virtual_hosts) assert.deepEqual(headerKeys(vh), ['x-vhost-outbound'], vh.name);
  for (const h of hcms(r, BOOKINFO_NODES.productpage).filter(inbound))
    for (const vh of h.config.route_config?.virtual_hosts ?? []) assert.deepEqual(headerKeys(vh), [], vh.name);
  let outboundClusters = 0;
  for (const [name, c] of caller.clusters as Map<string, any>) {
    // SIDECAR_OUTBOUND: every cluster but the inbound ones and InboundPassthroughCluster.
    const isInbound = name.startsWith('inbound|') || name === 'InboundPassthroughCluster';
    assert.equal(c.http2_protocol_options !== undefined, !isInbound, name);
    if (!isInbound) outboundClusters++;
  }
  assert.ok(outboundClusters > 3);

  // The callee: its inbound side only.
  for (const h of hcms(r, BOOKINFO_NODES.reviewsV2)) {
    if (!inbound(h)) assert.ok(!httpFilterNames(h).includes('envoy.lua'), h.listener);
    else {
      assert.deepEqual(httpFilterNames(h).slice(-2), ['envoy.lua', ROUTER], h.listener);
      assert.match(luaCode(h), /x-lua-inbound/);
      for (const vh of h.config.route_config?.virtual_hosts ?? [])
        assert.deepEqual(headerKeys(vh), ['x-vhost-inbound']);
    }
  }
  const callee = resources(r, BOOKINFO_NODES.reviewsV2);
  for (const [, rc] of callee.routes as Map<string, any>)
    for (const vh of rc.virtual_hosts) assert.deepEqual(headerKeys(vh), [], vh.name);
  for (const [name, c] of callee.clusters as Map<string, any>) {
    const isInbound = name.startsWith('inbound|') || name === 'InboundPassthroughCluster';
    assert.equal(c.http2_protocol_options !== undefined, isInbound, name);
  }
  assertUntouched(r, bookinfo(), RATINGS);
});

// istio/istio pilot/pkg/networking/core/accesslog_test.go (TestListenerAccessLog's access-log-format):
// a stdout access log with a JSON format MERGEd into every tcp_proxy; istiod's test checks that
// virtualOutbound's blackhole chain then has exactly one access log.
const TCP_ACCESS_LOG = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: access-log-format
  namespace: default
spec:
  configPatches:
  - applyTo: NETWORK_FILTER
    match:
      context: ANY
      listener:
        filterChain:
          filter:
            name: envoy.filters.network.tcp_proxy
    patch:
      operation: MERGE
      value:
        typed_config:
          '@type': type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy
          access_log:
          - name: envoy.access_loggers.stream
            typed_config:
              '@type': type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog
              log_format:
                json_format:
                  envoyproxy_authority: '%REQ(:AUTHORITY)%'
`;

test('a stdout JSON access log MERGEd into every tcp_proxy (istio pilot/pkg/networking/core/accesslog_test.go)', () => {
  const r = bookinfo(BOOKINFO_GATEWAY, TCP_ACCESS_LOG);
  assert.deepEqual(said(r), []);
  const patched: string[] = [];
  for (const [name, l] of resources(r, BOOKINFO_NODES.productpage).listeners as Map<string, any>)
    for (const chain of l.filter_chains ?? [])
      for (const f of chain.filters ?? []) {
        if (f.name !== 'envoy.filters.network.tcp_proxy') continue;
        patched.push(`${name}/${chain.name ?? ''}`);
        assert.deepEqual(
          f.typed_config.access_log,
          [
            {
              name: 'envoy.access_loggers.stream',
              typed_config: {
                '@type': 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog',
                log_format: { json_format: { envoyproxy_authority: '%REQ(:AUTHORITY)%' } },
              },
            },
          ],
          `${name} ${chain.name ?? ''}`,
        );
      }
  // istiod's check: virtualOutbound's blackhole chain has exactly one access log (the others too).
  assert.ok(patched.includes('virtualOutbound/virtualOutbound-blackhole'), patched.join(', '));
  assert.ok(patched.includes('virtualInbound/virtualInbound-blackhole'), patched.join(', '));
  assertUntouched(r, bookinfo(BOOKINFO_GATEWAY), INGRESS_NODE);
});

// istio/istio pkg/config/analysis/analyzers/testdata/envoy-filter-add-operation.yaml (test-auth-1; the
// same ext_authz as istio/api envoy_filter.proto's myns-ext-authz, with initial_metadata where
// GrpcService has it): an HTTP filter ADDed with filterClass AUTHZ. istiod reads no filterClass: ADD
// appends the filter after the router, which Envoy rejects (the router must be last). meshsnap serves
// nothing broken (README "EnvoyFilter", deviations): the EnvoyFilter is left out for those proxies,
// with an envoyfilter-not-applied error naming it and the rule. Adapted: namespace bookinfo → default.
const EXT_AUTHZ_ADD = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: test-auth-1
  namespace: default
spec:
  configPatches:
  - applyTo: HTTP_FILTER
    match:
      context: SIDECAR_INBOUND
    patch:
      operation: ADD
      filterClass: AUTHZ # This filter will run *after* the Istio authz filter.
      value:
        name: envoy.filters.http.ext_authz
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz
          grpc_service:
            envoy_grpc:
              cluster_name: acme-ext-authz
            initial_metadata:
            - key: foo
              value: myauth.acme # required by local ext auth server.
`;

test('an HTTP filter ADDed after the router is refused as Envoy would (istio analyzers testdata envoy-filter-add-operation.yaml, test-auth-1)', () => {
  const r = bookinfo(EXT_AUTHZ_ADD);
  const problems = r.diagnostics.filter((d) => d.severity !== 'info');
  assert.deepEqual(
    problems.map((d) => `${d.severity} ${d.code} ${d.kind} ${d.namespace}/${d.name} ${d.field ?? ''}`),
    [
      'error envoyfilter-not-applied EnvoyFilter default/test-auth-1 spec.configPatches',
      // istiod does not read filterClass for EnvoyFilters: said, so the author knows why it goes after the router.
      'warning ignored-field EnvoyFilter default/test-auth-1 spec.configPatches[0].patch.filterClass',
    ],
  );
  assert.match(problems[0]?.message ?? '', /terminal filter "envoy\.filters\.http\.router" must be the last filter/);
  assert.match(problems[0]?.message ?? '', /sidecar\/default\/productpage/);
  // Left out: every default sidecar is served what it is served without it.
  const base = bookinfo();
  for (const node of [BOOKINFO_NODES.productpage, BOOKINFO_NODES.reviewsV2, RATINGS]) assertUntouched(r, base, node);
});

// istio/istio tests/integration/helm/util.go (sampleEnvoyFilter; the API reference's hcm-tweaks with
// its fields under typed_config): the HCM of the gateway's filter chain for SNI app.example.com gets
// 5 trusted X-Forwarded-For hops and a 30s idle timeout; the plain HTTP server's HCM does not.
const GATEWAY_SNI_HCM = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: sample
  namespace: istio-system
spec:
  workloadSelector:
    labels:
      istio: ingressgateway
  configPatches:
  - applyTo: NETWORK_FILTER # http connection manager is a filter in Envoy
    match:
      context: GATEWAY
      listener:
        filterChain:
          sni: app.example.com
          filter:
            name: "envoy.filters.network.http_connection_manager"
    patch:
      operation: MERGE
      value:
        typed_config:
          "@type": "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
          xff_num_trusted_hops: 5
          common_http_protocol_options:
            idle_timeout: 30s
`;

test('an HCM MERGE on the gateway filter chain of one SNI (istio tests/integration/helm/util.go)', () => {
  const https = gatewayYaml(
    'app',
    'default',
    'port: { number: 443, name: https, protocol: HTTPS }\nhosts: ["app.example.com"]\ntls: { mode: SIMPLE, credentialName: app-cert }',
  );
  const r = gateway(https, GATEWAY_SNI_HCM);
  assert.deepEqual(said(r), []);
  const base = gateway(https);
  const before = hcms(base, INGRESS_NODE);
  const after = hcms(r, INGRESS_NODE);
  assert.equal(after.length, before.length);
  let sni = 0;
  after.forEach((h, i) => {
    if ((h.chain.filter_chain_match?.server_names ?? []).includes('app.example.com')) {
      sni++;
      assert.equal(h.config.xff_num_trusted_hops, 5);
      assert.equal(seconds(h.config.common_http_protocol_options.idle_timeout), 30);
    } else assert.deepEqual(h.config, before[i]?.config, h.listener);
  });
  assert.equal(sni, 1);
  assertUntouched(r, base, SIM_SIDECAR);
});

test('meshsnap knows the stdout/stderr access loggers EnvoyFilters add (envoy.extensions.access_loggers.stream.v3)', () => {
  for (const type of ['StdoutAccessLog', 'StderrAccessLog']) {
    const converted = messageFromJson('envoy.config.accesslog.v3.AccessLog', {
      name: 'envoy.access_loggers.stream',
      typedConfig: {
        '@type': `type.googleapis.com/envoy.extensions.access_loggers.stream.v3.${type}`,
        logFormat: { textFormatSource: { inlineString: '%START_TIME% %REQ(:PATH)%\n' } },
      },
    });
    assert.ok(converted.ok, JSON.stringify(converted));
    const any = (converted.message as any).typed_config;
    assert.equal(any.type_url, `type.googleapis.com/envoy.extensions.access_loggers.stream.v3.${type}`);
    const decoded = decodeMessage(`envoy.extensions.access_loggers.stream.v3.${type}`, any.value) as any;
    assert.equal(decoded.log_format.text_format_source.inline_string, '%START_TIME% %REQ(:PATH)%\n');
  }
});

// istio.io docs, "Classifying Metrics Based on Request or Response" task
// (istio/istio.io content/*/docs/tasks/observability/metrics/classify-metrics/index.md, the zh
// version): the attributegen Wasm filter (TypedStruct) before istio.stats, for proxies of version
// 1.9 only. meshsnap compiles before it knows its proxies: a patch matching on match.proxy is left out
// with an unsupported-field warning (README "EnvoyFilter", deviations). istiod would not apply it to
// a current proxy either (its version is not 1.9), so reviews is served what it is served without
// it. Adapted: applied to istio-system (the task's `kubectl -n istio-system apply`).
const ATTRIBUTEGEN_1_9 = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: istio-attributegen-filter
  namespace: istio-system
spec:
  workloadSelector:
    labels:
      app: reviews
  configPatches:
  - applyTo: HTTP_FILTER
    match:
      context: SIDECAR_INBOUND
      proxy:
        proxyVersion: '1\\.9.*'
      listener:
        filterChain:
          filter:
            name: "envoy.http_connection_manager"
            subFilter:
              name: "istio.stats"
    patch:
      operation: INSERT_BEFORE
      value:
        name: istio.attributegen
        typed_config:
          "@type": type.googleapis.com/udpa.type.v1.TypedStruct
          type_url: type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm
          value:
            config:
              configuration:
                "@type": type.googleapis.com/google.protobuf.StringValue
                value: |
                  {
                    "attributes": [
                      {
                        "output_attribute": "istio_operationId",
                        "match": [
                          {
                            "value": "ListReviews",
                            "condition": "request.url_path == '/reviews' && request.method == 'GET'"
                          },
                          {
                            "value": "GetReview",
                            "condition": "request.url_path.matches('^/reviews/[[:alnum:]]*$') && request.method == 'GET'"
                          },
                          {
                            "value": "CreateReview",
                            "condition": "request.url_path == '/reviews/' && request.method == 'POST'"
                          }
                        ]
                      }
                    ]
                  }
              vm_config:
                runtime: envoy.wasm.runtime.null
                code:
                  local: { inline_string: "envoy.wasm.attributegen" }
`;

test('a patch for proxy version 1.9 is left out with the documented warning (istio.io classify-metrics task)', () => {
  const r = bookinfo(ATTRIBUTEGEN_1_9);
  const problems = r.diagnostics.filter((d) => d.severity !== 'info');
  assert.deepEqual(
    problems.map((d) => `${d.severity} ${d.code} ${d.kind} ${d.namespace}/${d.name} ${d.field}`),
    [
      // istiod's webhook warns the same ("using deprecated filter name").
      'warning deprecated-field EnvoyFilter istio-system/istio-attributegen-filter spec.configPatches[0].match.listener.filterChain.filter.name',
      'warning unsupported-field EnvoyFilter istio-system/istio-attributegen-filter spec.configPatches[0].match.proxy',
    ],
  );
  assert.match(problems[0]?.message ?? '', /envoy\.filters\.network\.http_connection_manager/);
  assert.match(problems[1]?.message ?? '', /meshsnap compiles before it knows its proxies; the patch is left out/);
  const base = bookinfo();
  for (const node of [BOOKINFO_NODES.reviewsV2, BOOKINFO_NODES.productpage]) assertUntouched(r, base, node);
});

// istio.io docs, "Enabling Rate Limits using Envoy" task (istio/istio.io
// content/en/docs/tasks/policy-enforcement/rate-limit/index.md at 05a4099), its global rate limit
// EnvoyFilters as published there: the HTTP filter patch matches the deprecated names
// envoy.http_connection_manager / envoy.router. istiod matches filter names exactly (its webhook
// only warns about the deprecated names), so that patch reaches no filter, while the cluster ADD and
// the "*:80" virtual host MERGE apply. meshsnap does the same, with istiod's warnings.
const GLOBAL_RATELIMIT_DOCS = `
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: filter-ratelimit
  namespace: istio-system
spec:
  workloadSelector:
    # select by label in the same namespace
    labels:
      istio: ingressgateway
  configPatches:
    # The Envoy config you want to modify
    - applyTo: HTTP_FILTER
      match:
        context: GATEWAY
        listener:
          filterChain:
            filter:
              name: "envoy.http_connection_manager"
              subFilter:
                name: "envoy.router"
      patch:
        operation: INSERT_BEFORE
        # Adds the Envoy Rate Limit Filter in HTTP filter chain.
        value:
          name: envoy.filters.http.ratelimit
          typed_config:
            "@type": type.googleapis.com/envoy.extensions.filters.http.ratelimit.v3.RateLimit
            # domain can be anything! Match it to the ratelimter service config
            domain: productpage-ratelimit
            failure_mode_deny: true
            rate_limit_service:
              grpc_service:
                envoy_grpc:
                  cluster_name: rate_limit_cluster
                timeout: 10s
              transport_api_version: V3
    - applyTo: CLUSTER
      match:
        cluster:
          service: ratelimit.default.svc.cluster.local
      patch:
        operation: ADD
        # Adds the rate limit service cluster for rate limit service defined in step 1.
        value:
          name: rate_limit_cluster
          type: STRICT_DNS
          connect_timeout: 10s
          lb_policy: ROUND_ROBIN
          http2_protocol_options: {}
          load_assignment:
            cluster_name: rate_limit_cluster
            endpoints:
            - lb_endpoints:
              - endpoint:
                  address:
                     socket_address:
                      address: ratelimit.default.svc.cluster.local
                      port_value: 8081
---
apiVersion: networking.istio.io/v1alpha3
kind: EnvoyFilter
metadata:
  name: filter-ratelimit-svc
  namespace: istio-system
spec:
  workloadSelector:
    labels:
      istio: ingressgateway
  configPatches:
    - applyTo: VIRTUAL_HOST
      match:
        context: GATEWAY
        routeConfiguration:
          vhost:
            name: "*:80"
            route:
              action: ANY
      patch:
        operation: MERGE
        # Applies the rate limit rules.
        value:
          rate_limits:
            - actions: # any actions in here
              - request_headers:
                  header_name: ":path"
                  descriptor_key: "PATH"
`;

test("global rate limit as istio.io's task writes it: deprecated filter names match nothing, as in istiod (istio.io rate-limit task)", () => {
  const r = gateway(GLOBAL_RATELIMIT_DOCS);
  const field = 'spec.configPatches[0].match.listener.filterChain.filter';
  assert.deepEqual(
    said(r).map((p) => p.slice(0, p.indexOf(':'))),
    [
      `warning deprecated-field EnvoyFilter istio-system/filter-ratelimit ${field}.name`,
      `warning deprecated-field EnvoyFilter istio-system/filter-ratelimit ${field}.subFilter.name`,
    ],
  );
  const base = gateway();
  const before = hcms(base, INGRESS_NODE);
  const after = hcms(r, INGRESS_NODE);
  assert.deepEqual(
    after.map((h) => h.config),
    before.map((h) => h.config),
  );
  const { clusters, routes } = resources(r, INGRESS_NODE);
  assert.equal((clusters.get('rate_limit_cluster') as any)?.type, 'STRICT_DNS');
  const vhost = (routes.get('http.80') as any).virtual_hosts.find((vh: any) => vh.name === '*:80');
  assert.deepEqual(vhost.rate_limits, [
    { actions: [{ request_headers: { header_name: ':path', descriptor_key: 'PATH' } }] },
  ]);
  assertUntouched(r, base, SIM_SIDECAR);
});
