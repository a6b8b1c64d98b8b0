/**
 * ServiceEntry `resolution: DYNAMIC_DNS` from YAML to what a sidecar is served, after istiod's
 * cluster_dfp_sidecar_test.go (TestSidecarDynamicDNSClusters, TestSidecarDynamicDNSInsecureSkipVerify),
 * listener_dfp_test.go (TestSidecarDynamicDNSFilters) and listener_test.go
 * (TestOutboundTLSDynamicDNSWildcardServerNames): the dynamic forward proxy cluster, the HTTP
 * filter before the router, the SNI filter of a TLS port, the wildcard virtual host. Every build
 * also passes the snapshot's Envoy check (a rejected resource is an error diagnostic).
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- walks decoded config_dump JSON */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compileTexts, type PipelineResult } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { BOOKINFO_NODES, compileBookinfoClean, served } from '../helpers/mesh.js';
import { BOOKINFO_STATE } from '../helpers/paths.js';

const DFP_CLUSTER = 'type.googleapis.com/envoy.extensions.clusters.dynamic_forward_proxy.v3.ClusterConfig';
const HTTP_OPTIONS = 'envoy.extensions.upstreams.http.v3.HttpProtocolOptions';

const se = (spec: string, name = 'wildcard-se') => `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: { name: ${name}, namespace: default }
spec:
${spec}`;
const dr = (host: string, trafficPolicy: string, extra = '') => `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: { name: wildcard-dr, namespace: default }
spec:
  host: "${host}"
  trafficPolicy: ${trafficPolicy}${extra}`;
const dynamicDns = (host: string, port: number, protocol: string, location = 'MESH_EXTERNAL') =>
  se(
    `  hosts: ["${host}"]\n  ports: [{ number: ${port}, name: test-port, protocol: ${protocol} }]\n  location: ${location}\n  resolution: DYNAMIC_DNS`,
  );

/** Bookinfo plus `texts`; no warning or error (an Envoy rejection would be one). */
const build = compileBookinfoClean;

const resources = (r: PipelineResult) => served(r, BOOKINFO_NODES.productpage).resources;
const clusterOf = (r: PipelineResult, name: string): any => resources(r).clusters.get(name);
const httpOptions = (c: any): any => c.typed_extension_protocol_options?.[HTTP_OPTIONS];

test('HTTP port: a dynamic forward proxy cluster, CLUSTER_PROVIDED, with the host DNS cache; no EDS', () => {
  const r = build(dynamicDns('*.example.com', 80, 'HTTP'));
  const c = clusterOf(r, 'outbound|80||*.example.com');
  assert.ok(c, 'DFP cluster should be created');
  assert.equal(c.lb_policy, 'CLUSTER_PROVIDED');
  assert.equal(c.type, undefined);
  assert.equal(c.eds_cluster_config, undefined);
  assert.equal(c.cluster_type.name, 'envoy.clusters.dynamic_forward_proxy');
  assert.deepEqual(c.cluster_type.typed_config, {
    '@type': DFP_CLUSTER,
    dns_cache_config: { name: '*.example.com_dfp_dns_cache', dns_lookup_family: 'V4_ONLY' },
  });
  // MESH_EXTERNAL without a rule: no TLS, and no typed options (Envoy sets auto_sni itself then).
  assert.equal(c.transport_socket, undefined);
  assert.equal(c.transport_socket_matches, undefined);
  assert.equal(c.typed_extension_protocol_options, undefined);
  assert.equal(c.alt_stat_name, 'outbound|80||*.example.com;');
  assert.equal(resources(r).endpoints.has('outbound|80||*.example.com'), false);
});

