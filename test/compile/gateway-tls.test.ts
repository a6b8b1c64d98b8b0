/**
 * The gateway's DownstreamTlsContext per TLS mode, restating the cases of istiod's
 * TestBuildGatewayListenerTlsContext (pilot/pkg/networking/core/gateway_test.go).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gatewayTlsContext } from '../../src/compile/gateway/downstream-tls.js';
import type { ServerTlsSettings } from '../../src/model/gateway.js';

const agent = (name: string, initialFetchTimeoutZero: boolean) => ({
  name,
  sds_config: {
    api_config_source: {
      api_type: 2, // GRPC
      set_node_on_first_message_only: true,
      transport_api_version: 2, // V3
      grpc_services: [{ envoy_grpc: { cluster_name: 'sds-grpc' } }],
    },
    ...(initialFetchTimeoutZero ? { initial_fetch_timeout: { seconds: 0 } } : {}),
    resource_api_version: 2,
  },
});
const ads = (name: string) => ({ name, sds_config: { ads: {}, resource_api_version: 2 } });

/** Plain JSON of a context, so protobufjs-shaped values (Long, enums as numbers) compare simply. */
const json = (tls: ServerTlsSettings, tcp = false): unknown => JSON.parse(JSON.stringify(gatewayTlsContext(tls, tcp)));

test('ISTIO_MUTUAL: the proxy certificate and ROOTCA from the agent, client certificate required, CRL applied', () => {
  assert.deepEqual(json({ mode: 'ISTIO_MUTUAL', caCrl: '/custom/path/to/crl.pem' }), {
    common_tls_context: {
      alpn_protocols: ['h2', 'http/1.1'],
      tls_certificate_sds_secret_configs: [agent('default', true)],
      combined_validation_context: {
        default_validation_context: { match_subject_alt_names: [], crl: { filename: '/custom/path/to/crl.pem' } },
        validation_context_sds_secret_config: agent('ROOTCA', true),
      },
    },
    require_client_certificate: { value: true },
  });
  // A TCP server terminating Istio mTLS also offers metadata exchange.
  const tcp = json({ mode: 'ISTIO_MUTUAL' }, true) as { common_tls_context: { alpn_protocols: string[] } };
  assert.deepEqual(tcp.common_tls_context.alpn_protocols, ['istio-peer-exchange', 'h2', 'http/1.1']);
});

test('SIMPLE without a credential or files: the default certificate; with files: file-cert over the agent', () => {
  assert.deepEqual(json({ mode: 'SIMPLE' }), {
    common_tls_context: {
      alpn_protocols: ['h2', 'http/1.1'],
      tls_certificate_sds_secret_configs: [agent('default', true)],
    },
    require_client_certificate: { value: false },
  });
  assert.deepEqual(
    (
      json({ mode: 'SIMPLE', serverCertificate: 'server-cert.crt', privateKey: 'private-key.key' }) as never as {
        common_tls_context: { tls_certificate_sds_secret_configs: unknown[] };
      }
    ).common_tls_context.tls_certificate_sds_secret_configs,
    [agent('file-cert:server-cert.crt~private-key.key', false)],
  );
  assert.deepEqual(
    (
      json({
        mode: 'SIMPLE',
        tlsCertificates: [
          { serverCertificate: 'server-cert.crt', privateKey: 'private-key.key' },
          { serverCertificate: 'server-cert2.crt', privateKey: 'private-key2.key' },
        ],
      }) as never as { common_tls_context: { tls_certificate_sds_secret_configs: unknown[] } }
    ).common_tls_context.tls_certificate_sds_secret_configs,
    [
      agent('file-cert:server-cert.crt~private-key.key', false),
      agent('file-cert:server-cert2.crt~private-key2.key', false),
    ],
  );
});

