/**
 * The mesh's `defaultConfig.proxyHeaders` and `defaultConfig.gatewayTopology`, as istiod turns them
 * into xDS (pilot/pkg/networking/util/proxy_headers.go GetProxyHeadersFromProxyConfig; core/
 * listener_inbound.go buildSidecarInboundHTTPOpts, listener.go, gateway.go
 * buildGatewayConnectionManager and buildGatewayListener, httproute.go buildCatchAllVirtualHost,
 * route/route.go translateRoute), from the istio ConfigMap to what a sidecar and a gateway are served.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileTexts, type PipelineResult } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { MESH_YAML } from '../helpers/gateway-sim.js';
import { compile, meshConfigMap, router, views, WORKLOADS, type Json } from '../helpers/mesh-config-views.js';

test("istiod's defaults: Server istio-envoy on inbound and gateways, 100-continue proxied, inbound XFCC, attempt counts", () => {
  const result = compile();
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info'),
    [],
  );
  const v = views(result);
  assert.ok(v.inbound.length > 0 && v.outbound.length > 0 && v.gateway.length === 1);
  for (const h of v.inbound) {
    assert.equal(h.server_name, 'istio-envoy');
    assert.equal(h.proxy_100_continue, true);
    assert.equal(h.forward_client_cert_details, 'APPEND_FORWARD');
    assert.deepEqual(h.set_current_client_cert_details, { subject: true, uri: true, dns: true });
    assert.equal(h.generate_request_id, undefined);
    assert.equal(h.server_header_transformation, undefined);
    assert.deepEqual(router(h), { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' });
  }
  for (const h of v.outbound) {
    assert.equal(h.server_name, undefined, 'outbound keeps Envoy’s own name, as istiod');
    assert.equal(h.proxy_100_continue, true);
    assert.equal(h.forward_client_cert_details, undefined);
  }
  const [gw] = v.gateway as [Json];
  assert.equal(gw.server_name, 'istio-envoy');
  assert.equal(gw.proxy_100_continue, true);
  assert.equal(gw.forward_client_cert_details, 'SANITIZE_SET');
  assert.deepEqual(gw.set_current_client_cert_details, { subject: true, cert: true, dns: true, uri: true });
  assert.equal(gw.xff_num_trusted_hops, undefined);
  assert.equal(v.gatewayListener.listener_filters, undefined);
  for (const vh of [...v.sidecarRoutes.virtual_hosts, ...v.gatewayRoutes.virtual_hosts])
    assert.equal(vh.include_request_attempt_count, true, vh.name);
});

test('defaultConfig.proxyHeaders reaches every HCM, the router, virtual hosts and rewriting routes', () => {
  const result = compile(`
defaultConfig:
  proxyHeaders:
    server: {value: edge}
    requestId: {disabled: true}
    attemptCount: {disabled: true}
    envoyDebugHeaders: {disabled: true}
    forwardedClientCert: FORWARD_ONLY
    setCurrentClientCertDetails: {cert: true, uri: false}
    xForwardedPort: {enabled: true}
    xForwardedHost: {enabled: true}`);
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info'),
    [],
  );
  const v = views(result);
  for (const h of [...v.inbound, ...v.outbound, ...v.gateway]) {
    assert.equal(h.server_name, 'edge');
    assert.equal(h.generate_request_id, false);
    assert.equal(h.append_x_forwarded_port, true);
    assert.equal(router(h).suppress_envoy_headers, true);
  }
  for (const h of v.inbound) {
    assert.equal(h.forward_client_cert_details, 'FORWARD_ONLY');
    assert.deepEqual(h.set_current_client_cert_details, { subject: true, cert: true, dns: true });
  }
  // The gateway's XFCC comes from its topology, not from proxyHeaders (istiod).
  assert.equal((v.gateway[0] as Json).forward_client_cert_details, 'SANITIZE_SET');
  for (const vh of [...v.sidecarRoutes.virtual_hosts, ...v.gatewayRoutes.virtual_hosts])
    assert.equal(vh.include_request_attempt_count, undefined, vh.name);
  const routesOf = (name: string): Json[] =>
    (v.sidecarRoutes.virtual_hosts as Json[]).find((vh) => vh.name === name)?.routes ?? [];
  assert.equal(routesOf('a.default.svc.cluster.local:80')[0]?.route?.append_x_forwarded_host, true);
  assert.equal(routesOf('allow_any')[0]?.route?.append_x_forwarded_host, true);
  // A route without a rewrite does not add it (istiod sets it with the rewrite only).
  assert.equal(routesOf('b.default.svc.cluster.local:80')[0]?.route?.append_x_forwarded_host, undefined);
});

test('server.disabled passes the upstream Server header through', () => {
  const v = views(compile('defaultConfig: {proxyHeaders: {server: {disabled: true, value: ignored}}}'));
  for (const h of [...v.inbound, ...v.outbound, ...v.gateway]) {
    assert.equal(h.server_name, undefined);
    assert.equal(h.server_header_transformation, 'PASS_THROUGH');
  }
});

test('defaultConfig.gatewayTopology: trusted hops, client certificate details, PROXY protocol on gateway listeners', () => {
  const v = views(
    compile(`
defaultConfig:
  gatewayTopology:
    numTrustedProxies: 2
    forwardClientCertDetails: ALWAYS_FORWARD_ONLY
    proxyProtocol: {}`),
  );
  const [gw] = v.gateway as [Json];
  assert.equal(gw.xff_num_trusted_hops, 2);
  assert.equal(gw.forward_client_cert_details, 'ALWAYS_FORWARD_ONLY');
  assert.equal(gw.set_current_client_cert_details, undefined, 'only where the mode forwards details');
  assert.deepEqual(
    (v.gatewayListener.listener_filters as Json[]).map((f) => f.name),
    ['envoy.filters.listener.proxy_protocol'],
  );
  // Sidecars are not gateways.
  for (const h of [...v.inbound, ...v.outbound]) assert.equal(h.xff_num_trusted_hops, undefined);
});

test('defaultConfig is validated: bad values are errors; what istiod reads elsewhere is reported, not dropped', () => {
  const bad = compile(`
defaultConfig:
  proxyHeaders: {forwardedClientCert: SOMETIMES, server: {value: "a\\nb"}, unknownHeader: {}}
  gatewayTopology: {numTrustedProxies: -1}`);
  const fields = bad.diagnostics.filter((d) => d.severity === 'error').map((d) => d.field);
  assert.ok(fields.includes('data.mesh.defaultConfig.proxyHeaders.forwardedClientCert'), fields.join());
  assert.ok(fields.includes('data.mesh.defaultConfig.proxyHeaders.server.value'), fields.join());
  assert.ok(fields.includes('data.mesh.defaultConfig.gatewayTopology.numTrustedProxies'), fields.join());
  assert.ok(
    bad.diagnostics.some(
      (d) => d.code === 'unknown-field' && d.field === 'data.mesh.defaultConfig.proxyHeaders.unknownHeader',
    ),
  );

  const other = compile(`
defaultConfig:
  concurrency: 2
  tracing: {sampling: 10}
  proxyHeaders: {preserveHttp1HeaderCase: true, metadataExchangeHeaders: {mode: IN_MESH}}`);
  const by = (field: string) => other.diagnostics.find((d) => d.field === `data.mesh.defaultConfig.${field}`);
  assert.equal(by('concurrency')?.severity, 'info');
  // Applied now (test/compile/tracing.test.ts): nothing to say about a valid one.
  assert.equal(by('tracing'), undefined);
  assert.equal(by('proxyHeaders.preserveHttp1HeaderCase')?.severity, 'warning');
  assert.equal(by('proxyHeaders.metadataExchangeHeaders')?.severity, 'info');
});

/** The ingress pod of MESH_YAML with a `proxy.istio.io/config` annotation. */
const annotatedIngress = (config: string, name = 'istio-ingressgateway-0', ip = '10.244.0.20'): string => `---
apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: istio-system
  labels: {app: istio-ingressgateway, istio: ingressgateway}
  annotations:
    proxy.istio.io/config: |
${config
  .trim()
  .split('\n')
  .map((l) => `      ${l}`)
  .join('\n')}
spec: {containers: [{name: istio-proxy, ports: [{containerPort: 8080}]}]}
status: {phase: Running, podIP: ${ip}, podIPs: [{ip: ${ip}}], conditions: [{type: Ready, status: "True"}]}
`;