test('GRPC and HTTP2 ports: HTTP/2 upstream; without TLS the insecure options are allowed (Envoy needs it with typed options)', () => {
  for (const protocol of ['GRPC', 'HTTP2']) {
    const r = build(dynamicDns('*.example.com', 9090, protocol));
    const c = clusterOf(r, 'outbound|9090||*.example.com');
    assert.ok(httpOptions(c)?.explicit_http_config?.http2_protocol_options, protocol);
    assert.equal(c.cluster_type.typed_config.allow_insecure_cluster_options, true, protocol);
  }
});

test('TLS port: a DFP cluster too; TCP and HTTPS ports are refused, so no cluster', () => {
  const r = build(dynamicDns('*.example.com', 443, 'TLS'));
  assert.equal(clusterOf(r, 'outbound|443||*.example.com')?.cluster_type?.name, 'envoy.clusters.dynamic_forward_proxy');
  for (const protocol of ['TCP', 'HTTPS']) {
    const bad = compileTexts(
      [
        { file: BOOKINFO_STATE, text: readFileSync(BOOKINFO_STATE, 'utf8') },
        { file: 'se.yaml', text: dynamicDns('*.example.com', 3306, protocol) },
      ],
      { hasher: nodeSha256Hex },
    );
    assert.deepEqual(
      bad.diagnostics.filter((d) => d.severity === 'error').map((d) => d.field),
      ['spec.ports[0].protocol'],
    );
    assert.equal(resources(bad).clusters.has('outbound|3306||*.example.com'), false);
  }
});

test('TLS settings of a rule: no Istio SNI; auto_sni and auto_san_validation follow the request host', () => {
  const cases: [string, number, string, string][] = [
    ['HTTP with ISTIO_MUTUAL', 80, 'HTTP', '{ tls: { mode: ISTIO_MUTUAL } }'],
    ['TLS with SIMPLE', 443, 'TLS', '{ tls: { mode: SIMPLE } }'],
    ['TLS with ISTIO_MUTUAL', 443, 'TLS', '{ tls: { mode: ISTIO_MUTUAL } }'],
    [
      'TLS with MUTUAL',
      443,
      'TLS',
      '{ tls: { mode: MUTUAL, clientCertificate: /etc/certs/cert.pem, privateKey: /etc/certs/key.pem, caCertificates: /etc/certs/ca.pem } }',
    ],
  ];
  for (const [name, port, protocol, policy] of cases) {
    const r = build(dynamicDns('*.example.com', port, protocol), dr('*.example.com', policy));
    const c = clusterOf(r, `outbound|${port}||*.example.com`);
    assert.equal(c.transport_socket?.name, 'envoy.transport_sockets.tls', name);
    assert.equal(c.transport_socket.typed_config.sni, undefined, name);
    assert.deepEqual(
      httpOptions(c)?.upstream_http_protocol_options,
      { auto_sni: true, auto_san_validation: true },
      name,
    );
    assert.equal(c.cluster_type.typed_config.allow_insecure_cluster_options, undefined, name);
    assert.equal(
      c.metadata.filter_metadata.istio.config,
      '/apis/networking.istio.io/v1/namespaces/default/destination-rule/wildcard-dr',
      name,
    );
  }
});

test('insecureSkipVerify: auto_sni without auto_san_validation, and allow_insecure_cluster_options', () => {
  const r = build(
    dynamicDns('*.example.com', 443, 'TLS'),
    dr('*.example.com', '{ tls: { mode: SIMPLE, insecureSkipVerify: true } }'),
  );
  const c = clusterOf(r, 'outbound|443||*.example.com');
  assert.equal(c.cluster_type.typed_config.allow_insecure_cluster_options, true);
  assert.equal(c.transport_socket?.name, 'envoy.transport_sockets.tls');
  assert.deepEqual(httpOptions(c)?.upstream_http_protocol_options, { auto_sni: true });
});

