/**
 * The mesh's TLS settings, as istiod turns them into xDS, from the istio ConfigMap to what a sidecar
 * and a gateway are served:
 *  - `meshMTLS` (security/authn/policy_applier.go InboundMTLSSettings, authn/utils BuildInboundTLS):
 *    the minimum version and cipher list of the inbound Istio mTLS chains; not the client side
 *    (cluster_tls.go: ISTIO_MUTUAL clusters keep TLSv1_2..TLSv1_3), nor gateways' ISTIO_MUTUAL
 *    servers (listener.go BuildListenerTLSContext sets no parameters for them).
 *  - `tlsDefaults`: on TLS servers istiod builds from Gateway and Sidecar ingress settings (listener.go
 *    BuildListenerTLSContext, applyDownstreamTLSDefaults: SIMPLE, MUTUAL, OPTIONAL_MUTUAL; the
 *    server's own parameters over them), and its curves and cipher suites in DestinationRule SIMPLE /
 *    MUTUAL originations (cluster_tls.go constructUpstreamTLS, applyTLSDefaults).
 * Validated as pkg/config/validation/agent ValidateMeshTLSConfig and ValidateMeshTLSDefaults.
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

/** A gateway with two SIMPLE servers (one with its own parameters), a DestinationRule originating TLS, a Sidecar ingress TLS port. */
const TLS_SERVERS = `${gatewayYaml(
  'gw-tls',
  'istio-system',
  'port: {number: 8443, name: https-a, protocol: HTTPS}\nhosts: ["a.example.com"]\ntls: {mode: SIMPLE, credentialName: cert-a}',
  'port: {number: 9443, name: https-b, protocol: HTTPS}\nhosts: ["b.example.com"]\ntls: {mode: MUTUAL, credentialName: cert-b, minProtocolVersion: TLSV1_2, cipherSuites: [ECDHE-RSA-AES128-GCM-SHA256]}',
)}apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: gw-tls, namespace: istio-system}
spec:
  hosts: ["a.example.com", "b.example.com"]
  gateways: [gw-tls]
  http: [{route: [{destination: {host: a.default.svc.cluster.local}}]}]
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: b-tls, namespace: default}
spec: {host: b.default.svc.cluster.local, trafficPolicy: {tls: {mode: SIMPLE}}}
---
apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: web, namespace: default}
spec:
  workloadSelector: {labels: {app: web}}
  ingress:
  - defaultEndpoint: 0.0.0.0:8000
    port: {name: https, number: 8000, protocol: HTTPS}
    tls: {mode: SIMPLE, privateKey: key.pem, serverCertificate: cert.pem}
---
apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  portLevelMtls: {8000: {mode: DISABLE}}
`;

const TLS_DEFAULTS = `
tlsDefaults:
  minProtocolVersion: TLSV1_3
  ecdhCurves: [X25519, P-256]
  cipherSuites: [ECDHE-ECDSA-AES256-GCM-SHA384, ECDHE-RSA-AES256-GCM-SHA384]`;

function tlsViews(result: PipelineResult) {
  const sidecar = served(result, SIDECAR).resources;
  const cluster = sidecar.clusters.get('outbound|80||b.default.svc.cluster.local') as Json;
  const inbound = sidecar.listeners.get('virtualInbound') as Json;
  const ingressChain = (inbound.filter_chains as Json[]).find(
    (c) => c.filter_chain_match?.destination_port === 8000 && c.transport_socket,
  );
  return {
    simple: gatewayTls(result, '0.0.0.0_8443'),
    own: gatewayTls(result, '0.0.0.0_9443'),
    istioMutual: gatewayTls(result, '0.0.0.0_443'),
    origination: cluster.transport_socket?.typed_config?.common_tls_context,
    sidecarIngress: ingressChain?.transport_socket?.typed_config?.common_tls_context,
  };
}

test('without tlsDefaults: servers carry only their own parameters, originations the upstream defaults', () => {
  const result = compile('', TLS_SERVERS);
  assert.deepEqual(notInfo(result), []);
  const v = tlsViews(result);
  assert.ok(v.simple.length === 1 && v.own.length === 1);
  assert.equal(v.simple[0]?.tls_params, undefined);
  assert.deepEqual(v.own[0]?.tls_params, {
    tls_minimum_protocol_version: 'TLSv1_2',
    cipher_suites: ['ECDHE-RSA-AES128-GCM-SHA256'],
  });
  assert.deepEqual(v.origination.tls_params, {
    tls_minimum_protocol_version: 'TLSv1_2',
    tls_maximum_protocol_version: 'TLSv1_3',
  });
  assert.ok(v.sidecarIngress, 'the Sidecar ingress TLS chain');
  assert.equal(v.sidecarIngress.tls_params, undefined);
});