function compileWith(extra: string, mesh = ''): PipelineResult {
  const base = MESH_YAML.replace(/^apiVersion: v1\nkind: Pod\n[\s\S]*?\n---\n/m, '');
  return compileTexts([{ file: 'mesh.yaml', text: base + WORKLOADS + extra + (mesh ? meshConfigMap(mesh) : '') }], {
    hasher: nodeSha256Hex,
  });
}

test("a gateway pod's proxy.istio.io/config: its topology and headers over the mesh's, for its gateway only", () => {
  const result = compileWith(
    annotatedIngress(`
gatewayTopology: {numTrustedProxies: 1}
proxyHeaders: {server: {value: edge}}
holdApplicationUntilProxyStarts: true`),
    'defaultConfig: {proxyHeaders: {requestId: {disabled: true}}}',
  );
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info'),
    [],
  );
  const v = views(result);
  const [gw] = v.gateway as [Json];
  assert.equal(gw.xff_num_trusted_hops, 1);
  assert.equal(gw.server_name, 'edge');
  assert.equal(gw.generate_request_id, false, "the mesh's setting the pod does not override stays");
  // Sidecars keep the mesh's.
  for (const h of v.inbound) assert.equal(h.server_name, 'istio-envoy');
  for (const h of v.outbound) assert.equal(h.xff_num_trusted_hops, undefined);
});