test('an sni in the rule: no auto_sni, SAN check kept, insecure options allowed (istiod)', () => {
  const r = build(
    dynamicDns('*.example.com', 443, 'TLS'),
    dr('*.example.com', '{ tls: { mode: SIMPLE, sni: fixed.example.com } }'),
  );
  const c = clusterOf(r, 'outbound|443||*.example.com');
  assert.equal(c.transport_socket.typed_config.sni, 'fixed.example.com');
  assert.deepEqual(httpOptions(c)?.upstream_http_protocol_options, { auto_san_validation: true });
  assert.equal(c.cluster_type.typed_config.allow_insecure_cluster_options, true);
});

test('MESH_INTERNAL without a rule: auto mTLS socket matches without SNI, with auto_sni and auto_san_validation', () => {
  const r = build(dynamicDns('*.example.com', 80, 'HTTP', 'MESH_INTERNAL'));
  const c = clusterOf(r, 'outbound|80||*.example.com');
  assert.deepEqual(
    c.transport_socket_matches.map((m: any) => m.name),
    ['tlsMode-istio', 'tlsMode-disabled'],
  );
  assert.equal(c.transport_socket_matches[0].transport_socket.typed_config.sni, undefined);
  assert.deepEqual(httpOptions(c)?.upstream_http_protocol_options, { auto_sni: true, auto_san_validation: true });
});

const POOL_RULE = dr(
  '*.example.com',
  '{ connectionPool: { tcp: { maxConnections: 7, connectTimeout: 3s } }, outlierDetection: { consecutive5xxErrors: 3 }, loadBalancer: { simple: LEAST_REQUEST } }',
);

test('a rule: connection pool and outlier detection apply, its load balancer does not', () => {
  const r = build(dynamicDns('*.example.com', 80, 'HTTP'), POOL_RULE);
  const c = clusterOf(r, 'outbound|80||*.example.com');
  assert.equal(c.lb_policy, 'CLUSTER_PROVIDED');
  assert.equal(c.connect_timeout, '3s');
  assert.equal(c.circuit_breakers.thresholds[0].max_connections, 7);
  assert.equal(c.outlier_detection.consecutive_5xx, 3);
});

