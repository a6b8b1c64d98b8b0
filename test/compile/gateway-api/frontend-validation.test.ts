/**
 * Gateway `spec.tls.frontend` (Gateway API v1.4+ standard: client certificate validation), from
 * YAML to the served listener, as istiod's buildTLS / resolveGatewayTLS (conversion.go) apply it:
 * the port's perPort entry, else the default; one caCertificateRef; a Secret →
 * `kubernetes-gateway://<ns>/<name>-cacert`, a ConfigMap → `configmap://<ns>/<name>-cacert` as the
 * server's caCertCredentialName; mode MUTUAL (AllowValidOnly) or OPTIONAL_MUTUAL with
 * insecureSkipVerify (AllowInsecureFallback), the listener's tls-terminate-mode option over both; a
 * bad reference fails the listener (NoValidCACertificate) and it is not served. Facts from istiod's
 * testdata tls.yaml, frontend-tls-invalid.yaml and frontend-tls-refgrant.yaml.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GatewayStatus } from '../../../src/model/object-status.js';
import { served } from '../../helpers/mesh.js';
import { loadText } from '../../inputs/helpers.js';
import { compileConformance, gatewayNode, gatewayPod, INFRA, statusOf } from './conformance-harness.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- config_dump JSON

/** A Gateway `mtls` with HTTPS listeners on 443 and 8443 (a.example.com, b.example.com), `tls` as given. */
const gateway = (tls: string, options = '') => `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: mtls, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  tls: ${tls}
  listeners:
  - name: a
    port: 443
    protocol: HTTPS
    hostname: a.example.com
    tls: {certificateRefs: [{name: cert}]${options}}
  - name: b
    port: 8443
    protocol: HTTPS
    hostname: b.example.com
    tls: {certificateRefs: [{name: cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mtls, namespace: ${INFRA}}
spec:
  parentRefs: [{name: mtls}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
${gatewayPod('mtls', INFRA, 12, [443, 8443])}`;

const caSecret = (name: string, mode = '') =>
  `{validation: {caCertificateRefs: [{group: "", kind: Secret, name: ${name}}]${mode}}}`;

/** The downstream TLS context of each TLS filter chain of a served listener (undefined: not served). */
function tlsContexts(yaml: string, port: number): Json[] | undefined {
  const result = compileConformance(yaml);
  const listener = served(result, gatewayNode('mtls', INFRA, 12)).resources.listeners.get(`0.0.0.0_${port}`) as
    { filter_chains: { transport_socket?: { typed_config?: Json } }[] } | undefined;
  if (!listener) return undefined;
  const chains = listener.filter_chains.filter((c) => c.transport_socket);
  assert.ok(chains.length > 0, 'a TLS filter chain');
  return chains.map((c) => c.transport_socket?.typed_config as Json);
}

const caName = (ctx: Json): unknown =>
  ctx['common_tls_context']?.['combined_validation_context']?.['validation_context_sds_secret_config']?.['name'];

test('spec.tls.frontend.default with a Secret CA: every HTTPS listener requires and validates client certificates', () => {
  const yaml = gateway(`{frontend: {default: ${caSecret('client-ca')}}}`);
  for (const port of [443, 8443]) {
    const contexts = tlsContexts(yaml, port);
    assert.ok(contexts, `listener ${port} served`);
    for (const ctx of contexts) {
      assert.equal(ctx['require_client_certificate'], true);
      assert.equal(caName(ctx), `kubernetes-gateway://${INFRA}/client-ca-cacert`);
      assert.equal(
        ctx['common_tls_context']?.['combined_validation_context']?.['default_validation_context']?.[
          'trust_chain_verification'
        ],
        undefined,
      );
      assert.deepEqual(
        ctx['common_tls_context']?.['tls_certificate_sds_secret_configs']?.map((s: Json) => s['name']),
        [`kubernetes-gateway://${INFRA}/cert`],
      );
    }
  }
  // The relay may serve the CA to this Gateway's proxies (verified as its own certificate is).
  const result = compileConformance(yaml);
  const classId = served(result, gatewayNode('mtls', INFRA, 12)).classId;
  const verified = result.snapshot.content.classes.find((c) => c.id === classId)?.verifiedSecrets ?? [];
  assert.ok(verified.includes(`kubernetes-gateway://${INFRA}/client-ca-cacert`), verified.join(', '));
});

