/**
 * HTTPRoute cases ported from kubernetes-sigs/gateway-api's conformance suite
 * (conformance/tests/httproute-*.yaml and *.go): the manifests restated, and the expected
 * request → backend (or status) outcomes checked by walking the gateway pod's served config with
 * `explain` (listener → route config → virtual host → route → cluster).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  compileConformance,
  gatewayPod,
  INFRA,
  outcome,
  routeCondition,
  send,
  statusOf,
  WEB,
  type Request,
} from './conformance-harness.js';
import type { GatewayStatus, RouteStatus } from '../../../src/model/object-status.js';

const route = (name: string, ns: string, spec: string) => `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${ns}}
spec:
${spec
  .trim()
  .split('\n')
  .map((l) => `  ${l}`)
  .join('\n')}
`;

function expectAll(
  result: ReturnType<typeof compileConformance>,
  gateway: string,
  cases: readonly [Request, string][],
): void {
  for (const [req, want] of cases) {
    const got = outcome(send(result, gateway, req));
    assert.equal(got, want, `${req.method ?? 'GET'} ${req.host}${req.path} ${JSON.stringify(req.headers ?? {})}`);
  }
}

test('HTTPRouteHostnameIntersection: route hostnames ∩ listener hostnames', () => {
  const gw = `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: httproute-hostname-intersection, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners:
  - {name: listener-1, port: 80, protocol: HTTP, hostname: very.specific.com}
  - {name: listener-2, port: 80, protocol: HTTP, hostname: "*.wildcard.io"}
  - {name: listener-3, port: 80, protocol: HTTP, hostname: "*.anotherwildcard.io"}
${gatewayPod('httproute-hostname-intersection', INFRA, 10)}`;
  const parent = `parentRefs: [{name: httproute-hostname-intersection}]`;
  const rule = (prefix: string, backend: string) =>
    `rules: [{matches: [{path: {type: PathPrefix, value: ${prefix}}}], backendRefs: [{name: ${backend}, port: 8080}]}]`;
  const result = compileConformance(
    gw,
    route(
      'specific-host-matches-listener-specific-host',
      INFRA,
      `${parent}\nhostnames: [non.matching.com, "*.nonmatchingwildcard.io", very.specific.com]\n${rule('/s1', 'infra-backend-v1')}`,
    ),
    route(
      'specific-host-matches-listener-wildcard-host',
      INFRA,
      `${parent}\nhostnames: [non.matching.com, wildcard.io, foo.wildcard.io, bar.wildcard.io, foo.bar.wildcard.io]\n${rule('/s2', 'infra-backend-v2')}`,
    ),
    route(
      'wildcard-host-matches-listener-specific-host',
      INFRA,
      `${parent}\nhostnames: [non.matching.com, "*.specific.com"]\n${rule('/s3', 'infra-backend-v3')}`,
    ),
    route(
      'wildcard-host-matches-listener-wildcard-host',
      INFRA,
      `${parent}\nhostnames: ["*.anotherwildcard.io"]\n${rule('/s4', 'infra-backend-v1')}`,
    ),
    route(
      'no-intersecting-hosts',
      INFRA,
      `${parent}\nhostnames: [specific.but.wrong.com, wildcard.io]\n${rule('/s5', 'infra-backend-v2')}`,
    ),
  );
  const gwName = 'httproute-hostname-intersection';
  const node = (req: Request) => outcome(send(result, gwName, req));
  const cases: [Request, string][] = [
    [{ host: 'very.specific.com', path: '/s1' }, 'infra-backend-v1'],
    // Not ported: `very.specific.com:1234` (a Host with a port) — gateway virtual hosts list the bare
    // host only, so Envoy answers 404 (see the README's conformance table).
    [{ host: 'non.matching.com', path: '/s1' }, '404'],
    [{ host: 'foo.nonmatchingwildcard.io', path: '/s1' }, '404'],
    [{ host: 'foo.wildcard.io', path: '/s1' }, '404'],
    [{ host: 'very.specific.com', path: '/non-matching-prefix' }, '404'],
    [{ host: 'foo.wildcard.io', path: '/s2' }, 'infra-backend-v2'],
    [{ host: 'bar.wildcard.io', path: '/s2' }, 'infra-backend-v2'],
    [{ host: 'foo.bar.wildcard.io', path: '/s2' }, 'infra-backend-v2'],
    [{ host: 'non.matching.com', path: '/s2' }, '404'],
    [{ host: 'wildcard.io', path: '/s2' }, '404'],
    [{ host: 'very.specific.com', path: '/s2' }, '404'],
    [{ host: 'very.specific.com', path: '/s3' }, 'infra-backend-v3'],
    [{ host: 'foo.specific.com', path: '/s3' }, '404'],
    [{ host: 'foo.wildcard.io', path: '/s3' }, '404'],
    [{ host: 'foo.anotherwildcard.io', path: '/s4' }, 'infra-backend-v1'],
    [{ host: 'bar.anotherwildcard.io', path: '/s4' }, 'infra-backend-v1'],
    [{ host: 'foo.bar.anotherwildcard.io', path: '/s4' }, 'infra-backend-v1'],
    [{ host: 'anotherwildcard.io', path: '/s4' }, '404'],
    [{ host: 'specific.but.wrong.com', path: '/s5' }, '404'],
    [{ host: 'wildcard.io', path: '/s5' }, '404'],
  ];
  for (const [req, want] of cases) assert.equal(node(req), want, `${req.host}${req.path}`);
  assert.equal(
    routeCondition(result, 'HTTPRoute', INFRA, 'no-intersecting-hosts', 'Accepted'),
    'Accepted=False (NoMatchingListenerHostname)',
  );
  assert.equal(
    routeCondition(result, 'HTTPRoute', INFRA, 'specific-host-matches-listener-specific-host', 'Accepted'),
    'Accepted=True (Accepted)',
  );
});

test('HTTPRouteMatching: path prefixes and header matches ORed within a rule', () => {
  const result = compileConformance(
    route(
      'matching',
      INFRA,
      `parentRefs: [{name: same-namespace}]
rules:
- matches: [{path: {type: PathPrefix, value: /}}, {headers: [{name: version, value: one}]}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /v2}}, {headers: [{name: version, value: two}]}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]`,
    ),
  );
  expectAll(result, 'same-namespace', [
    [{ host: 'example.com', path: '/' }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/example' }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/', headers: { version: 'one' } }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/v2' }, 'infra-backend-v2'],
    [{ host: 'example.com', path: '/v2/example' }, 'infra-backend-v2'],
    [{ host: 'example.com', path: '/', headers: { version: 'two' } }, 'infra-backend-v2'],
    // Path-separated prefixes: /v2example is not under /v2.
    [{ host: 'example.com', path: '/v2example' }, 'infra-backend-v1'],
  ]);
});

test('HTTPRouteHeaderMatching: exact header values, AND within a match, OR across matches', () => {
  const result = compileConformance(
    route(
      'header-matching',
      INFRA,
      `parentRefs: [{name: same-namespace}]
rules:
- matches: [{headers: [{name: version, value: one}]}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{headers: [{name: version, value: two}]}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]
- matches: [{headers: [{name: version, value: two}, {name: color, value: orange}]}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{headers: [{name: color, value: blue}]}, {headers: [{name: color, value: green}]}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{headers: [{name: color, value: red}]}, {headers: [{name: color, value: yellow}]}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]`,
    ),
  );
  expectAll(result, 'same-namespace', [
    [{ host: 'example.com', path: '/', headers: { version: 'one' } }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/', headers: { version: 'two' } }, 'infra-backend-v2'],
    [{ host: 'example.com', path: '/', headers: { version: 'two', color: 'orange' } }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/', headers: { color: 'blue' } }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/', headers: { color: 'green' } }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/', headers: { color: 'red' } }, 'infra-backend-v2'],
    [{ host: 'example.com', path: '/', headers: { color: 'yellow' } }, 'infra-backend-v2'],
    [{ host: 'example.com', path: '/', headers: { version: 'three' } }, '404'],
    [{ host: 'example.com', path: '/', headers: { color: 'purple' } }, '404'],
  ]);
});

test('HTTPRouteMethodMatching: methods alone, with paths and headers, and precedence (path before method before headers)', () => {
  const result = compileConformance(
    route(
      'method-matching',
      INFRA,
      `parentRefs: [{name: same-namespace}]
rules:
- matches: [{method: POST}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{method: GET}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /path1}, method: GET}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{headers: [{name: version, value: one}], method: PUT}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /path2}, headers: [{name: version, value: two}], method: POST}]
  backendRefs: [{name: infra-backend-v3, port: 8080}]
- matches:
  - {path: {type: PathPrefix, value: /path3}, method: PATCH}
  - {path: {type: PathPrefix, value: /path4}, headers: [{name: version, value: three}], method: DELETE}
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /path5}}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{method: PATCH}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]
- matches: [{headers: [{name: version, value: four}]}]
  backendRefs: [{name: infra-backend-v3, port: 8080}]`,
    ),
  );
  expectAll(result, 'same-namespace', [
    [{ host: 'example.com', path: '/', method: 'POST' }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/', method: 'GET' }, 'infra-backend-v2'],
    [{ host: 'example.com', path: '/', method: 'HEAD' }, '404'],
    [{ host: 'example.com', path: '/path1', method: 'GET' }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/', method: 'PUT', headers: { version: 'one' } }, 'infra-backend-v2'],
    [{ host: 'example.com', path: '/path2', method: 'POST', headers: { version: 'two' } }, 'infra-backend-v3'],
    [{ host: 'example.com', path: '/path3', method: 'PATCH' }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/path4', method: 'DELETE', headers: { version: 'three' } }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/', method: 'PUT' }, '404'],
    [{ host: 'example.com', path: '/path4', method: 'DELETE' }, '404'],
    [{ host: 'example.com', path: '/path5', method: 'PATCH' }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/', method: 'PATCH', headers: { version: 'four' } }, 'infra-backend-v2'],
  ]);
});

test('HTTPRouteQueryParamMatching: exact query values, combined with paths and headers', () => {
  const result = compileConformance(
    route(
      'query-param-matching',
      INFRA,
      `parentRefs: [{name: same-namespace}]
rules:
- matches: [{queryParams: [{name: animal, value: whale}]}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{queryParams: [{name: animal, value: dolphin}]}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]
- matches: [{queryParams: [{name: animal, value: dolphin}, {name: color, value: blue}]}, {queryParams: [{name: ANIMAL, value: Whale}]}]
  backendRefs: [{name: infra-backend-v3, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /path1}, queryParams: [{name: animal, value: whale}]}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{headers: [{name: version, value: one}], queryParams: [{name: animal, value: whale}]}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]`,
    ),
  );
  expectAll(result, 'same-namespace', [
    [{ host: 'example.com', path: '/?animal=whale' }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/?animal=dolphin' }, 'infra-backend-v2'],
    [{ host: 'example.com', path: '/?animal=dolphin&color=blue' }, 'infra-backend-v3'],
    [{ host: 'example.com', path: '/?ANIMAL=Whale' }, 'infra-backend-v3'],
    [{ host: 'example.com', path: '/path1?animal=whale' }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/?animal=whale', headers: { version: 'one' } }, 'infra-backend-v2'],
    [{ host: 'example.com', path: '/?animal=cat' }, '404'],
    [{ host: 'example.com', path: '/' }, '404'],
  ]);
});

test('HTTPRouteExactPathMatching and path precedence: Exact before the longest PathPrefix', () => {
  const result = compileConformance(
    route(
      'exact-path-matching',
      INFRA,
      `parentRefs: [{name: same-namespace}]
rules:
- matches: [{path: {type: PathPrefix, value: /match}}]
  backendRefs: [{name: infra-backend-v3, port: 8080}]
- matches: [{path: {type: Exact, value: /one}}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{path: {type: Exact, value: /match/exact}}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /match/prefix}}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]`,
    ),
  );
  expectAll(result, 'same-namespace', [
    [{ host: 'example.com', path: '/one' }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/one/example' }, '404'],
    [{ host: 'example.com', path: '/match/exact' }, 'infra-backend-v2'],
    [{ host: 'example.com', path: '/match/exact/x' }, 'infra-backend-v3'],
    [{ host: 'example.com', path: '/match/prefix/x' }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/match' }, 'infra-backend-v3'],
  ]);
});

test('HTTPRouteMatchingAcrossRoutes: precedence across routes of one hostname (older route first)', () => {
  const result = compileConformance(
    route(
      'matching-part1',
      INFRA,
      `parentRefs: [{name: same-namespace}]
hostnames: [example.com, example.net]
rules:
- matches: [{path: {type: PathPrefix, value: /}}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /v2}}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]`,
    ),
    route(
      'matching-part2',
      INFRA,
      `parentRefs: [{name: same-namespace}]
hostnames: [example.com]
rules:
- matches: [{headers: [{name: version, value: two}]}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]`,
    ),
  );
  expectAll(result, 'same-namespace', [
    [{ host: 'example.com', path: '/' }, 'infra-backend-v1'],
    [{ host: 'example.net', path: '/' }, 'infra-backend-v1'],
    [{ host: 'example.com', path: '/v2' }, 'infra-backend-v2'],
    // The header match of part2 beats part1's `/` (same path, more headers).
    [{ host: 'example.com', path: '/', headers: { version: 'two' } }, 'infra-backend-v2'],
    [{ host: 'example.net', path: '/', headers: { version: 'two' } }, 'infra-backend-v1'],
  ]);
});

test('HTTPRouteWeight: backends share traffic by weight; a zero weight gets none', () => {
  const result = compileConformance(
    route(
      'weighted-backends',
      INFRA,
      `parentRefs: [{name: same-namespace}]
rules:
- backendRefs:
  - {name: infra-backend-v1, port: 8080, weight: 70}
  - {name: infra-backend-v2, port: 8080, weight: 30}
  - {name: infra-backend-v3, port: 8080, weight: 0}`,
    ),
  );
  const e = send(result, 'same-namespace', { host: 'example.com', path: '/' }).explanation;
  assert.equal(e.outcome, 'routed', e.summary);
  assert.deepEqual(
    e.clusters.map((c) => [c.name, c.weight]),
    [
      ['outbound|8080||infra-backend-v1.gateway-conformance-infra.svc.cluster.local', 70],
      ['outbound|8080||infra-backend-v2.gateway-conformance-infra.svc.cluster.local', 30],
    ],
  );
});

test('HTTPRouteRedirect{Path,Port,Scheme,HostAndStatus}: redirect actions as Envoy answers them', () => {
  const result = compileConformance(
    route(
      'redirect',
      INFRA,
      `parentRefs: [{name: same-namespace}]
rules:
- matches: [{path: {type: PathPrefix, value: /original-prefix}}]
  filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /replacement-prefix}}}]
- matches: [{path: {type: PathPrefix, value: /full}}]
  filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /full-path-replacement}}}]
- matches: [{path: {type: PathPrefix, value: /port}}]
  filters: [{type: RequestRedirect, requestRedirect: {port: 8083}}]
- matches: [{path: {type: PathPrefix, value: /scheme}}]
  filters: [{type: RequestRedirect, requestRedirect: {scheme: https}}]
- matches: [{path: {type: PathPrefix, value: /hostname-redirect}}]
  filters: [{type: RequestRedirect, requestRedirect: {hostname: example.org, statusCode: 301}}]`,
    ),
  );
  const redirect = (path: string) => {
    const s = send(result, 'same-namespace', { host: 'example.com', path });
    assert.equal(s.explanation.outcome, 'redirect', s.explanation.summary);
    return s.route?.redirect as Record<string, unknown>;
  };
  // 302 (FOUND) unless the filter says otherwise, as the spec defaults statusCode.
  assert.deepEqual(redirect('/original-prefix/lemon'), {
    prefix_rewrite: '/replacement-prefix',
    response_code: 'FOUND',
  });
  assert.deepEqual(redirect('/full/path/original'), {
    path_redirect: '/full-path-replacement',
    response_code: 'FOUND',
  });
  // The request's port 80 with scheme http is the default: left out; an explicit port is kept.
  assert.deepEqual(redirect('/port'), { port_redirect: 8083, response_code: 'FOUND' });
  assert.deepEqual(redirect('/scheme'), { scheme_redirect: 'https', response_code: 'FOUND' });
  // MOVED_PERMANENTLY (301) is the enum's default: config_dump JSON leaves it out.
  assert.deepEqual(redirect('/hostname-redirect'), { host_redirect: 'example.org' });
  assert.equal(
    send(result, 'same-namespace', { host: 'example.com', path: '/hostname-redirect' }).explanation.status,
    301,
  );
  assert.equal(send(result, 'same-namespace', { host: 'example.com', path: '/port' }).explanation.status, 302);
});

test('HTTPRouteRewriteHost and HTTPRouteRewritePath: prefix replacement, full path, prefix removal', () => {
  const result = compileConformance(
    route(
      'rewrite',
      INFRA,
      `parentRefs: [{name: same-namespace}]
rules:
- matches: [{path: {type: PathPrefix, value: /prefix/one}}]
  filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /one}}}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /strip-prefix}}]
  filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /full/one}}]
  filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplaceFullPath, replaceFullPath: /one}}}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /host}}]
  filters: [{type: URLRewrite, urlRewrite: {hostname: one.example.org}}]
  backendRefs: [{name: infra-backend-v2, port: 8080}]`,
    ),
  );
  const action = (path: string) => send(result, 'same-namespace', { host: 'rewrite.example', path }).route?.route;
  assert.equal(action('/prefix/one/two')?.prefix_rewrite, '/one');
  assert.deepEqual(action('/strip-prefix/three')?.regex_rewrite, {
    pattern: { regex: '^/strip-prefix(/?)(.*)' },
    substitution: '/\\2',
  });
  assert.deepEqual(action('/full/one/two')?.regex_rewrite, { pattern: { regex: '/.*' }, substitution: '/one' });
  assert.equal(action('/host')?.host_rewrite_literal, 'one.example.org');
});

test('HTTPRouteRequestHeaderModifier and HTTPRouteResponseHeaderModifier: set, add, remove', () => {
  const result = compileConformance(
    route(
      'request-header-modifier',
      INFRA,
      `parentRefs: [{name: same-namespace}]
rules:
- matches: [{path: {type: PathPrefix, value: /set}}]
  filters:
  - type: RequestHeaderModifier
    requestHeaderModifier: {set: [{name: X-Header-Set, value: set-overwrites-values}]}
  backendRefs: [{name: infra-backend-v1, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /add}}]
  filters:
  - type: RequestHeaderModifier
    requestHeaderModifier: {add: [{name: X-Header-Add, value: add-appends-values}], remove: [X-Header-Remove]}
  - type: ResponseHeaderModifier
    responseHeaderModifier: {set: [{name: X-Header-Set, value: resp}]}
  backendRefs: [{name: infra-backend-v1, port: 8080}]`,
    ),
  );
  const set = send(result, 'same-namespace', { host: 'example.com', path: '/set' }).route;
  assert.deepEqual(set?.request_headers_to_add, [
    { header: { key: 'x-header-set', value: 'set-overwrites-values' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
  ]);
  const add = send(result, 'same-namespace', { host: 'example.com', path: '/add' }).route;
  // APPEND_IF_EXISTS_OR_ADD is the enum's default: config_dump JSON leaves it out.
  assert.deepEqual(add?.request_headers_to_add, [{ header: { key: 'x-header-add', value: 'add-appends-values' } }]);
  assert.deepEqual(add?.request_headers_to_remove, ['X-Header-Remove']);
  assert.deepEqual(add?.response_headers_to_add, [
    { header: { key: 'x-header-set', value: 'resp' }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
  ]);
});

test('HTTPRouteCrossNamespace: a route in a backend namespace on a Gateway that selects it', () => {
  const result = compileConformance(
    route(
      'cross-namespace',
      WEB,
      `parentRefs: [{name: backend-namespaces, namespace: ${INFRA}}]
rules: [{backendRefs: [{name: web-backend, port: 8080}]}]`,
    ),
  );
  assert.equal(outcome(send(result, 'backend-namespaces', { host: 'example.com', path: '/' }, INFRA)), 'web-backend');
  assert.equal(routeCondition(result, 'HTTPRoute', WEB, 'cross-namespace', 'Accepted'), 'Accepted=True (Accepted)');
});

test('HTTPRouteInvalidCrossNamespaceParentRef: a Gateway allowing only its namespace refuses the route', () => {
  const result = compileConformance(
    route(
      'invalid-cross-namespace-parent-ref',
      WEB,
      `parentRefs: [{name: same-namespace, namespace: ${INFRA}}]
rules: [{backendRefs: [{name: web-backend, port: 8080}]}]`,
    ),
  );
  assert.equal(
    routeCondition(result, 'HTTPRoute', WEB, 'invalid-cross-namespace-parent-ref', 'Accepted'),
    'Accepted=False (NotAllowedByListeners)',
  );
  assert.equal(outcome(send(result, 'same-namespace', { host: 'example.com', path: '/' })), '404');
  const gw = statusOf(result, 'Gateway', INFRA, 'same-namespace') as GatewayStatus;
  assert.equal(gw.listeners[0]?.attachedRoutes, 0);
});

const grant = (name: string, toName?: string) => `---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: ${name}, namespace: ${WEB}}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ${INFRA}}]
  to: [{group: "", kind: Service${toName ? `, name: ${toName}` : ''}}]
`;

test('HTTPRouteReferenceGrant / HTTPRouteInvalidCrossNamespaceBackendRef: another namespace’s backend needs a ReferenceGrant; without it 500 and RefNotPermitted', () => {
  const crossRoute = route(
    'reference-grant',
    INFRA,
    `parentRefs: [{name: same-namespace}]
rules: [{backendRefs: [{name: web-backend, namespace: ${WEB}, port: 8080}]}]`,
  );
  const without = compileConformance(crossRoute);
  assert.equal(outcome(send(without, 'same-namespace', { host: 'example.com', path: '/' })), '500');
  assert.equal(
    routeCondition(without, 'HTTPRoute', INFRA, 'reference-grant', 'ResolvedRefs'),
    'ResolvedRefs=False (RefNotPermitted)',
  );
  assert.equal(routeCondition(without, 'HTTPRoute', INFRA, 'reference-grant', 'Accepted'), 'Accepted=True (Accepted)');
  assert.ok(
    without.diagnostics.some(
      (d) => d.code === 'gateway-api-ref-not-permitted' && d.field === 'spec.rules[0].backendRefs[0]',
    ),
  );

  const granted = compileConformance(crossRoute, grant('reference-grant'));
  assert.equal(outcome(send(granted, 'same-namespace', { host: 'example.com', path: '/' })), 'web-backend');
  assert.equal(
    routeCondition(granted, 'HTTPRoute', INFRA, 'reference-grant', 'ResolvedRefs'),
    'ResolvedRefs=True (ResolvedRefs)',
  );

  // HTTPRouteInvalidReferenceGrant: a grant naming another Service allows nothing here.
  const wrongName = compileConformance(crossRoute, grant('reference-grant', 'not-web-backend'));
  assert.equal(outcome(send(wrongName, 'same-namespace', { host: 'example.com', path: '/' })), '500');
});

test('HTTPRouteInvalidNonExistentBackendRef, HTTPRouteInvalidBackendRefUnknownKind: 500 and ResolvedRefs False', () => {
  const result = compileConformance(
    route(
      'nonexistent',
      INFRA,
      `parentRefs: [{name: same-namespace}]
rules:
- matches: [{path: {type: PathPrefix, value: /missing}}]
  backendRefs: [{name: nonexistent-backend, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /kind}}]
  backendRefs: [{group: unknownkind.example.com, kind: NonExistent, name: infra-backend-v1, port: 8080}]
- matches: [{path: {type: PathPrefix, value: /ok}}]
  backendRefs: [{name: infra-backend-v1, port: 8080}]`,
    ),
  );
  expectAll(result, 'same-namespace', [
    [{ host: 'example.com', path: '/missing' }, '500'],
    [{ host: 'example.com', path: '/kind' }, '500'],
    [{ host: 'example.com', path: '/ok' }, 'infra-backend-v1'],
  ]);
  const status = statusOf(result, 'HTTPRoute', INFRA, 'nonexistent');
  const resolved = (status as RouteStatus).parents[0]?.conditions.find((c) => c.type === 'ResolvedRefs');
  assert.equal(resolved?.reason, 'BackendNotFound');
});

test('HTTPRouteInvalidParentRefNotMatchingSectionName / ListenerPort: NoMatchingParent', () => {
  const result = compileConformance(
    route(
      'bad-section',
      INFRA,
      `parentRefs: [{name: same-namespace, sectionName: nope}]\nrules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]`,
    ),
    route(
      'bad-port',
      INFRA,
      `parentRefs: [{name: same-namespace, port: 81}]\nrules: [{backendRefs: [{name: infra-backend-v1, port: 8080}]}]`,
    ),
  );
  assert.equal(
    routeCondition(result, 'HTTPRoute', INFRA, 'bad-section', 'Accepted'),
    'Accepted=False (NoMatchingParent)',
  );
  assert.equal(routeCondition(result, 'HTTPRoute', INFRA, 'bad-port', 'Accepted'), 'Accepted=False (NoMatchingParent)');
  assert.equal(outcome(send(result, 'same-namespace', { host: 'example.com', path: '/' })), '404');
});

test('GatewayHTTPListenerIsolation: a host served by a more specific listener belongs to it only', () => {
  const gw = `---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: http-listener-isolation, namespace: ${INFRA}}
spec:
  gatewayClassName: istio
  listeners:
  - {name: empty-hostname, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
  - {name: wildcard-example-com, port: 80, protocol: HTTP, hostname: "*.example.com", allowedRoutes: {namespaces: {from: All}}}
  - {name: wildcard-foo-example-com, port: 80, protocol: HTTP, hostname: "*.foo.example.com", allowedRoutes: {namespaces: {from: All}}}
  - {name: abc-foo-example-com, port: 80, protocol: HTTP, hostname: abc.foo.example.com, allowedRoutes: {namespaces: {from: All}}}
${gatewayPod('http-listener-isolation', INFRA, 11)}`;
  const attach = (section: string) =>
    route(
      `attaches-to-${section}`,
      INFRA,
      `parentRefs: [{name: http-listener-isolation, sectionName: ${section}}]
rules: [{matches: [{path: {type: PathPrefix, value: /${section}}}], backendRefs: [{name: infra-backend-v1, port: 8080}]}]`,
    );
  const result = compileConformance(
    gw,
    attach('empty-hostname'),
    attach('wildcard-example-com'),
    attach('wildcard-foo-example-com'),
    attach('abc-foo-example-com'),
  );
  const sections = ['empty-hostname', 'wildcard-example-com', 'wildcard-foo-example-com', 'abc-foo-example-com'];
  const owner: Record<string, string> = {
    'bar.com': 'empty-hostname',
    'bar.example.com': 'wildcard-example-com',
    'bar.foo.example.com': 'wildcard-foo-example-com',
    'abc.foo.example.com': 'abc-foo-example-com',
  };
  for (const [host, section] of Object.entries(owner))
    for (const s of sections)
      assert.equal(
        outcome(send(result, 'http-listener-isolation', { host, path: `/${s}` })),
        s === section ? 'infra-backend-v1' : '404',
        `${host}/${s}`,
      );
});
