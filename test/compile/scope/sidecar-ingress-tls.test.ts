/**
 * A Sidecar ingress listener's `tls`: facts ported from istiod's TestInboundSidecarTLSModes
 * (sidecar_simulation_test.go) and TestSidecarInboundListenerWithTLS-style cases of
 * listener_builder_test.go (with ENABLE_TLS_ON_SIDECAR_INGRESS on). The listener's own TLS is
 * terminated only where the port's mTLS mode is DISABLE; under STRICT or PERMISSIVE the port keeps
 * Istio mTLS.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileMesh, proxy, view } from './scope-mesh.js';

/** The proto3 JSON of what is served: wrappers as plain values, Any unpacked. */
interface TlsContext {
  common_tls_context?: {
    alpn_protocols?: string[];
    tls_certificate_sds_secret_configs?: { name?: string }[];
    combined_validation_context?: { validation_context_sds_secret_config?: { name?: string } };
  };
  require_client_certificate?: boolean;
}
interface Chain {
  name?: string;
  filter_chain_match?: { destination_port?: number; transport_protocol?: string };
  filters?: { name?: string }[];
  transport_socket?: { name?: string; typed_config?: TlsContext };
}

const POD = `apiVersion: v1
kind: Pod
metadata: {name: foo-1, namespace: default, labels: {app: foo}}
spec: {containers: [{name: app, image: app}]}
status: {phase: Running, podIP: 10.1.0.9, podIPs: [{ip: 10.1.0.9}]}`;

/** STRICT for the workload, `mode` on 9080, as istiod's test. */
const peerAuth = (mode: string) => `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: {name: peer-auth, namespace: default}
spec:
  selector: {matchLabels: {app: foo}}
  mtls: {mode: STRICT}
  portLevelMtls: {9080: {mode: ${mode}}}`;

const sidecarTls = (protocol: string, tls: string) => `apiVersion: networking.istio.io/v1
kind: Sidecar
metadata: {name: sidecar, namespace: default}
spec:
  workloadSelector: {labels: {app: foo}}
  ingress:
  - defaultEndpoint: 0.0.0.0:9080
    port: {name: tls, number: 9080, protocol: ${protocol}}
    tls: ${tls}`;

const SIMPLE = '{mode: SIMPLE, privateKey: httpbinkey.pem, serverCertificate: httpbin.pem}';
const MUTUAL = '{mode: MUTUAL, privateKey: httpbinkey.pem, serverCertificate: httpbin.pem, caCertificates: rootCA.pem}';

function port9080(...docs: string[]) {
  const result = compileMesh(POD, ...docs);
  const inbound = view(result, proxy('default', { app: 'foo' })).resources.listeners.get('virtualInbound') as {
    filter_chains?: Chain[];
  };
  const chains = (inbound.filter_chains ?? []).filter((c) => c.filter_chain_match?.destination_port === 9080);
  return { result, chains };
}

const tlsOf = (c: Chain): TlsContext => c.transport_socket?.typed_config ?? {};
const certificateName = (c: Chain) => tlsOf(c).common_tls_context?.tls_certificate_sds_secret_configs?.[0]?.name;

test('HTTPS with SIMPLE tls, port mTLS DISABLE: one TLS chain with the listener certificate files, HTTP inside, no plaintext', () => {
  const { result, chains } = port9080(peerAuth('DISABLE'), sidecarTls('HTTPS', SIMPLE));
  assert.deepEqual(
    chains.map((c) => [c.name, c.filter_chain_match?.transport_protocol, c.filters?.at(-1)?.name]),
    [['0.0.0.0_9080', 'tls', 'envoy.filters.network.http_connection_manager']],
  );
  const [chain] = chains as [Chain];
  assert.equal(certificateName(chain), 'file-cert:httpbin.pem~httpbinkey.pem');
  assert.equal(tlsOf(chain).require_client_certificate, false);
  assert.equal(tlsOf(chain).common_tls_context?.combined_validation_context, undefined);
  assert.deepEqual(tlsOf(chain).common_tls_context?.alpn_protocols, ['h2', 'http/1.1']);
  // Built, so no longer reported.
  assert.deepEqual(
    result.diagnostics.filter((d) => d.code === 'unsupported-sidecar-field'),
    [],
  );
});

test('TLS with SIMPLE tls, port mTLS DISABLE: the TLS chain proxies TCP to inbound|9080||', () => {
  const { chains } = port9080(peerAuth('DISABLE'), sidecarTls('TLS', SIMPLE));
  assert.deepEqual(
    chains.map((c) => [c.filter_chain_match?.transport_protocol, c.filters?.at(-1)?.name]),
    [['tls', 'envoy.filters.network.tcp_proxy']],
  );
  assert.equal(certificateName(chains[0] as Chain), 'file-cert:httpbin.pem~httpbinkey.pem');
});

