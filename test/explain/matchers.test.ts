/**
 * The matchers on the examples of Envoy's own docs: virtual host domain precedence
 * (route_components.proto, VirtualHost.domains), filter chain match order
 * (listener_components.proto, FilterChainMatch; the listener filter-chain-match docs) and route
 * order (first match wins), plus the original-destination hand-off of `use_original_dst`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  firstMatchingRoute,
  matchFilterChain,
  matchListener,
  matchRoute,
  matchVirtualHost,
  type ConnectionView,
  type HttpRequestView,
  type JsonObject,
} from '../../src/explain/index.js';
import { normalizeRequestPath, removeDotSegments } from '../../src/explain/path-normalize.js';

test('domains: exact, then longest suffix wildcard, then longest prefix wildcard, then *', () => {
  const vhs = ['www.foo.com', '*.foo.com', '*-bar.foo.com', 'foo.*', 'foo-*', '*'].map((d) => ({
    name: d,
    domains: [d],
  }));
  const pick = (host: string) => matchVirtualHost(vhs, host)?.domain;
  assert.equal(pick('www.foo.com'), 'www.foo.com');
  assert.equal(pick('baz-bar.foo.com'), '*-bar.foo.com'); // the longer of two suffix wildcards
  assert.equal(pick('-bar.foo.com'), '*.foo.com'); // a wildcard never matches the empty string
  assert.equal(pick('api.foo.com'), '*.foo.com');
  assert.equal(pick('foo.example'), 'foo.*');
  assert.equal(pick('foo-x.org'), 'foo-*');
  assert.equal(pick('foo.com'), 'foo.*'); // *.foo.com needs something before .foo.com
  assert.equal(pick('other.org'), '*');
  // A suffix wildcard beats a prefix wildcard whatever their lengths.
  assert.equal(matchVirtualHost([{ domains: ['foo.bar.*'] }, { domains: ['*.com'] }], 'foo.bar.com')?.domain, '*.com');
  // Without `*` an unknown host matches nothing (Envoy answers 404).
  assert.equal(matchVirtualHost([{ domains: ['a.com'] }], 'b.com'), undefined);
  // Matching is case-insensitive on the domain side too.
  assert.equal(matchVirtualHost([{ domains: ['WWW.Foo.com'] }], 'www.foo.com')?.domain, 'WWW.Foo.com');
});

const conn = (over: Partial<ConnectionView>): ConnectionView => ({
  destinationPort: 443,
  destinationIp: '10.1.2.3',
  transportProtocol: 'tls',
  applicationProtocols: [],
  ...over,
});
const chain = (name: string, filter_chain_match: JsonObject): JsonObject => ({ name, filter_chain_match });
const pickChain = (chains: JsonObject[], c: ConnectionView) => {
  const r = matchFilterChain(chains, c);
  return r.chain?.name;
};

test('filter chains: server names, exact before the longest wildcard, then chains without', () => {
  const chains = [
    chain('exact', { server_names: ['www.example.com'] }),
    chain('wild', { server_names: ['*.example.com'] }),
    chain('wild-com', { server_names: ['*.com'] }),
    chain('any', {}),
  ];
  assert.equal(pickChain(chains, conn({ serverName: 'www.example.com' })), 'exact');
  assert.equal(pickChain(chains, conn({ serverName: 'api.example.com' })), 'wild');
  assert.equal(pickChain(chains, conn({ serverName: 'example.com' })), 'wild-com');
  assert.equal(pickChain(chains, conn({ serverName: 'example.org' })), 'any');
  assert.equal(pickChain(chains, conn({})), 'any');
});

test('filter chains: destination port first, and no going back once a step has chosen', () => {
  const chains = [
    chain('port-443-sni', { destination_port: 443, server_names: ['a.example.com'] }),
    chain('no-port-sni', { server_names: ['b.example.com'] }),
  ];
  // The port step keeps only the 443 chain; its SNI then fails: no chain (the default one takes it),
  // although the other chain's SNI would have matched.
  const r = matchFilterChain(chains, conn({ serverName: 'b.example.com' }));
  assert.equal(r.chain, undefined);
  assert.match(r.why.join('\n'), /server_names: no chain matches b\.example\.com/);
  assert.equal(pickChain(chains, conn({ destinationPort: 8443, serverName: 'b.example.com' })), 'no-port-sni');
});

test('filter chains: the longest destination prefix, then transport protocol before ALPN, then source', () => {
  const cidr = [
    chain('wide', { prefix_ranges: [{ address_prefix: '10.0.0.0', prefix_len: 8 }] }),
    chain('narrow', { prefix_ranges: [{ address_prefix: '10.1.0.0', prefix_len: 16 }] }),
  ];
  assert.equal(pickChain(cidr, conn({ destinationIp: '10.1.2.3' })), 'narrow');
  assert.equal(pickChain(cidr, conn({ destinationIp: '10.2.0.1' })), 'wide');
  assert.equal(pickChain(cidr, conn({ destinationIp: '192.168.0.1' })), undefined);

  const protocols = [
    chain('tls-h2', { transport_protocol: 'tls', application_protocols: ['h2'] }),
    chain('tls', { transport_protocol: 'tls' }),
    chain('raw-http', { transport_protocol: 'raw_buffer', application_protocols: ['http/1.1', 'h2c'] }),
    chain('raw', { transport_protocol: 'raw_buffer' }),
  ];
  assert.equal(pickChain(protocols, conn({ applicationProtocols: ['h2', 'http/1.1'] })), 'tls-h2');
  assert.equal(pickChain(protocols, conn({ applicationProtocols: ['http/1.1'] })), 'tls');
  assert.equal(
    pickChain(protocols, conn({ transportProtocol: 'raw_buffer', applicationProtocols: ['h2c'] })),
    'raw-http',
  );
  assert.equal(pickChain(protocols, conn({ transportProtocol: 'raw_buffer' })), 'raw');

  const sources = [
    chain('local', { source_type: 'SAME_IP_OR_LOOPBACK' }),
    chain('from-net', { source_prefix_ranges: [{ address_prefix: '192.168.0.0', prefix_len: 16 }] }),
    chain('port', { source_ports: [5000] }),
  ];
  assert.equal(pickChain(sources, conn({ sourceIp: '127.0.0.1' })), 'local');
  // source_type EXTERNAL-or-ANY chains go on; then the source prefix is more specific than none.
  assert.equal(pickChain(sources, conn({ sourceIp: '192.168.3.4', sourcePort: 5000 })), 'from-net');
  assert.equal(pickChain(sources, conn({ sourceIp: '172.16.0.1', sourcePort: 5000 })), 'port');
  assert.equal(pickChain(sources, conn({ sourceIp: '172.16.0.1', sourcePort: 6000 })), undefined);
});

const http = (over: Partial<HttpRequestView>): HttpRequestView => ({
  method: 'GET',
  path: '/',
  authority: 'example.com',
  scheme: 'http',
  headers: {},
  ...over,
});

test('routes: first match wins, and each earlier route says why it did not match', () => {
  const routes = [
    { name: 'exact', match: { path: '/login' } },
    { name: 'api', match: { path_separated_prefix: '/api' } },
    { name: 'regex', match: { safe_regex: { regex: '/v[0-9]+/.*' } } },
    { name: 'ci', match: { prefix: '/Static', case_sensitive: false } },
    { name: 'catch-all', match: { prefix: '/' } },
  ];
  const pick = (path: string) => firstMatchingRoute(routes, http({ path }));
  assert.equal(pick('/login').matched?.route.name, 'exact');
  assert.equal(pick('/login/x').matched?.route.name, 'catch-all'); // path is exact
  assert.equal(pick('/api').matched?.route.name, 'api');
  assert.equal(pick('/api/users?x=1').matched?.route.name, 'api'); // the query string is not part of the path
  assert.equal(pick('/apix').matched?.route.name, 'catch-all'); // path-separated: /api or /api/…
  assert.equal(pick('/v2/items').matched?.route.name, 'regex');
  assert.equal(pick('/xv2/items').matched?.route.name, 'catch-all'); // a regex must match the whole path
  assert.equal(pick('/static/app.js').matched?.route.name, 'ci');
  const skipped = pick('/static/app.js').skipped;
  assert.deepEqual(
    skipped.map((s) => s.route.name),
    ['exact', 'api', 'regex'],
  );
  assert.match(skipped[2]?.reason ?? '', /path regex "\/v\[0-9\]\+\/\.\*" does not match "\/static\/app\.js"/);
  // With every path specifier failing and no catch-all, nothing matches (Envoy: 404).
  assert.equal(firstMatchingRoute(routes.slice(0, 2), http({ path: '/x' })).matched, undefined);
});

test('routes: header matchers (exact, regex, present, range, invert, method) and query parameters', () => {
  const m = (match: JsonObject, req: Partial<HttpRequestView>) =>
    matchRoute({ match: { prefix: '/', ...match } }, http(req)).matched;
  const exact = { headers: [{ name: 'end-user', string_match: { exact: 'jason' } }] };
  assert.equal(m(exact, { headers: { 'end-user': 'jason' } }), true);
  assert.equal(m(exact, { headers: { 'end-user': 'Jason' } }), false);
  assert.equal(m(exact, {}), false);
  const inverted = { headers: [{ name: 'end-user', string_match: { exact: 'jason' }, invert_match: true }] };
  assert.equal(m(inverted, { headers: { 'end-user': 'mike' } }), true);
  assert.equal(m(inverted, {}), true); // a missing header does not match, inverted: matches
  assert.equal(m({ headers: [{ name: 'x-canary', present_match: true }] }, { headers: { 'x-canary': '' } }), true);
  assert.equal(m({ headers: [{ name: 'x-canary', present_match: false }] }, { headers: { 'x-canary': '1' } }), false);
  const range = { headers: [{ name: 'x-n', range_match: { start: '10', end: '20' } }] };
  assert.equal(m(range, { headers: { 'x-n': '10' } }), true);
  assert.equal(m(range, { headers: { 'x-n': '20' } }), false); // end is exclusive
  const method = { headers: [{ name: ':method', string_match: { exact: 'POST' } }] };
  assert.equal(m(method, { method: 'POST' }), true);
  assert.equal(m(method, { method: 'GET' }), false);
  const regex = { headers: [{ name: 'user-agent', string_match: { safe_regex: { regex: '.*Firefox.*' } } }] };
  assert.equal(m(regex, { headers: { 'user-agent': 'Mozilla/5.0 Firefox/120' } }), true);
  const query = { query_parameters: [{ name: 'debug', string_match: { exact: 'true' } }] };
  assert.equal(m(query, { path: '/x?debug=true' }), true);
  assert.equal(m(query, { path: '/x?debug=false' }), false);
  assert.equal(m({ query_parameters: [{ name: 'debug', present_match: true }] }, { path: '/x?debug' }), true);
  // A runtime fraction cannot be decided offline: assumed to hold, and said so.
  const runtime = matchRoute(
    { match: { prefix: '/', runtime_fraction: { default_value: { numerator: 25 }, runtime_key: 'canary' } } },
    http({}),
  );
  assert.ok(runtime.matched);
  assert.match(
    runtime.matched ? runtime.notes.join() : '',
    /runtime fraction 25% \(runtime key canary\) assumed to hold/,
  );
});

const listener = (name: string, address: string, port: number, extra: JsonObject = {}): JsonObject => ({
  name,
  address: { socket_address: { address, port_value: port } },
  ...extra,
});

test('listeners: use_original_dst hands off to exactly IP:port, else the wildcard address, else keeps it', () => {
  const ls = [
    listener('virtualOutbound', '0.0.0.0', 15001, { use_original_dst: true }),
    listener('virtualInbound', '0.0.0.0', 15006),
    listener('10.96.0.5_3306', '10.96.0.5', 3306, { bind_to_port: false }),
    listener('0.0.0.0_8080', '0.0.0.0', 8080, { bind_to_port: false }),
  ];
  const out = (ip: string | undefined, port: number) =>
    matchListener(ls, { direction: 'outbound', host: 'h', port, ...(ip ? { destinationIp: ip } : {}) }).listener?.name;
  assert.equal(out('10.96.0.5', 3306), '10.96.0.5_3306');
  assert.equal(out('10.96.0.9', 3306), 'virtualOutbound');
  assert.equal(out('10.96.0.9', 8080), '0.0.0.0_8080');
  assert.equal(out(undefined, 8080), '0.0.0.0_8080');
  assert.equal(
    matchListener(ls, { direction: 'inbound', host: 'h', port: 8080, destinationIp: '10.244.0.1' }).listener?.name,
    'virtualInbound',
  );
  // A gateway has no capture listener: the one bound to the port takes the connection.
  const gw = [listener('0.0.0.0_8080', '0.0.0.0', 8080)];
  assert.equal(matchListener(gw, { direction: 'outbound', host: 'h', port: 8080 }).listener?.name, '0.0.0.0_8080');
  assert.equal(matchListener(gw, { direction: 'outbound', host: 'h', port: 9090 }).listener, undefined);
  // Proxyless gRPC asks for the api_listener named host:port.
  const grpc = [{ name: 'reviews.default.svc.cluster.local:9080', api_listener: { api_listener: {} } }];
  assert.equal(
    matchListener(grpc, { direction: 'outbound', host: 'reviews.default.svc.cluster.local', port: 9080 }).listener
      ?.name,
    'reviews.default.svc.cluster.local:9080',
  );
  const short = matchListener(grpc, { direction: 'outbound', host: 'reviews', port: 9080 });
  assert.equal(short.listener, undefined);
  assert.match(short.why[0] ?? '', /api_listener named reviews:9080, and none is served/);
});

test('paths: the connection manager normalizes (RFC 3986 dot segments, merged slashes) before routing', () => {
  assert.equal(removeDotSegments('/a/b/../c'), '/a/c');
  assert.equal(removeDotSegments('/a/./b/'), '/a/b/');
  assert.equal(removeDotSegments('/a/..'), '/');
  assert.equal(removeDotSegments('/../../x'), '/x');
  const hcm = { normalize_path: true, merge_slashes: true };
  assert.equal(normalizeRequestPath(hcm, '/public/../admin//users?next=/a/../b'), '/admin/users?next=/a/../b');
  assert.equal(normalizeRequestPath({}, '/public/../admin'), '/public/../admin');
});