test("tlsDefaults under gateway and Sidecar ingress servers' own parameters, and in SIMPLE originations", () => {
  const result = compile(TLS_DEFAULTS, TLS_SERVERS);
  assert.deepEqual(notInfo(result), []);
  assert.ok(!result.diagnostics.some((d) => d.field === 'data.mesh.tlsDefaults'), 'tlsDefaults is read, not ignored');
  const v = tlsViews(result);
  const meshDefaults = {
    tls_minimum_protocol_version: 'TLSv1_3',
    ecdh_curves: ['X25519', 'P-256'],
    cipher_suites: ['ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-RSA-AES256-GCM-SHA384'],
  };
  assert.deepEqual(v.simple[0]?.tls_params, meshDefaults);
  assert.deepEqual(v.sidecarIngress.tls_params, meshDefaults);
  // The server's own minimum version and cipher suites win; the mesh's curves stay (applyServerTLSSettings).
  assert.deepEqual(v.own[0]?.tls_params, {
    tls_minimum_protocol_version: 'TLSv1_2',
    ecdh_curves: ['X25519', 'P-256'],
    cipher_suites: ['ECDHE-RSA-AES128-GCM-SHA256'],
  });
  // ISTIO_MUTUAL servers take none (isSimpleOrMutual).
  for (const c of v.istioMutual) assert.equal(c.tls_params, undefined);
  // Originations: curves and cipher suites only; the minimum version is for servers.
  assert.deepEqual(v.origination.tls_params, {
    tls_minimum_protocol_version: 'TLSv1_2',
    tls_maximum_protocol_version: 'TLSv1_3',
    ecdh_curves: ['X25519', 'P-256'],
    cipher_suites: ['ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-RSA-AES256-GCM-SHA384'],
  });
  // Neither the inbound Istio mTLS chains nor the client's Istio mTLS (istiod: meshMTLS only).
  for (const c of inboundMtls(result)) assert.deepEqual(c.tls_params.cipher_suites, ISTIOD_SERVER_CIPHERS);
  assert.deepEqual(outboundIstioMtls(result).tls_params, {
    tls_minimum_protocol_version: 'TLSv1_2',
    tls_maximum_protocol_version: 'TLSv1_3',
  });
});

test('tlsDefaults.minProtocolVersion alone reaches servers only', () => {
  const v = tlsViews(compile('tlsDefaults: {minProtocolVersion: TLSV1_3}', TLS_SERVERS));
  assert.deepEqual(v.simple[0]?.tls_params, { tls_minimum_protocol_version: 'TLSv1_3' });
  assert.deepEqual(v.origination.tls_params, {
    tls_minimum_protocol_version: 'TLSv1_2',
    tls_maximum_protocol_version: 'TLSv1_3',
  });
});

test('tlsDefaults is validated as istiod: unknown and repeated curves warned and kept, versions checked', () => {
  const warned = compile('tlsDefaults: {ecdhCurves: [P-256, P-256, X448]}', TLS_SERVERS);
  const curveWarnings = warned.diagnostics.filter((d) => d.field === 'data.mesh.tlsDefaults.ecdhCurves');
  assert.deepEqual(
    curveWarnings.map((d) => d.severity),
    ['warning', 'warning'],
  );
  assert.ok(curveWarnings.some((d) => /unrecognized ECDH curves: X448/.test(d.message)));
  assert.ok(curveWarnings.some((d) => /duplicate ECDH curves: P-256/.test(d.message)));
  assert.deepEqual(tlsViews(warned).simple[0]?.tls_params.ecdh_curves, ['P-256', 'P-256', 'X448']);

  const bad = compile('tlsDefaults: {minProtocolVersion: TLSV1_0, cipherSuites: 3}');
  const errors = bad.diagnostics.filter((d) => d.severity === 'error').map((d) => d.field);
  assert.ok(errors.includes('data.mesh.tlsDefaults.minProtocolVersion'), errors.join());
  assert.ok(errors.includes('data.mesh.tlsDefaults.cipherSuites'), errors.join());
});

/** The SAN matchers of an inbound mTLS context's default validation context. */
const sanMatchers = (ctx: Json): unknown =>
  ctx.combined_validation_context?.default_validation_context?.match_subject_alt_names;

test("inbound Istio mTLS accepts only the mesh's trust domains (istiod's TrustDomainsForValidation)", () => {
  const defaults = inboundMtls(compile());
  assert.ok(defaults.length > 0);
  for (const ctx of defaults) assert.deepEqual(sanMatchers(ctx), [{ prefix: 'spiffe://cluster.local/' }]);

  const result = compile(`
trustDomain: example.org
trustDomainAliases: [old.example, example.org]
caCertificates:
- pem: "-----BEGIN CERTIFICATE-----"
  trustDomains: [partner.example, old.example]`);
  assert.deepEqual(notInfo(result), []);
  const contexts = inboundMtls(result);
  assert.ok(contexts.length > 0);
  for (const ctx of contexts)
    assert.deepEqual(sanMatchers(ctx), [
      { prefix: 'spiffe://example.org/' },
      { prefix: 'spiffe://old.example/' },
      { prefix: 'spiffe://partner.example/' },
    ]);
  // The client side checks the server's identity by its service accounts, not by trust domain.
  assert.equal(JSON.stringify(outboundIstioMtls(result)).includes('spiffe://partner.example/'), false);
});