test('SIMPLE with credentialName(s): kubernetes:// secrets over ADS; SANs as a static validation context', () => {
  assert.deepEqual(json({ mode: 'SIMPLE', credentialName: 'ingress-sds-resource-name' }), {
    common_tls_context: {
      alpn_protocols: ['h2', 'http/1.1'],
      tls_certificate_sds_secret_configs: [ads('kubernetes://ingress-sds-resource-name')],
    },
    require_client_certificate: { value: false },
  });
  assert.deepEqual(
    json({
      mode: 'SIMPLE',
      credentialNames: ['ingress-sds-resource-name', 'ingress-sds-resource-name2'],
      subjectAltNames: ['subject.name.a.com', 'subject.name.b.com'],
    }),
    {
      common_tls_context: {
        alpn_protocols: ['h2', 'http/1.1'],
        tls_certificate_sds_secret_configs: [
          ads('kubernetes://ingress-sds-resource-name'),
          ads('kubernetes://ingress-sds-resource-name2'),
        ],
        validation_context: {
          match_subject_alt_names: [{ exact: 'subject.name.a.com' }, { exact: 'subject.name.b.com' }],
        },
      },
      require_client_certificate: { value: false },
    },
  );
});

test('MUTUAL with files: file-root CA, SANs and CRL; OPTIONAL_MUTUAL validates without requiring', () => {
  const mutual = {
    serverCertificate: 'server-cert.crt',
    privateKey: 'private-key.key',
    caCertificates: 'ca-cert.crt',
    subjectAltNames: ['subject.name.a.com', 'subject.name.b.com'],
    caCrl: '/custom/path/to/crl.pem',
  };
  const expected = (required: boolean) => ({
    common_tls_context: {
      alpn_protocols: ['h2', 'http/1.1'],
      tls_certificate_sds_secret_configs: [agent('file-cert:server-cert.crt~private-key.key', false)],
      combined_validation_context: {
        default_validation_context: {
          match_subject_alt_names: [{ exact: 'subject.name.a.com' }, { exact: 'subject.name.b.com' }],
          crl: { filename: '/custom/path/to/crl.pem' },
        },
        validation_context_sds_secret_config: agent('file-root:ca-cert.crt', false),
      },
    },
    require_client_certificate: { value: required },
  });
  assert.deepEqual(json({ mode: 'MUTUAL', ...mutual }), expected(true));
  assert.deepEqual(json({ mode: 'OPTIONAL_MUTUAL', ...mutual }), expected(false));
});

test('MUTUAL with a credential: the -cacert secret of the first credential (or caCertCredentialName), SPKI/hash pins, TLS parameters', () => {
  const ctx = json({
    mode: 'MUTUAL',
    credentialName: 'ingress-sds-resource-name',
    subjectAltNames: ['subject.name.a.com'],
    verifyCertificateSpki: ['abc'],
    verifyCertificateHash: ['def'],
    minProtocolVersion: 'TLSV1_2',
    maxProtocolVersion: 'TLSV1_3',
    cipherSuites: ['ECDHE-RSA-AES256-GCM-SHA384'],
    ecdhCurves: ['P-256'],
  }) as { common_tls_context: Record<string, unknown> };
  assert.deepEqual(ctx.common_tls_context.combined_validation_context, {
    default_validation_context: {
      match_subject_alt_names: [{ exact: 'subject.name.a.com' }],
      verify_certificate_spki: ['abc'],
      verify_certificate_hash: ['def'],
    },
    validation_context_sds_secret_config: ads('kubernetes://ingress-sds-resource-name-cacert'),
  });
  assert.deepEqual(ctx.common_tls_context.tls_params, {
    tls_minimum_protocol_version: 3,
    ecdh_curves: ['P-256'],
    cipher_suites: ['ECDHE-RSA-AES256-GCM-SHA384'],
    tls_maximum_protocol_version: 4,
  });
  const own = json({ mode: 'MUTUAL', credentialName: 'a', caCertCredentialName: 'client-ca' }) as {
    common_tls_context: { combined_validation_context: { validation_context_sds_secret_config: unknown } };
  };
  assert.deepEqual(
    own.common_tls_context.combined_validation_context.validation_context_sds_secret_config,
    ads('kubernetes://client-ca'),
  );
});
