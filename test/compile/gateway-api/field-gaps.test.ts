/**
 * Gateway API fields meshsnap read but did not apply, found by the CRD field sweep's review
 * (test/inputs/gateway-api-crd-field-sweep.test.ts): from YAML to the served gateway resources, as
 * istiod's conversion.go does it.
 *
 * - a listener's `gateway.istio.io/tls-cipher-suites` option → the server's cipherSuites (buildTLS,
 *   security.FilterCipherSuites: invalid and repeated suites dropped) → the filter chain's
 *   tls_params.cipher_suites; not with the built-in certificate modes (ISTIO_SIMPLE/ISTIO_MUTUAL);
 * - an HTTPRoute rule's retry.backoff → the VirtualService retry's backoff → the route's
 *   retry_policy.retry_back_off.base_interval.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { served } from '../../helpers/mesh.js';
import { compileConformance, gatewayNode, gatewayPod, INFRA } from './conformance-harness.js';

type Json = Record<string, unknown>;

const httpsGateway = (options: string) => `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: secure, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners:
  - name: https
    port: 443
    protocol: HTTPS
    hostname: secure.example.com
    tls: {certificateRefs: [{name: cert}], options: {${options}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: secure, namespace: ${INFRA}}
spec:
  parentRefs: [{name: secure}]
  rules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]
${gatewayPod('secure', INFRA, 12, [443])}`;

/** The downstream TLS parameters of every filter chain of the 443 listener of the gateway with these options. */
function tlsParams(options: string): unknown[] {
  const listener = served(
    compileConformance(httpsGateway(options)),
    gatewayNode('secure', INFRA, 12),
  ).resources.listeners.get('0.0.0.0_443') as
    { filter_chains: { transport_socket?: { typed_config?: Json } }[] } | undefined;
  assert.ok(listener, 'listener 0.0.0.0_443');
  const chains = listener.filter_chains.filter((c) => c.transport_socket);
  assert.ok(chains.length > 0, 'a TLS filter chain');
  return chains.map(
    (c) => (c.transport_socket?.typed_config?.['common_tls_context'] as Json | undefined)?.['tls_params'],
  );
}

test('listener option gateway.istio.io/tls-cipher-suites: the valid suites, once each, in order, on the served filter chain', () => {
  const params = tlsParams(
    `gateway.istio.io/tls-cipher-suites: " ECDHE-RSA-AES256-GCM-SHA384 , NOT-A-SUITE,ECDHE-RSA-AES128-GCM-SHA256,ECDHE-RSA-AES256-GCM-SHA384"`,
  );
  for (const p of params)
    assert.deepEqual(p, { cipher_suites: ['ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-AES128-GCM-SHA256'] });
});

test('without the option the filter chain keeps Envoy defaults; with ISTIO_SIMPLE the option is not read (as istiod)', () => {
  for (const p of tlsParams('')) assert.equal(p, undefined);
  const builtin = tlsParams(
    `gateway.istio.io/tls-terminate-mode: ISTIO_SIMPLE, gateway.istio.io/tls-cipher-suites: ECDHE-RSA-AES128-GCM-SHA256`,
  );
  for (const p of builtin) assert.equal(p, undefined);
});

const retryRoute = (backoff: string) => `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: retried, namespace: ${INFRA}}
spec:
  parentRefs: [{name: same-namespace}]
  hostnames: [retry.example.com]
  rules:
  - retry: {codes: [503], attempts: 3${backoff}}
    backendRefs: [{name: infra-backend-v1, port: 8080}]
`;

function retryPolicy(yaml: string): Json {
  const rc = served(compileConformance(yaml), gatewayNode('same-namespace')).resources.routes.get('http.80') as
    { virtual_hosts: { domains: string[]; routes: { route?: { retry_policy?: Json } }[] }[] } | undefined;
  assert.ok(rc, 'route configuration http.80');
  const vh = rc.virtual_hosts.find((v) => v.domains.includes('retry.example.com'));
  assert.ok(vh, 'virtual host retry.example.com');
  const policy = vh.routes[0]?.route?.retry_policy;
  assert.ok(policy, 'retry policy');
  return policy;
}

test('HTTPRoute retry.backoff: the route retry policy base interval (istiod vs.Retries.Backoff)', () => {
  const policy = retryPolicy(retryRoute(', backoff: 250ms'));
  assert.deepEqual(policy['retry_back_off'], { base_interval: '0.25s' });
  assert.deepEqual(policy['num_retries'], 3);
  assert.deepEqual(policy['retriable_status_codes'], [503]);
});

test('HTTPRoute retry without backoff, or with a zero one (Envoy refuses base_interval 0): no retry_back_off', () => {
  assert.equal(retryPolicy(retryRoute(''))['retry_back_off'], undefined);
  assert.equal(retryPolicy(retryRoute(', backoff: 0s'))['retry_back_off'], undefined);
});