test('perPort overrides the default for its port only; AllowInsecureFallback → OPTIONAL_MUTUAL accepting untrusted certificates', () => {
  const yaml = gateway(
    `{frontend: {default: ${caSecret('default-ca')}, perPort: [{port: 8443, tls: ${caSecret('port-ca', ', mode: AllowInsecureFallback')}}]}}`,
  );
  const a = tlsContexts(yaml, 443);
  const b = tlsContexts(yaml, 8443);
  assert.ok(a && b);
  for (const ctx of a) {
    assert.equal(caName(ctx), `kubernetes-gateway://${INFRA}/default-ca-cacert`);
    assert.equal(ctx['require_client_certificate'], true);
  }
  for (const ctx of b) {
    assert.equal(caName(ctx), `kubernetes-gateway://${INFRA}/port-ca-cacert`);
    assert.equal(ctx['require_client_certificate'], false);
    assert.equal(
      ctx['common_tls_context']?.['combined_validation_context']?.['default_validation_context']?.[
        'trust_chain_verification'
      ],
      'ACCEPT_UNTRUSTED',
    );
  }
  const status = statusOf(compileConformance(yaml), 'Gateway', INFRA, 'mtls') as GatewayStatus | undefined;
  const insecure = status?.conditions.find((c) => c.type === 'InsecureFrontendValidationMode');
  assert.equal(insecure?.status, 'True');
  assert.equal(insecure?.reason, 'ConfigurationChanged');
});

test('the listener option OPTIONAL_MUTUAL wins over AllowValidOnly, and validates without accepting untrusted certificates', () => {
  const yaml = gateway(
    `{frontend: {default: ${caSecret('client-ca')}}}`,
    ', options: {gateway.istio.io/tls-terminate-mode: OPTIONAL_MUTUAL}',
  );
  const contexts = tlsContexts(yaml, 443);
  assert.ok(contexts);
  for (const ctx of contexts) {
    assert.equal(ctx['require_client_certificate'], false);
    assert.equal(caName(ctx), `kubernetes-gateway://${INFRA}/client-ca-cacert`);
    assert.equal(
      ctx['common_tls_context']?.['combined_validation_context']?.['default_validation_context']?.[
        'trust_chain_verification'
      ],
      undefined,
    );
  }
});

test('a ConfigMap CA: configmap://<ns>/<name>-cacert as istiod, with a warning (the relay does not serve it)', () => {
  const yaml = gateway(
    `{frontend: {default: {validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: ca}]}}}}`,
  );
  const contexts = tlsContexts(yaml, 443);
  assert.ok(contexts);
  for (const ctx of contexts) {
    assert.equal(caName(ctx), `configmap://${INFRA}/ca-cacert`);
    assert.equal(ctx['require_client_certificate'], true);
  }
  const warning = compileConformance(yaml).diagnostics.find(
    (d) => d.code === 'unsupported-field' && d.field === 'spec.tls.frontend.default.validation.caCertificateRefs[0]',
  );
  assert.ok(warning, 'unsupported-field warning on the ConfigMap reference');
});

test('a bad CA reference (two refs, another kind, another namespace without a grant): that listener is not accepted and not served', () => {
  const cases: [string, string, string][] = [
    [
      `{frontend: {default: {}, perPort: [{port: 443, tls: {validation: {caCertificateRefs: [{group: "", kind: Secret, name: a}, {group: "", kind: Secret, name: b}]}}}]}}`,
      'InvalidCACertificateRef',
      'only one caCertificateRef is supported',
    ],
    [
      `{frontend: {default: {}, perPort: [{port: 443, tls: {validation: {caCertificateRefs: [{group: "", kind: Service, name: some-service}]}}}]}}`,
      'InvalidCACertificateKind',
      'invalid CA certificate reference /Service/some-service., only secret and configmap are allowed',
    ],
    [
      `{frontend: {default: {}, perPort: [{port: 443, tls: {validation: {caCertificateRefs: [{group: "", kind: ConfigMap, namespace: certs, name: existing-ca}]}}}]}}`,
      'RefNotPermitted',
      `caCertificateRef certs/existing-ca not accessible to a Gateway in namespace "${INFRA}" (missing a ReferenceGrant?)`,
    ],
  ];
  for (const [tls, reason, message] of cases) {
    const yaml = gateway(tls);
    assert.equal(tlsContexts(yaml, 443), undefined, `${reason}: listener 443 not served`);
    assert.ok(tlsContexts(yaml, 8443), `${reason}: listener 8443 (the default: no validation) served`);
    const status = statusOf(compileConformance(yaml), 'Gateway', INFRA, 'mtls') as GatewayStatus | undefined;
    const listener = status?.listeners.find((l) => l.name === 'a');
    const cond = (type: string) => listener?.conditions.find((c) => c.type === type);
    assert.deepEqual(
      [cond('Accepted')?.status, cond('Accepted')?.reason, cond('Accepted')?.message],
      ['False', 'NoValidCACertificate', message],
    );
    assert.deepEqual([cond('ResolvedRefs')?.status, cond('ResolvedRefs')?.reason], ['False', reason]);
    assert.deepEqual([cond('Programmed')?.status, cond('Programmed')?.reason], ['False', 'Invalid']);
    const accepted = status?.conditions.find((c) => c.type === 'Accepted');
    assert.deepEqual(
      [accepted?.status, accepted?.reason, accepted?.message],
      ['True', 'ListenersNotValid', "One or more of the Gateway's listeners are invalid"],
    );
  }
});

