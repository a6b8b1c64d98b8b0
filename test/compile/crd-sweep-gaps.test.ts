/**
 * Fields the CRD field sweep (test/inputs/crd-field-sweep.test.ts) found dropped as unknown, now
 * handled as istiod does, checked from YAML to what a proxy is served or to the diagnostic:
 *
 * - VirtualService redirect `prefixRewrite` → the redirect's prefix_rewrite (istiod's ApplyRedirect),
 *   with validateHTTPRedirect's checks; `mirror_percent` is mirrorPercent under its proto name
 *   (protojson reads both); fault `abort.http2Error` and `delay.exponentialDelay` are refused as
 *   validateHTTPFaultInjection refuses them; tcp `match.sourceSubnet` is read by no istiod code:
 *   a warning.
 * - RequestAuthentication `jwks_uri` is jwksUri under its proto name; `presence: REQUIRED` is read
 *   by no istiod code: a warning.
 * - WorkloadGroup probe: `grpc` is refused (istiod's validateReadinessProbe has no case for it),
 *   httpGet `httpHeaders` names checked (ValidateProbeHeaderName).
 * - Gateway `tlsCertificates[].caCertificates` is not applied by istiod (ApplyToCommonTLSContext
 *   uses the server's caCertificates): a warning.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import { loadText } from '../inputs/helpers.js';
import { compileMesh, knownRoutes, knownVirtualService } from './scope/scope-mesh.js';
import { compileYaml, pod, service, sidecarNode, virtualInbound } from './security/mesh.js';

type Json = Record<string, unknown>;

const vs = knownVirtualService;

/** The routes of known's virtual host on port 80 as served to a sidecar, and the non-info diagnostics. */
function routes(...docs: string[]): { routes: Json[]; diagnostics: string[] } {
  const result = compileMesh(...docs);
  return {
    routes: knownRoutes(result),
    diagnostics: result.diagnostics.filter((d) => d.severity !== 'info').map(brief),
  };
}

const brief = (d: Diagnostic) => `${d.severity} ${d.code} ${d.field ?? ''}`;

test('redirect prefixRewrite: the redirect replaces the matched prefix (prefix_rewrite, no path_redirect)', () => {
  const { routes: out, diagnostics } = routes(
    vs(`  - match: [{uri: {prefix: /old}}]
    redirect: {prefixRewrite: /new, authority: other.example}
  - route: [{destination: {host: known, port: {number: 80}}}]`),
  );
  assert.deepEqual(diagnostics, []);
  const redirect = out[0]?.redirect as Json;
  assert.equal(redirect.prefix_rewrite, '/new');
  assert.equal(redirect.path_redirect, undefined);
  assert.equal(redirect.host_redirect, 'other.example');
});

test('redirect prefixRewrite: refused with uri, or with a URI match that is not a prefix (validateHTTPRedirect)', () => {
  const both = loadText(vs(`  - redirect: {prefixRewrite: /new, uri: /x}`));
  assert.deepEqual(both.diagnostics.map(brief), ['error invalid-field spec.http[0].redirect']);
  assert.match(both.diagnostics[0]!.message, /may only specify one of uri or prefix_rewrite/);
  assert.equal(both.virtualServices.length, 0);
  const exact = loadText(
    vs(`  - match: [{uri: {prefix: /a}}, {uri: {exact: /b}}]
    redirect: {prefixRewrite: /new}`),
  );
  assert.deepEqual(exact.diagnostics.map(brief), ['error invalid-field spec.http[0].redirect.prefixRewrite']);
  // A match on something else than the URI does not count.
  const headersOnly = loadText(
    vs(`  - match: [{uri: {prefix: /a}}, {headers: {x: {exact: y}}}]
    redirect: {prefixRewrite: /new}`),
  );
  assert.deepEqual(headersOnly.diagnostics.map(brief), []);
});

