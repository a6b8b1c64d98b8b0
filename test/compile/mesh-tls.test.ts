/**
 * The mesh's TLS settings, as istiod turns them into xDS, from the istio ConfigMap to what a sidecar
 * and a gateway are served:
 *  - `meshMTLS` (security/authn/policy_applier.go InboundMTLSSettings, authn/utils BuildInboundTLS):
 *    the minimum version and cipher list of the inbound Istio mTLS chains; not the client side
 *    (cluster_tls.go: ISTIO_MUTUAL clusters keep TLSv1_2..TLSv1_3), nor gateways' ISTIO_MUTUAL
 *    servers (listener.go BuildListenerTLSContext sets no parameters for them).
 * Validated as pkg/config/validation/agent ValidateMeshTLSConfig.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileTexts, type PipelineResult } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { gatewayYaml, INGRESS_NODE, MESH_YAML } from '../helpers/gateway-sim.js';
import { served } from '../helpers/mesh.js';
import { meshConfigMap, SIDECAR, type Json } from '../helpers/mesh-config-views.js';

const WORKLOADS = `
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.96.40.1, selector: {app: web}, ports: [{name: http, port: 8000}, {name: tcp-db, port: 9000}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default, labels: {app: web}}
spec: {containers: [{name: app, ports: [{containerPort: 8000}, {containerPort: 9000}]}]}
status: {phase: Running, podIP: 10.244.1.5, podIPs: [{ip: 10.244.1.5}], conditions: [{type: Ready, status: "True"}]}
${gatewayYaml('gw', 'istio-system', 'port: {number: 443, name: https-mesh, protocol: HTTPS}\nhosts: ["mesh.example.com"]\ntls: {mode: ISTIO_MUTUAL}')}
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: gw-a, namespace: istio-system}
spec:
  hosts: ["*"]
  gateways: [gw]
  http: [{route: [{destination: {host: a.default.svc.cluster.local}}]}]
`;

function compile(mesh = '', extra = ''): PipelineResult {
  return compileTexts(
    [{ file: 'mesh.yaml', text: MESH_YAML + WORKLOADS + extra + (mesh ? meshConfigMap(mesh) : '') }],
    { hasher: nodeSha256Hex },
  );
}

const notInfo = (r: PipelineResult) => r.diagnostics.filter((d) => d.severity !== 'info');

/** The common TLS contexts of virtualInbound's Istio mTLS chains (those requiring a client certificate). */
function inboundMtls(result: PipelineResult): Json[] {
  const listener = served(result, SIDECAR).resources.listeners.get('virtualInbound') as Json;
  return (listener.filter_chains as Json[])
    .map((c) => c.transport_socket?.typed_config)
    .filter((t: Json | undefined) => t?.require_client_certificate === true)
    .map((t: Json) => t.common_tls_context);
}

/** The Istio mTLS context the sidecar's auto-mTLS cluster to `a` uses. */
function outboundIstioMtls(result: PipelineResult): Json {
  const cluster = served(result, SIDECAR).resources.clusters.get('outbound|80||a.default.svc.cluster.local') as Json;
  const match = (cluster.transport_socket_matches as Json[]).find((m) => m.name === 'tlsMode-istio');
  return match?.transport_socket.typed_config.common_tls_context;
}

/** The gateway's server TLS contexts on a port. */
function gatewayTls(result: PipelineResult, listener: string): Json[] {
  const l = served(result, INGRESS_NODE).resources.listeners.get(listener) as Json;
  return (l.filter_chains as Json[]).map((c) => c.transport_socket?.typed_config?.common_tls_context);
}

const ISTIOD_SERVER_CIPHERS = [
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'AES256-GCM-SHA384',
  'AES128-GCM-SHA256',
];

test("without meshMTLS: istiod's inbound mTLS parameters (TLSv1_2..TLSv1_3, its server cipher list)", () => {
  const result = compile();
  assert.deepEqual(notInfo(result), []);
  const chains = inboundMtls(result);
  // HTTP and TCP ports, the passthrough chains: every Istio mTLS chain.
  assert.ok(chains.length >= 4, `${chains.length} mTLS chains`);
  for (const c of chains)
    assert.deepEqual(c.tls_params, {
      tls_minimum_protocol_version: 'TLSv1_2',
      tls_maximum_protocol_version: 'TLSv1_3',
      cipher_suites: ISTIOD_SERVER_CIPHERS,
    });
});