test("a rule's subsets make no cluster for a DYNAMIC_DNS host, and say so", () => {
  const r = compileTexts(
    [
      { file: BOOKINFO_STATE, text: readFileSync(BOOKINFO_STATE, 'utf8') },
      { file: 'se.yaml', text: dynamicDns('*.example.com', 80, 'HTTP') },
      { file: 'dr.yaml', text: `${POOL_RULE}\n  subsets: [{ name: v1, labels: { version: v1 } }, { name: all }]` },
    ],
    { hasher: nodeSha256Hex },
  );
  assert.deepEqual(
    r.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.code} ${d.field}`),
    ['subset-no-endpoints spec.subsets[0]', 'subset-no-endpoints spec.subsets[1]'],
  );
  assert.deepEqual(
    [...resources(r).clusters.keys()].filter((n) => n.endsWith('*.example.com')),
    ['outbound|80||*.example.com'],
  );
});

test('HTTP listener: the HCM of 0.0.0.0_80 has the DFP filter of the host just before the router', () => {
  const r = build(dynamicDns('*.example.com', 80, 'HTTP'));
  const l: any = resources(r).listeners.get('0.0.0.0_80');
  assert.ok(l, 'listener 0.0.0.0_80');
  const hcm = l.filter_chains[0].filters[0].typed_config;
  const names = hcm.http_filters.map((f: any) => f.name);
  assert.deepEqual(names.slice(-2), ['envoy.filters.http.dynamic_forward_proxy', 'envoy.filters.http.router']);
  assert.deepEqual(hcm.http_filters.at(-2).typed_config, {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.dynamic_forward_proxy.v3.FilterConfig',
    dns_cache_config: { name: '*.example.com_dfp_dns_cache', dns_lookup_family: 'V4_ONLY' },
  });
  // The wildcard virtual host routes to the DFP cluster.
  const rc: any = resources(r).routes.get('80');
  const vh = rc.virtual_hosts.find((v: any) => v.domains.includes('*.example.com'));
  assert.ok(vh, 'virtual host *.example.com');
  assert.equal(vh.name, '*.example.com:80');
  assert.equal(vh.routes[0].route.cluster, 'outbound|80||*.example.com');
});

test('HTTP with a non-wildcard STATIC host: no DFP filter', () => {
  const r = build(
    se(
      '  hosts: [example.com]\n  ports: [{ number: 80, name: test-port, protocol: HTTP }]\n  resolution: STATIC\n  endpoints: [{ address: 1.2.3.4 }]',
    ),
  );
  const l: any = resources(r).listeners.get('0.0.0.0_80');
  const names = l.filter_chains.flatMap((fc: any) =>
    fc.filters.flatMap((f: any) => (f.typed_config.http_filters ?? []).map((h: any) => h.name)),
  );
  assert.equal(names.includes('envoy.filters.http.dynamic_forward_proxy'), false);
});

test('two DYNAMIC_DNS hosts on one HTTP port: one DFP filter each, in host order', () => {
  const r = build(
    dynamicDns('*.b.example.com', 80, 'HTTP'),
    dynamicDns('*.a.example.com', 80, 'HTTP').replace('wildcard-se', 'other'),
  );
  const hcm = (resources(r).listeners.get('0.0.0.0_80') as any).filter_chains[0].filters[0].typed_config;
  assert.deepEqual(
    hcm.http_filters
      .filter((f: any) => f.name === 'envoy.filters.http.dynamic_forward_proxy')
      .map((f: any) => f.typed_config.dns_cache_config.name),
    ['*.a.example.com_dfp_dns_cache', '*.b.example.com_dfp_dns_cache'],
  );
});

test('TLS port: a chain matching the host by SNI, the SNI DFP filter before the tcp_proxy, a TLS inspector', () => {
  const r = build(dynamicDns('*.example.com', 443, 'TLS'));
  const l: any = resources(r).listeners.get('0.0.0.0_443');
  assert.ok(l, 'listener 0.0.0.0_443');
  const chain = l.filter_chains.find((fc: any) => fc.filter_chain_match?.server_names?.includes('*.example.com'));
  assert.ok(chain, 'a chain for *.example.com');
  assert.deepEqual(chain.filter_chain_match.server_names, ['*.example.com']);
  assert.deepEqual(
    chain.filters.map((f: any) => f.name),
    ['envoy.filters.network.sni_dynamic_forward_proxy', 'envoy.filters.network.tcp_proxy'],
  );
  assert.deepEqual(chain.filters[0].typed_config, {
    '@type': 'type.googleapis.com/envoy.extensions.filters.network.sni_dynamic_forward_proxy.v3.FilterConfig',
    dns_cache_config: { name: '*.example.com_dfp_dns_cache', dns_lookup_family: 'V4_ONLY' },
    port_value: 443,
  });
  assert.equal(chain.filters[1].typed_config.cluster, 'outbound|443||*.example.com');
  assert.ok(l.listener_filters.some((f: any) => f.name === 'envoy.filters.listener.tls_inspector'));
});

test('a VirtualService subset of a DYNAMIC_DNS host is reported and dropped (no subset clusters)', () => {
  const r = compileTexts(
    [
      { file: BOOKINFO_STATE, text: readFileSync(BOOKINFO_STATE, 'utf8') },
      { file: 'se.yaml', text: dynamicDns('*.example.com', 80, 'HTTP') },
      {
        file: 'vs.yaml',
        text: `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: { name: vs, namespace: default }
spec:
  hosts: ["*.example.com"]
  http: [{ route: [{ destination: { host: "*.example.com", subset: v1 } }] }]`,
      },
    ],
    { hasher: nodeSha256Hex },
  );
  assert.deepEqual(
    r.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.code} ${d.field}`),
    ['unknown-subset spec.http[0].route[0].destination.subset'],
  );
});