test('mirror_percent is mirrorPercent: the same mirror fraction is served; both set is refused', () => {
  const mirrorWith = (field: string) =>
    routes(
      vs(`  - route: [{destination: {host: known, port: {number: 80}}}]
    mirror: {host: alt-known, port: {number: 80}}${field ? `\n    ${field}` : ''}`),
    );
  const proto = mirrorWith('mirror_percent: 30');
  assert.deepEqual(proto.diagnostics, []);
  const policies = (r: { routes: Json[] }) => (r.routes[0]?.route as Json).request_mirror_policies;
  assert.deepEqual(policies(proto), policies(mirrorWith('mirrorPercent: 30')));
  assert.notDeepEqual(policies(proto), policies(mirrorWith('')));
  const both = loadText(
    vs(`  - route: [{destination: {host: known}}]
    mirror: {host: alt-known}
    mirrorPercent: 30
    mirror_percent: 30`),
  );
  assert.deepEqual(both.diagnostics.map(brief), ['error invalid-field spec.http[0].mirror_percent']);
});

test('fault abort.http2Error and delay.exponentialDelay are refused, as istiod refuses them', () => {
  const abort = loadText(
    vs(`  - route: [{destination: {host: known}}]
    fault: {abort: {http2Error: REFUSED_STREAM, percentage: {value: 10}}}`),
  );
  assert.deepEqual(abort.diagnostics.map(brief), ['error invalid-field spec.http[0].fault.abort.http2Error']);
  assert.match(abort.diagnostics[0]!.message, /HTTP\/2 abort fault injection not supported yet/);
  assert.equal(abort.virtualServices.length, 0);
  const delay = loadText(
    vs(`  - route: [{destination: {host: known}}]
    fault: {delay: {exponentialDelay: 1s}}`),
  );
  assert.deepEqual(delay.diagnostics.map(brief), ['error invalid-field spec.http[0].fault.delay.exponentialDelay']);
  assert.match(delay.diagnostics[0]!.message, /exponentialDelay not supported yet/);
  // A fixed delay alone is still applied.
  const fixed = loadText(
    vs(`  - route: [{destination: {host: known}}]
    fault: {delay: {fixedDelay: 1s}}`),
  );
  assert.deepEqual(fixed.diagnostics.map(brief), []);
  assert.equal(fixed.virtualServices.length, 1);
});

test('tcp match sourceSubnet: kept with a warning that it is not applied (istiod neither)', () => {
  const inputs = loadText(`apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: db, namespace: default}
spec:
  hosts: [db]
  tcp:
  - match: [{port: 5432, sourceSubnet: 10.0.0.0/8}]
    route: [{destination: {host: db}}]`);
  assert.deepEqual(inputs.diagnostics.map(brief), ['warning unsupported-field spec.tcp[0].match[0].sourceSubnet']);
  assert.equal(inputs.virtualServices[0]?.spec.tcp?.[0]?.match?.[0]?.port, 5432);
});

const FOO = { app: 'foo' };
const FOO_IP = '10.244.0.50';
const ra = (rule: string) => `apiVersion: security.istio.io/v1
kind: RequestAuthentication
metadata: { name: jwt, namespace: default }
spec: { jwtRules: [${rule}] }`;

/** The jwt_authn filter's providers a sidecar of foo is served. */
function jwtProviders(rule: string): Json {
  const jwksServer = service('jwt-server', { app: 'jwt-server' }, [{ port: 8000, name: 'http' }], 'foo');
  const result = compileYaml(
    pod('foo', FOO_IP, FOO),
    service('foo', FOO, [{ port: 8000, name: 'http' }]),
    jwksServer,
    ra(rule),
  );
  const listener = virtualInbound(result, sidecarNode('foo', FOO_IP, FOO));
  const chain = (listener.filter_chains as Json[]).find((c) => c.name === '0.0.0.0_8000') as Json;
  const filters = ((chain.filters as Json[])[0]?.typed_config as Json).http_filters as Json[];
  const jwt = filters.find((f) => f.name === 'envoy.filters.http.jwt_authn');
  assert.ok(jwt, 'a jwt_authn filter');
  return (jwt.typed_config as Json).providers as Json;
}