test('meshMTLS pins every inbound Istio mTLS chain: TLSv1_3 minimum and its cipher suites', () => {
  const result = compile(`
meshMTLS:
  minProtocolVersion: TLSV1_3
  cipherSuites: [ECDHE-ECDSA-AES256-GCM-SHA384, ECDHE-RSA-AES256-GCM-SHA384]`);
  assert.deepEqual(notInfo(result), []);
  assert.ok(!result.diagnostics.some((d) => d.field === 'data.mesh.meshMTLS'), 'meshMTLS is read, not ignored');
  const chains = inboundMtls(result);
  assert.ok(chains.length >= 4);
  for (const c of chains) {
    assert.equal(c.tls_params.tls_minimum_protocol_version, 'TLSv1_3');
    assert.equal(c.tls_params.tls_maximum_protocol_version, 'TLSv1_3');
    assert.deepEqual(c.tls_params.cipher_suites, ['ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-RSA-AES256-GCM-SHA384']);
  }
  // HTTP and TCP chains keep their own ALPNs.
  const alpns = new Set(chains.map((c) => (c.alpn_protocols as string[]).join(',')));
  assert.deepEqual([...alpns].sort(), ['h2,http/1.1', 'istio-peer-exchange,h2,http/1.1']);
  // istiod applies meshMTLS to the server side only: the client's ISTIO_MUTUAL context keeps its defaults.
  assert.deepEqual(outboundIstioMtls(result).tls_params, {
    tls_minimum_protocol_version: 'TLSv1_2',
    tls_maximum_protocol_version: 'TLSv1_3',
  });
  // A gateway's ISTIO_MUTUAL server sets no TLS parameters (BuildListenerTLSContext).
  for (const c of gatewayTls(result, '0.0.0.0_443')) assert.equal(c.tls_params, undefined);
});

test('meshMTLS.minProtocolVersion alone keeps the cipher list; TLS_AUTO is TLSv1_2 (GetMinTLSVersion)', () => {
  for (const c of inboundMtls(compile('meshMTLS: {minProtocolVersion: TLSV1_3}'))) {
    assert.equal(c.tls_params.tls_minimum_protocol_version, 'TLSv1_3');
    assert.deepEqual(c.tls_params.cipher_suites, ISTIOD_SERVER_CIPHERS);
  }
  for (const c of inboundMtls(compile('meshMTLS: {minProtocolVersion: TLS_AUTO, cipherSuites: [AES128-GCM-SHA256]}'))) {
    assert.equal(c.tls_params.tls_minimum_protocol_version, 'TLSv1_2');
    assert.deepEqual(c.tls_params.cipher_suites, ['AES128-GCM-SHA256']);
  }
});

test('STRICT chains and chains shared between compiles follow each mesh config', () => {
  const strict = `---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: default, namespace: istio-system}
spec: {mtls: {mode: STRICT}}
`;
  // Alternating mesh configs in one process: no chain cached for one config leaks into another.
  for (const [mesh, version] of [
    ['', 'TLSv1_2'],
    ['meshMTLS: {minProtocolVersion: TLSV1_3}', 'TLSv1_3'],
    ['', 'TLSv1_2'],
  ] as const) {
    for (const extra of ['', strict]) {
      const result = compile(mesh, extra);
      assert.deepEqual(notInfo(result), []);
      const listener = served(result, SIDECAR).resources.listeners.get('virtualInbound') as Json;
      const chains = inboundMtls(result);
      assert.ok(chains.length >= 4);
      for (const c of chains) assert.equal(c.tls_params.tls_minimum_protocol_version, version, `${mesh} ${extra}`);
      if (extra) {
        // STRICT: no plaintext chain on the service ports.
        const plaintext = (listener.filter_chains as Json[]).filter(
          (c) => c.filter_chain_match?.destination_port === 8000 && !c.transport_socket,
        );
        assert.deepEqual(plaintext, []);
      }
    }
  }
});

test('meshMTLS is validated as istiod: ECDH curves refused, versions checked, unknown ciphers reported', () => {
  const bad = compile(`
meshMTLS: {ecdhCurves: [P-256], minProtocolVersion: TLSV1_1, cipherSuites: [x]}`);
  const errors = bad.diagnostics.filter((d) => d.severity === 'error').map((d) => d.field);
  assert.ok(errors.includes('data.mesh.meshMTLS.ecdhCurves'), errors.join());
  assert.ok(errors.includes('data.mesh.meshMTLS.minProtocolVersion'), errors.join());

  const unknown = compile('meshMTLS: {cipherSuites: [NOT-A-CIPHER, AES128-GCM-SHA256], maxProtocolVersion: TLSV1_3}');
  const warning = unknown.diagnostics.find((d) => d.field === 'data.mesh.meshMTLS.cipherSuites');
  assert.equal(warning?.severity, 'warning');
  assert.match(warning?.message ?? '', /NOT-A-CIPHER/);
  assert.ok(
    unknown.diagnostics.some((d) => d.code === 'unknown-field' && d.field === 'data.mesh.meshMTLS.maxProtocolVersion'),
  );
  // Served as written, as istiod.
  for (const c of inboundMtls(unknown))
    assert.deepEqual(c.tls_params.cipher_suites, ['NOT-A-CIPHER', 'AES128-GCM-SHA256']);

  const long = compile(
    `meshMTLS: {cipherSuites: [${Array.from({ length: 65 }, () => 'AES128-GCM-SHA256').join(', ')}]}`,
  );
  assert.ok(long.diagnostics.some((d) => d.severity === 'error' && d.field === 'data.mesh.meshMTLS.cipherSuites'));
});