test('gateway pods of one class with different ProxyConfigs: the first applies, the other is reported', () => {
  const result = compileWith(
    annotatedIngress('gatewayTopology: {numTrustedProxies: 2}') +
      annotatedIngress('gatewayTopology: {numTrustedProxies: 3}', 'istio-ingressgateway-1', '10.244.0.21'),
  );
  const [gw] = views(result).gateway as [Json];
  assert.equal(gw.xff_num_trusted_hops, 2);
  const reported = result.diagnostics.filter((d) => d.code === 'conflicting-proxy-config');
  assert.deepEqual(
    reported.map((d) => [d.severity, d.name]),
    [['warning', 'istio-ingressgateway-1']],
  );
});

test("a sidecar pod's proxyHeaders annotation is reported as not applied; a bad one refuses the pod", () => {
  const sidecarPod = WORKLOADS.replace(
    'metadata: {name: web-1, namespace: default, labels: {app: web}}',
    'metadata: {name: web-1, namespace: default, labels: {app: web}, annotations: {proxy.istio.io/config: "proxyHeaders: {server: {value: mine}}"}}',
  );
  const result = compileTexts([{ file: 'mesh.yaml', text: MESH_YAML + sidecarPod }], { hasher: nodeSha256Hex });
  const warned = result.diagnostics.filter((d) => d.kind === 'Pod' && d.code === 'unsupported-field');
  assert.deepEqual(
    warned.map((d) => [d.name, d.field]),
    [['web-1', 'metadata.annotations.proxy.istio.io/config']],
  );
  for (const h of views(result).inbound) assert.equal(h.server_name, 'istio-envoy');

  const bad = compileWith(annotatedIngress('gatewayTopology: {numTrustedProxies: many}'));
  assert.ok(
    bad.diagnostics.some(
      (d) =>
        d.severity === 'error' &&
        d.kind === 'Pod' &&
        d.field === 'metadata.annotations.proxy.istio.io/config.gatewayTopology.numTrustedProxies',
    ),
  );
});

test("a gateway pod's connectionSettings (profile EDGE) reach its HCM and listener, over the mesh's", () => {
  const result = compileWith(
    annotatedIngress('connectionSettings: {profile: EDGE, httpIdleTimeout: 30s}'),
    'defaultConfig: {connectionSettings: {httpRequestTimeout: 10s}}',
  );
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info'),
    [],
  );
  const v = views(result);
  const [gw] = v.gateway as [Json];
  // The pod's own idle timeout; the EDGE profile's header timeout; the mesh's request timeout.
  assert.equal(gw.common_http_protocol_options?.idle_timeout, '30s');
  assert.equal(gw.request_headers_timeout, '60s');
  assert.equal(gw.request_timeout, '10s');
  assert.equal(v.gatewayListener.per_connection_buffer_limit_bytes, 32768);
  // Sidecars keep the mesh's settings, without the EDGE profile's.
  for (const h of v.inbound) {
    assert.equal(h.request_timeout, '10s');
    assert.equal(h.request_headers_timeout, undefined);
  }
});