test('RequestAuthentication jwks_uri is jwksUri: the same remote JWKS provider is served; both set is refused', () => {
  const uri = 'http://jwt-server.foo.svc.cluster.local:8000/jwks';
  const proto = jwtProviders(`{ issuer: https://secret.foo.com, jwks_uri: "${uri}" }`);
  assert.deepEqual(proto, jwtProviders(`{ issuer: https://secret.foo.com, jwksUri: "${uri}" }`));
  assert.equal(((proto['origins-0'] as Json).remote_jwks as { http_uri: Json }).http_uri.uri, uri);
  const both = loadText(ra(`{ issuer: https://secret.foo.com, jwks_uri: "${uri}", jwksUri: "${uri}" }`));
  assert.deepEqual(both.diagnostics.map(brief), ['error invalid-field spec.jwtRules[0].jwks_uri']);
  const bad = loadText(ra('{ issuer: https://secret.foo.com, jwks_uri: "ftp://x/jwks" }'));
  assert.deepEqual(bad.diagnostics.map(brief), ['error invalid-field spec.jwtRules[0].jwks_uri']);
});

test('RequestAuthentication presence: REQUIRED warns it is not applied, OPTIONAL is what is applied, others refused', () => {
  const presence = (value: string) =>
    loadText(ra(`{ issuer: https://secret.foo.com, jwks: jwks-inline-data, presence: ${value} }`)).diagnostics.map(
      brief,
    );
  assert.deepEqual(presence('REQUIRED'), ['warning unsupported-field spec.jwtRules[0].presence']);
  assert.deepEqual(presence('OPTIONAL'), []);
  assert.deepEqual(presence('MANDATORY'), ['error invalid-field spec.jwtRules[0].presence']);
  // A REQUIRED rule still serves the same "token or none" requirement as without it (istiod's).
  const required = jwtProviders('{ issuer: https://secret.foo.com, jwks: jwks-inline-data, presence: REQUIRED }');
  assert.deepEqual(required, jwtProviders('{ issuer: https://secret.foo.com, jwks: jwks-inline-data }'));
});

const wg = (probe: string) => `apiVersion: networking.istio.io/v1
kind: WorkloadGroup
metadata: { name: vm, namespace: default }
spec:
  template: { serviceAccount: vm }
  probe: ${probe}`;

test('WorkloadGroup probe: grpc is refused, httpGet httpHeaders names are checked (validateReadinessProbe)', () => {
  const grpc = loadText(wg('{ grpc: { port: 8080, service: health } }'));
  assert.deepEqual(grpc.diagnostics.map(brief), ['error invalid-field spec.probe.grpc']);
  assert.equal(grpc.workloadGroups.length, 0);
  const headers = (name: string) =>
    loadText(wg(`{ httpGet: { port: 8080, path: /ready, httpHeaders: [{ name: "${name}", value: v }] } }`));
  assert.deepEqual(headers('X-Ready').diagnostics.map(brief), []);
  assert.equal(headers('X-Ready').workloadGroups.length, 1);
  assert.deepEqual(headers('x_ready').diagnostics.map(brief), [
    'error invalid-field spec.probe.httpGet.httpHeaders[0].name',
  ]);
  assert.deepEqual(headers('').diagnostics.map(brief), ['error missing-field spec.probe.httpGet.httpHeaders[0].name']);
  const unknown = loadText(wg('{ tcpSocket: { port: 8080, timeout: 1 } }'));
  assert.deepEqual(unknown.diagnostics.map(brief), ['warning unknown-field spec.probe.tcpSocket.timeout']);
});

test("Gateway tlsCertificates[].caCertificates: a warning that it is not applied (the server's caCertificates is)", () => {
  const gw = (cert: string) =>
    loadText(`apiVersion: networking.istio.io/v1
kind: Gateway
metadata: { name: gw, namespace: default }
spec:
  selector: { istio: ingressgateway }
  servers:
  - port: { number: 443, name: https, protocol: HTTPS }
    hosts: [a.example.com]
    tls:
      mode: SIMPLE
      tlsCertificates: [{ serverCertificate: /etc/cert.pem, privateKey: /etc/key.pem${cert} }]`);
  assert.deepEqual(gw('').diagnostics.map(brief), []);
  const withCa = gw(', caCertificates: /etc/ca.pem');
  assert.deepEqual(withCa.diagnostics.map(brief), [
    'warning unsupported-field spec.servers[0].tls.tlsCertificates[0].caCertificates',
  ]);
  assert.equal(withCa.gateways.length, 1);
});