test('MUTUAL tls, port mTLS DISABLE: a client certificate is required and validated against file-root:<caCertificates>', () => {
  for (const protocol of ['HTTPS', 'TLS']) {
    const { chains } = port9080(peerAuth('DISABLE'), sidecarTls(protocol, MUTUAL));
    assert.equal(chains.length, 1, protocol);
    const ctx = tlsOf(chains[0] as Chain);
    assert.equal(ctx.require_client_certificate, true);
    assert.equal(
      ctx.common_tls_context?.combined_validation_context?.validation_context_sds_secret_config?.name,
      'file-root:rootCA.pem',
    );
    assert.equal(certificateName(chains[0] as Chain), 'file-cert:httpbin.pem~httpbinkey.pem');
  }
});

test('port mTLS STRICT or PERMISSIVE: the ingress tls is ignored and the port keeps Istio mTLS', () => {
  for (const mode of ['STRICT', 'PERMISSIVE']) {
    const { chains } = port9080(peerAuth(mode), sidecarTls('HTTPS', SIMPLE));
    const tlsChains = chains.filter((c) => c.transport_socket);
    assert.ok(tlsChains.length > 0, mode);
    for (const c of tlsChains) {
      assert.equal(certificateName(c), 'default', mode);
      assert.equal(tlsOf(c).require_client_certificate, true, mode);
    }
    // PERMISSIVE still accepts plaintext; STRICT does not.
    assert.equal(
      chains.some((c) => c.filter_chain_match?.transport_protocol === 'raw_buffer'),
      mode === 'PERMISSIVE',
      mode,
    );
  }
});

test('protocol versions and cipher suites apply as on a gateway server; inline PEM is refused, never copied into the config', () => {
  const tls = `{mode: SIMPLE, privateKey: k.pem, serverCertificate: c.pem, minProtocolVersion: TLSV1_3, cipherSuites: [ECDHE-RSA-AES256-GCM-SHA384]}`;
  const { chains } = port9080(peerAuth('DISABLE'), sidecarTls('HTTPS', tls));
  const params = (chains[0]?.transport_socket?.typed_config as { common_tls_context?: { tls_params?: unknown } })
    .common_tls_context?.tls_params;
  assert.deepEqual(params, { tls_minimum_protocol_version: 'TLSv1_3', cipher_suites: ['ECDHE-RSA-AES256-GCM-SHA384'] });

  const pem = '"-----BEGIN PRIVATE KEY-----\\nMIIE"';
  const refused = port9080(
    peerAuth('DISABLE'),
    sidecarTls('HTTPS', `{mode: SIMPLE, privateKey: ${pem}, serverCertificate: c.pem}`),
  );
  assert.ok(
    refused.result.diagnostics.some((d) => d.severity === 'error' && d.field === 'spec.ingress[0].tls.privateKey'),
  );
  assert.doesNotMatch(
    JSON.stringify([...view(refused.result, proxy('default', { app: 'foo' })).resources.listeners.values()]),
    /BEGIN/,
  );
});

test("MUTUAL tls with caCrl, ecdhCurves and insecureSkipVerify: the CRL file, the curves and the trust chain on the listener's context (istiod's BuildListenerTLSContext)", () => {
  const { result, chains } = port9080(
    peerAuth('DISABLE'),
    sidecarTls(
      'HTTPS',
      '{mode: MUTUAL, privateKey: k.pem, serverCertificate: c.pem, caCertificates: ca.pem, caCrl: /etc/crl.pem, ecdhCurves: [P-256], insecureSkipVerify: true, verifyCertificateSpki: [abc]}',
    ),
  );
  type Json = Record<string, unknown>;
  const common = tlsOf(chains[0] as Chain).common_tls_context as Json;
  const validation = (common.combined_validation_context as Json).default_validation_context as Json;
  assert.deepEqual(validation.crl, { filename: '/etc/crl.pem' });
  assert.equal(validation.trust_chain_verification, 'ACCEPT_UNTRUSTED');
  assert.deepEqual((common.tls_params as Json).ecdh_curves, ['P-256']);
  // Only with a credentialName in istiod, which sidecar ingress TLS refuses: said, not dropped silently.
  assert.deepEqual(
    result.diagnostics.filter((d) => d.severity !== 'info').map((d) => `${d.code} ${d.field}`),
    ['unsupported-field spec.ingress[0].tls.verifyCertificateSpki'],
  );
});

test('caCrl with SIMPLE tls is refused, as istiod', () => {
  const { result } = port9080(
    peerAuth('DISABLE'),
    sidecarTls('HTTPS', '{mode: SIMPLE, privateKey: k.pem, serverCertificate: c.pem, caCrl: /etc/crl.pem}'),
  );
  assert.ok(result.diagnostics.some((d) => d.severity === 'error' && d.field === 'spec.ingress[0].tls.caCrl'));
});