test('a CA Secret in another namespace under a ReferenceGrant for the namespace: served', () => {
  const yaml = `${gateway(`{frontend: {default: {validation: {caCertificateRefs: [{group: "", kind: Secret, namespace: certs, name: ca}]}}}}`)}---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: ca, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: ${INFRA}}]
  to: [{group: "", kind: Secret}]
`;
  const contexts = tlsContexts(yaml, 443);
  assert.ok(contexts);
  for (const ctx of contexts) assert.equal(caName(ctx), 'kubernetes-gateway://certs/ca-cacert');
});

test('a ReferenceGrant naming the CA Secret does not admit it: istiod checks the grant for <name>-cacert', () => {
  const yaml = `${gateway(`{frontend: {default: {}, perPort: [{port: 443, tls: {validation: {caCertificateRefs: [{group: "", kind: Secret, namespace: certs, name: ca}]}}}]}}`)}---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: ca, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: ${INFRA}}]
  to: [{group: "", kind: Secret, name: ca}]
`;
  assert.equal(tlsContexts(yaml, 443), undefined);
  const status = statusOf(compileConformance(yaml), 'Gateway', INFRA, 'mtls') as GatewayStatus | undefined;
  const resolved = status?.listeners.find((l) => l.name === 'a')?.conditions.find((c) => c.type === 'ResolvedRefs');
  assert.equal(resolved?.reason, 'RefNotPermitted');
});

test('without spec.tls the listener stays SIMPLE (no client validation)', () => {
  const contexts = tlsContexts(gateway('{}'), 443);
  assert.ok(contexts);
  for (const ctx of contexts) {
    assert.notEqual(ctx['require_client_certificate'], true);
    assert.equal(ctx['common_tls_context']?.['combined_validation_context'], undefined);
  }
});

test('spec.tls is validated as the CRD: mode enum, caCertificateRefs required, perPort ports unique; backend warned about', () => {
  const diags = (tls: string) =>
    loadText(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: ns1}
spec:
  gatewayClassName: istio
  listeners: [{name: l, port: 80, protocol: HTTP}]
  tls: ${tls}
`).diagnostics.map((d) => `${d.severity} ${d.code} ${d.field ?? ''}`);
  assert.ok(
    diags(`{frontend: {default: ${caSecret('ca', ', mode: Sometimes')}}}`).includes(
      'error invalid-field spec.tls.frontend.default.validation.mode',
    ),
  );
  assert.ok(
    diags('{frontend: {default: {validation: {}}}}').includes(
      'error missing-field spec.tls.frontend.default.validation.caCertificateRefs',
    ),
  );
  assert.ok(
    diags(
      `{frontend: {default: {}, perPort: [{port: 443, tls: ${caSecret('a')}}, {port: 443, tls: ${caSecret('b')}}]}}`,
    ).includes('error invalid-field spec.tls.frontend.perPort[1].port'),
  );
  assert.ok(diags('{frontend: {perPort: []}}').includes('error missing-field spec.tls.frontend.default'));
  assert.deepEqual(diags('{backend: {clientCertificateRef: {name: c}}}'), [
    'warning unsupported-field spec.tls.backend',
  ]);
  assert.deepEqual(diags(`{frontend: {default: ${caSecret('ca')}}}`), []);
});
