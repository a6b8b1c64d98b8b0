/**
 * Gateway route configs, restating the cases of istiod's TestGatewayHTTPRouteConfig
 * (pilot/pkg/networking/core/gateway_test.go): which virtual hosts a route config gets, their
 * domains, how many routes each holds, and where require_tls is set.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileGateway, gatewayYaml, INGRESS_NODE } from '../helpers/gateway-sim.js';
import { served } from '../helpers/mesh.js';

/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded config_dump JSON */
type Json = any;

const server = (host: string, port: number, protocol: string, tls = '') =>
  `port: {number: ${port}, name: ${protocol.toLowerCase()}, protocol: ${protocol}}\nhosts: ["${host}"]${tls ? `\ntls: ${tls}` : ''}`;
const GATEWAY = gatewayYaml('gateway', 'default', server('example.org', 80, 'HTTP'));
const REDIRECT = gatewayYaml('gateway-redirect', 'default', server('example.org', 80, 'HTTP', '{httpsRedirect: true}'));

const virtualService = (name: string, host: string, gateways: string[], matchPort?: number) => `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: ${name}, namespace: default}
spec:
  hosts: ["${host}"]
  gateways: ${JSON.stringify(gateways)}
  http:
  - ${matchPort ? `match: [{port: ${matchPort}}]\n    ` : ''}route: [{destination: {host: a, port: {number: 80}}}]
`;
const VS = virtualService('virtual-service', 'example.org', ['gateway', 'gateway-redirect']);
const VS_COPY = virtualService('virtual-service-copy', 'example.org', ['gateway', 'gateway-redirect']);
const VS_WILDCARD = virtualService('virtual-service-wildcard', '*.org', ['gateway', 'gateway-redirect']);

/** virtual host name → [domains, number of routes, require_tls]. */
function vhosts(yaml: string, routeName: string): Record<string, [string[], number, string | undefined]> {
  const rc: Json = served(compileGateway(yaml), INGRESS_NODE).resources.routes.get(routeName);
  assert.ok(rc, `no route config ${routeName}`);
  return Object.fromEntries(
    rc.virtual_hosts.map((vh: Json) => [vh.name, [vh.domains, vh.routes?.length ?? 0, vh.require_tls]]),
  );
}

test('404 when no VirtualService: the blackhole virtual host, no routes', () => {
  assert.deepEqual(vhosts(GATEWAY, 'http.80'), { 'blackhole:80': [['*'], 0, undefined] });
});

test('tls redirect without VirtualServices: a redirecting virtual host for the server host', () => {
  assert.deepEqual(vhosts(REDIRECT, 'http.80'), { 'example.org:80': [['example.org'], 0, 'ALL'] });
});

test('VirtualServices with tls redirect: routes kept, require_tls set', () => {
  assert.deepEqual(vhosts(REDIRECT + VS, 'http.80'), { 'example.org:80': [['example.org'], 1, 'ALL'] });
});

test('merging with tls redirect: two VirtualServices on two Gateways give four routes, in either Gateway order', () => {
  const expected = { 'example.org:80': [['example.org'], 4, 'ALL'] };
  assert.deepEqual(vhosts(REDIRECT + GATEWAY + VS + VS_COPY, 'http.80'), expected);
  assert.deepEqual(vhosts(GATEWAY + REDIRECT + VS + VS_COPY, 'http.80'), expected);
  // Without the copy: two routes, still redirected.
  assert.deepEqual(vhosts(GATEWAY + REDIRECT + VS, 'http.80'), { 'example.org:80': [['example.org'], 2, 'ALL'] });
});

test('duplicate VirtualServices, or one matching by wildcard, merge into one virtual host', () => {
  assert.deepEqual(vhosts(GATEWAY + VS + VS_COPY, 'http.80'), { 'example.org:80': [['example.org'], 2, undefined] });
  assert.deepEqual(vhosts(GATEWAY + VS + VS_WILDCARD, 'http.80'), {
    'example.org:80': [['example.org'], 2, undefined],
  });
});

test('a wildcard VirtualService under a "*" server keeps its wildcard host', () => {
  const all = gatewayYaml('gateway', 'default', server('*', 80, 'HTTP'));
  assert.deepEqual(vhosts(all + VS_WILDCARD, 'http.80'), { '*.org:80': [['*.org'], 1, undefined] });
});

test('a route matching port 443 goes to the HTTPS route config only; the redirecting HTTP host has none', () => {
  const https = gatewayYaml(
    'gateway-https',
    'default',
    server('example.org', 80, 'HTTP', '{httpsRedirect: true}'),
    server('example.org', 443, 'HTTPS', '{mode: SIMPLE, credentialName: cert}'),
  );
  const vs = virtualService('virtual-service-https', 'example.org', ['gateway-https'], 443);
  assert.deepEqual(vhosts(https + vs, 'https.443.https.gateway-https.default'), {
    'example.org:443': [['example.org'], 1, undefined],
  });
  assert.deepEqual(vhosts(https + vs, 'http.80'), { 'example.org:80': [['example.org'], 0, 'ALL'] });
});

test("hosts of different VirtualServices with the same routes are not collapsed; one VirtualService's hosts are", () => {
  const all = gatewayYaml('gateway', 'default', server('*', 80, 'HTTP'));
  const two = `---
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: two-hosts, namespace: default}
spec:
  hosts: [b.example.com, a.example.com]
  gateways: [gateway]
  http: [{route: [{destination: {host: a, port: {number: 80}}}]}]
`;
  assert.deepEqual(vhosts(all + two + virtualService('c', 'c.example.com', ['gateway']), 'http.80'), {
    'a.example.com:80': [['a.example.com', 'b.example.com'], 1, undefined],
    'c.example.com:80': [['c.example.com'], 1, undefined],
  });
});
