/**
 * RequestAuthentication → jwt_authn (facts from istiod's TestConvertToEnvoyJwtConfig, through the
 * whole flow: rules sorted by issuer), its place in the HTTP filters (after CUSTOM, before the
 * other RBAC filters), the JWKS sources and clusters, the token locations and outputs, selection,
 * diagnostics and validation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadText } from '../../inputs/helpers.js';
import { served } from '../../helpers/mesh.js';
import { compileYaml, pod, service, sidecarNode, virtualInbound } from './mesh.js';

type Json = Record<string, unknown>;

const FOO = { app: 'foo' };
const FOO_IP = '10.244.0.50';
const FOO_POD = pod('foo', FOO_IP, FOO);
const FOO_SVC = service('foo', FOO, [{ port: 8000, name: 'http' }]);
const NODE = sidecarNode('foo', FOO_IP, FOO);

const ra = (name: string, spec: string, namespace = 'default') => `apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: { name: ${name}, namespace: ${namespace} }
spec: ${spec}`;

function httpFilters(...docs: string[]): Json[] {
  const listener = virtualInbound(compileYaml(FOO_POD, FOO_SVC, ...docs), NODE);
  const chain = (listener.filter_chains as Json[]).find((c) => c.name === '0.0.0.0_8000') as Json;
  return ((chain.filters as Json[])[0]?.typed_config as Json).http_filters as Json[];
}

const jwtConfig = (...docs: string[]): Json => {
  const f = httpFilters(...docs).find((x) => x.name === 'envoy.filters.http.jwt_authn');
  assert.ok(f, 'a jwt_authn filter');
  return f.typed_config as Json;
};

const orMissing = (name: string) => ({
  requires_any: { requirements: [{ provider_name: name }, { allow_missing: {} }] },
});
const DEFAULT_PROVIDER = {
  payload_in_metadata: 'payload',
  normalize_payload_in_metadata: { space_delimited_claims: ['permission', 'scope'] },
};

test('one rule: its provider, "it or no token" for every path, CORS preflights bypassed', () => {
  const config = jwtConfig(ra('jwt', '{ jwtRules: [{ issuer: https://secret.foo.com, jwks: jwks-inline-data }] }'));
  assert.deepEqual(config, {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication',
    providers: {
      'origins-0': {
        issuer: 'https://secret.foo.com',
        local_jwks: { inline_string: 'jwks-inline-data' },
        ...DEFAULT_PROVIDER,
      },
    },
    rules: [{ match: { prefix: '/' }, requires: orMissing('origins-0') }],
    bypass_cors_preflight: true,
  });
});

test('several rules (sorted by issuer): any provider alone, or each valid-or-missing; remote JWKS through the mesh cluster', () => {
  const jwksServer = service('jwt-server', { app: 'jwt-server' }, [{ port: 8000, name: 'http' }], 'foo');
  const config = jwtConfig(
    jwksServer,
    ra(
      'jwt',
      '{ jwtRules: [{ issuer: https://secret.foo.com, jwksUri: "http://jwt-server.foo.svc.cluster.local:8000/jwks" }, { issuer: https://secret.bar.com, jwks: jwks-inline-data }] }',
    ),
  );
  assert.deepEqual(config.rules, [
    {
      match: { prefix: '/' },
      requires: {
        requires_any: {
          requirements: [
            { provider_name: 'origins-0' },
            { provider_name: 'origins-1' },
            { requires_all: { requirements: [orMissing('origins-0'), orMissing('origins-1')] } },
          ],
        },
      },
    },
  ]);
  const providers = config.providers as Json;
  assert.equal((providers['origins-0'] as Json).issuer, 'https://secret.bar.com');
  assert.deepEqual((providers['origins-1'] as Json).remote_jwks, {
    http_uri: {
      uri: 'http://jwt-server.foo.svc.cluster.local:8000/jwks',
      cluster: 'outbound|8000||jwt-server.foo.svc.cluster.local',
      timeout: '5s',
    },
    cache_duration: '300s',
  });
});

test("istiod's order: CUSTOM, then jwt_authn, then the other RBAC filters, then fault, cors, router", () => {
  const names = httpFilters(
    ra('jwt', '{ jwtRules: [{ issuer: iss, jwks: k }] }'),
    `apiVersion: v1
kind: ConfigMap
metadata: { name: istio, namespace: istio-system }
data:
  mesh: |-
    extensionProviders:
    - name: ext
      envoyExtAuthzHttp: { service: foo.default.svc.cluster.local, port: 8000 }`,
    `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: { name: custom, namespace: default }
spec: { action: CUSTOM, provider: { name: ext }, rules: [{ to: [{ operation: { paths: [/admin] } }] }] }`,
    `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: { name: require-jwt, namespace: default }
spec: { rules: [{ from: [{ source: { requestPrincipals: ["iss/*"] } }] }] }`,
  ).map((f) => f.name);
  assert.deepEqual(names, [
    'envoy.filters.http.rbac',
    'envoy.filters.http.ext_authz',
    'envoy.filters.http.jwt_authn',
    'envoy.filters.http.rbac',
    'envoy.filters.http.fault',
    'envoy.filters.http.cors',
    'envoy.filters.http.router',
  ]);
});

test('request principals and claims are matched on the payload jwt_authn writes', () => {
  const filters = httpFilters(
    ra('jwt', '{ jwtRules: [{ issuer: iss, jwks: k }] }'),
    `apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: { name: require-jwt, namespace: default }
spec:
  rules:
  - from: [{ source: { requestPrincipals: ["iss/alice"] } }]
    when: [{ key: "request.auth.claims[groups]", values: [admins] }]`,
  );
  const rbac = JSON.stringify(filters.find((f) => f.name === 'envoy.filters.http.rbac'));
  assert.match(rbac, /"filter":"envoy.filters.http.jwt_authn".*"key":"payload"/);
  assert.match(rbac, /"key":"iss"\}\],"value":\{"string_match":\{"exact":"iss"\}/);
  assert.match(rbac, /"key":"sub"\}\],"value":\{"string_match":\{"exact":"alice"\}/);
  assert.match(rbac, /"key":"groups"/);
});

test('token locations and outputs, claims, timeout', () => {
  const config = jwtConfig(
    ra(
      'jwt',
      `{ jwtRules: [{ issuer: iss, jwks: k, audiences: [a1, a2], fromHeaders: [{ name: x-jwt, prefix: "Bearer " }, { name: x-other }],
         fromParams: [token], fromCookies: [session], outputPayloadToHeader: x-payload, forwardOriginalToken: true,
         outputClaimToHeaders: [{ header: x-sub, claim: sub }], timeout: 2s, spaceDelimitedClaims: [roles, scope] }] }`,
    ),
  );
  assert.deepEqual((config.providers as Json)['origins-0'], {
    issuer: 'iss',
    audiences: ['a1', 'a2'],
    forward: true,
    forward_payload_header: 'x-payload',
    from_headers: [{ name: 'x-jwt', value_prefix: 'Bearer ' }, { name: 'x-other' }],
    from_params: ['token'],
    from_cookies: ['session'],
    local_jwks: { inline_string: 'k' },
    payload_in_metadata: 'payload',
    normalize_payload_in_metadata: { space_delimited_claims: ['permission', 'roles', 'scope'] },
    claim_to_headers: [{ header_name: 'x-sub', claim_name: 'sub' }],
  });
});

test('an external jwksUri gets a DNS cluster (TLS with SNI for https); keys unknown to meshsnap reject every token', () => {
  const result = compileYaml(
    FOO_POD,
    FOO_SVC,
    ra('jwt', '{ jwtRules: [{ issuer: iss, jwksUri: "https://issuer.example.com/keys" }, { issuer: oidc }] }'),
  );
  const cluster = served(result, NODE).resources.clusters.get('outbound|443||issuer.example.com') as Json;
  assert.equal(cluster.type, 'STRICT_DNS');
  assert.deepEqual(((cluster.transport_socket as Json).typed_config as Json).sni, 'issuer.example.com');
  assert.deepEqual(
    result.diagnostics.map((d) => [d.code, d.field]),
    [['jwks-unknown', 'spec.jwtRules[1]']],
  );
  const config = jwtConfig(ra('jwt', '{ jwtRules: [{ issuer: oidc }] }'));
  assert.deepEqual(((config.providers as Json)['origins-0'] as Json).local_jwks, { inline_string: '{"keys":[]}' });
});

test('a label-selected RequestAuthentication keys the class; other workloads do not get it', () => {
  const bar = pod('bar', '10.244.0.51', { app: 'bar' });
  const result = compileYaml(
    FOO_POD,
    bar,
    FOO_SVC,
    ra('jwt', '{ selector: { matchLabels: { app: foo } }, jwtRules: [{ issuer: iss, jwks: k }] }'),
  );
  assert.equal(served(result, NODE).classId, 'sidecar/default/foo/jwt:default/jwt');
  assert.equal(served(result, sidecarNode('bar', '10.244.0.51', { app: 'bar' })).classId, 'sidecar/default/_');
  assert.deepEqual(result.diagnostics, []);
});

test('validation: an issuer per rule, jwksUri an http(s) URL, valid header names', () => {
  const errors = (spec: string) =>
    loadText(ra('x', spec))
      .diagnostics.filter((d) => d.severity === 'error')
      .map((d) => d.field);
  assert.deepEqual(errors('{ jwtRules: [{ jwks: k }] }'), ['spec.jwtRules[0].issuer']);
  assert.deepEqual(errors('{ jwtRules: [{ issuer: i, jwksUri: "ftp://x/keys" }] }'), ['spec.jwtRules[0].jwksUri']);
  assert.deepEqual(
    errors('{ jwtRules: [{ issuer: i, jwks: k, outputClaimToHeaders: [{ header: "a b", claim: c }] }] }'),
    ['spec.jwtRules[0].outputClaimToHeaders[0].header'],
  );
  assert.deepEqual(errors('{ jwtRules: [{ issuer: i, jwks: k, fromHeaders: [{ prefix: x }] }] }'), [
    'spec.jwtRules[0].fromHeaders[0].name',
  ]);
  assert.deepEqual(
    errors('{ selector: { matchLabels: { a: b } }, jwtRules: [{ issuer: i, jwksUri: "https://i/k" }] }'),
    [],
  );
});
