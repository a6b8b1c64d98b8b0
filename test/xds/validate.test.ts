/**
 * The Envoy acceptance validator (src/xds/validate/): for each rule kind, a hand-made resource
 * that breaks it and one that does not. Envoy's own messages where its protos carry the rule (the
 * generated table), a small hand-written table for the kinds no emitted Envoy message uses
 * (timestamps, `any.in`, string prefix/suffix/contains, …), and Envoy's cross-field and RE2 rules.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import rules from '../../src/xds/gen/validate-rules.js';
import { packAny, type Cluster, type Listener, type RouteConfiguration } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';
import {
  ENVOY_RULES,
  envoyValidator,
  istioObjectOf,
  type MessageHook,
  Validator,
  validateResource,
  type RuleTable,
  type Violation,
} from '../../src/xds/validate/index.js';

const CLUSTER = TypeName.Cluster;
const fresh = (): Validator => new Validator(rules, ENVOY_RULES);
const check = (typeName: string, message: object): Violation[] => fresh().validate(typeName, message);
const rulesOf = (vs: readonly Violation[]): string[] => vs.map((v) => `${v.path} ${v.rule}`);

/** A cluster Envoy accepts: the base every Cluster case breaks one field of. */
const okCluster = (over: Partial<Cluster> = {}): Cluster => ({
  name: 'outbound|9080||reviews.default.svc.cluster.local',
  type: 3, // EDS
  eds_cluster_config: { service_name: 'outbound|9080||reviews.default.svc.cluster.local', eds_config: { ads: {} } },
  connect_timeout: { seconds: 10 },
  lb_policy: 1,
  ...over,
});

function assertBreaks(typeName: string, good: object, bad: object, expected: string): void {
  assert.deepEqual(check(typeName, good), [], 'the good one passes');
  const found = rulesOf(check(typeName, bad));
  assert.ok(found.includes(expected), `expected ${expected}, got ${JSON.stringify(found)}`);
}

test('the rule table is generated from the protos: Envoy messages and their rules are there', () => {
  const cluster = rules.messages['envoy.config.cluster.v3.Cluster'];
  assert.ok(cluster, 'Cluster has rules');
  assert.deepEqual(cluster.fields.find((f) => f.name === 'name')?.rules, { string: { min_len: 1 } });
  // A repeated `in` keeps every value (protobufjs's flat options keep only the last one).
  const flags = rules.messages['envoy.config.accesslog.v3.ResponseFlagFilter']?.fields.find((f) => f.name === 'flags');
  assert.ok((flags?.rules?.repeated?.items?.string?.in?.length ?? 0) > 20, 'every response flag is listed');
  assert.deepEqual(rules.messages['envoy.config.route.v3.Route']?.oneofs, [
    ['action', ['route', 'redirect', 'direct_response', 'filter_action', 'non_forwarding_action']],
  ]);
  for (const type of Object.keys(ENVOY_RULES)) assert.ok(rules.messages[type], `${type} is walked`);
});

test('string.min_len: an empty cluster name breaks it', () => {
  assertBreaks(CLUSTER, okCluster(), okCluster({ name: '' }), 'name string.min_len');
});

test('enum.defined_only: a discovery type Envoy does not define breaks it', () => {
  assertBreaks(CLUSTER, okCluster(), okCluster({ type: 42 as Cluster['type'] }), 'type enum.defined_only');
});

test('duration.gt: a connect_timeout of 0 s breaks it, 1 ns does not', () => {
  assertBreaks(
    CLUSTER,
    okCluster({ connect_timeout: { nanos: 1 } }),
    okCluster({ connect_timeout: { seconds: 0 } }),
    'connect_timeout duration.gt',
  );
});

test('uint32.lte: a port over 65535 breaks it; wrapper rules: a load_balancing_weight of 0 breaks uint32.gte', () => {
  const cla = (port: number, weight: number) => ({
    cluster_name: 'c',
    endpoints: [
      {
        lb_endpoints: [
          {
            endpoint: { address: { socket_address: { address: '10.0.0.1', port_value: port } } },
            load_balancing_weight: { value: weight },
          },
        ],
      },
    ],
  });
  const type = TypeName.ClusterLoadAssignment;
  assertBreaks(
    type,
    cla(9080, 1),
    cla(70000, 1),
    'endpoints[0].lb_endpoints[0].endpoint.address.socket_address.port_value uint32.lte',
  );
  assertBreaks(type, cla(9080, 1), cla(9080, 0), 'endpoints[0].lb_endpoints[0].load_balancing_weight uint32.gte');
});

test('string.max_bytes inside an Any: a 256-byte SNI in the transport socket breaks it (path through the Any)', () => {
  const tls = (sni: string): Cluster =>
    okCluster({
      transport_socket: {
        name: 'envoy.transport_sockets.tls',
        typed_config: packAny(TypeName.UpstreamTlsContext, { sni }),
      },
    });
  assertBreaks(
    CLUSTER,
    tls('a'.repeat(255)),
    tls('a'.repeat(256)),
    'transport_socket.typed_config.sni string.max_bytes',
  );
});

const route = (over: Record<string, unknown>): RouteConfiguration => ({
  name: '9080',
  virtual_hosts: [
    {
      name: 'reviews:9080',
      domains: ['reviews'],
      routes: [{ match: { prefix: '/' }, route: { cluster: 'c' }, ...over }],
    },
  ],
});
const RC = TypeName.RouteConfiguration;

test('message.required: a route without match breaks it; oneof required: one without an action breaks it', () => {
  assertBreaks(RC, route({}), route({ match: undefined }), 'virtual_hosts[0].routes[0].match message.required');
  assertBreaks(RC, route({}), route({ route: undefined }), 'virtual_hosts[0].routes[0].action oneof.required');
});

test('a oneof member is checked only when it is the one set (PGV): safe_regex required is not required of a prefix match', () => {
  assert.deepEqual(check(RC, route({ match: { prefix: '' } })), []);
});

test('string.pattern (RE2): a path_separated_prefix ending in / breaks it', () => {
  assertBreaks(
    RC,
    route({ match: { path_separated_prefix: '/api' } }),
    route({ match: { path_separated_prefix: '/api/' } }),
    'virtual_hosts[0].routes[0].match.path_separated_prefix string.pattern',
  );
});

test('string.well_known_regex (non-strict header name): a header name with a newline breaks it', () => {
  const h = (name: string) => route({ match: { prefix: '/', headers: [{ name, exact_match: 'x' }] } });
  assertBreaks(
    RC,
    h('end-user'),
    h('end\nuser'),
    'virtual_hosts[0].routes[0].match.headers[0].name string.well_known_regex',
  );
});

test('repeated.min_items: a virtual host without domains breaks it; repeated items rules: an empty header to remove', () => {
  const vh = (domains: string[], remove: string[]): RouteConfiguration => ({
    name: '9080',
    virtual_hosts: [{ name: 'v', domains, request_headers_to_remove: remove }],
  });
  assertBreaks(RC, vh(['a'], ['x-b']), vh([], ['x-b']), 'virtual_hosts[0].domains repeated.min_items');
  assertBreaks(RC, vh(['a'], ['x-b']), vh(['a'], ['']), 'virtual_hosts[0].request_headers_to_remove[0] string.min_len');
});

test('repeated.max_items and repeated.unique (InternalRedirectPolicy)', () => {
  const irp = (codes: number[], copy: string[]) =>
    route({
      route: {
        cluster: 'c',
        internal_redirect_policy: { redirect_response_codes: codes, response_headers_to_copy: copy },
      },
    });
  const at = 'virtual_hosts[0].routes[0].route.internal_redirect_policy';
  assertBreaks(
    RC,
    irp([301, 302], ['a', 'b']),
    irp([301, 302, 303, 307, 308, 301], ['a']),
    `${at}.redirect_response_codes repeated.max_items`,
  );
  assertBreaks(RC, irp([301], ['a', 'b']), irp([301], ['a', 'a']), `${at}.response_headers_to_copy[1] repeated.unique`);
});

test('map keys: filter_metadata with an empty key breaks map.keys.string.min_len', () => {
  const md = (key: string): Cluster => okCluster({ metadata: { filter_metadata: { [key]: { fields: {} } } } });
  assertBreaks(CLUSTER, md('istio'), md(''), 'metadata.filter_metadata[""] map.keys.string.min_len');
});

test('any.required: a typed extension without typed_config breaks it', () => {
  const ext = (typed: boolean): RouteConfiguration =>
    route({
      match: {
        path_match_policy: {
          name: 'envoy.path.match.uri_template.uri_template_matcher',
          ...(typed
            ? {
                typed_config: packAny('envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig', {
                  path_template: '/a/{x}',
                }),
              }
            : {}),
        },
      },
    });
  assertBreaks(
    RC,
    ext(true),
    ext(false),
    'virtual_hosts[0].routes[0].match.path_match_policy.typed_config any.required',
  );
});

test('bytes.max_len: a raw header value over 16 KiB breaks it', () => {
  const h = (n: number) =>
    route({ request_headers_to_add: [{ header: { key: 'x-a', raw_value: new Uint8Array(n) } }] });
  assertBreaks(
    RC,
    h(16384),
    h(16385),
    'virtual_hosts[0].routes[0].request_headers_to_add[0].header.raw_value bytes.max_len',
  );
});

test('the violation names the Istio object behind the field, from the istio.config provenance', () => {
  const config = '/apis/networking.istio.io/v1/namespaces/default/virtual-service/reviews';
  const vs = check(
    RC,
    route({
      metadata: { filter_metadata: { istio: { fields: { config: { stringValue: config } } } } },
      match: { path_separated_prefix: '/a/' },
    }),
  );
  assert.equal(vs.length, 1);
  assert.equal(vs[0]?.source, config);
  assert.deepEqual(istioObjectOf(config), { kind: 'VirtualService', namespace: 'default', name: 'reviews' });
  assert.deepEqual(istioObjectOf('/apis/networking.istio.io/v1/namespaces/shop/destination-rule/cart'), {
    kind: 'DestinationRule',
    namespace: 'shop',
    name: 'cart',
  });
});

// ---- Rule kinds no emitted Envoy message carries: a hand-written table, the same checker. ----

const T: RuleTable = {
  messages: {
    'test.M': {
      fields: [
        { name: 's', type: 'string', rules: { string: { prefix: 'ab', suffix: 'yz', contains: 'mm' } } },
        { name: 'strict_name', type: 'string', rules: { string: { well_known_regex: 'HTTP_HEADER_NAME' } } },
        { name: 'strict_value', type: 'string', rules: { string: { well_known_regex: 'HTTP_HEADER_VALUE' } } },
        { name: 'choice', type: 'string', rules: { string: { in: ['a', 'b'], ignore_empty: true } } },
        { name: 'no', type: 'string', rules: { string: { not_in: ['bad'], not_contains: '..', max_len: 3 } } },
        { name: 'runes', type: 'string', rules: { string: { len: 2, min_bytes: 2 } } },
        { name: 'i64', type: 'int64', rules: { int64: { gt: -5, lte: 5, not_in: [0] } } },
        { name: 'outside', type: 'sint32', rules: { sint32: { gt: 10, lt: 5 } } },
        { name: 'f32', type: 'fixed32', rules: { fixed32: { in: [1, 2] } } },
        { name: 'dbl', type: 'double', rules: { double: { gte: 0.5, lt: 1 } } },
        { name: 'flt', type: 'float', rules: { float: { const: 2 } } },
        { name: 'b', type: 'bool', rules: { bool: { const: true } } },
        { name: 'e', type: 'enum', enum: 'test.E', rules: { enum: { in: [1, 2], not_in: [2] } } },
        {
          name: 'at',
          type: 'google.protobuf.Timestamp',
          rules: { timestamp: { required: true, gt: { seconds: 1000 }, lt_now: true } },
        },
        {
          name: 'd',
          type: 'google.protobuf.Duration',
          rules: { duration: { lte: { seconds: 5 }, in: [{ seconds: 1 }, { seconds: 6 }] } },
        },
        { name: 'any', type: 'google.protobuf.Any', rules: { any: { in: ['type.googleapis.com/test.A'] } } },
        { name: 'notany', type: 'google.protobuf.Any', rules: { any: { not_in: ['type.googleapis.com/test.B'] } } },
        {
          name: 'kv',
          type: 'string',
          map: 'string',
          rules: { map: { min_pairs: 1, max_pairs: 2, values: { string: { min_len: 1 } } } },
        },
        { name: 'sparse', type: 'test.N', map: 'string', rules: { map: { no_sparse: true } } },
        {
          name: 'items',
          type: 'uint64',
          repeated: true,
          rules: { repeated: { min_items: 1, max_items: 2, unique: true } },
        },
        { name: 'bytes', type: 'bytes', rules: { bytes: { prefix: 'MZ', len: 4 } } },
        { name: 'w', type: 'google.protobuf.DoubleValue', rules: { double: { lte: 1 } } },
      ],
      oneofs: [['kind', ['x', 'y']]],
    },
  },
  enums: { 'test.E': { A: 1, B: 2 } },
};

const good = {
  s: 'ab-mm-yz',
  strict_name: 'x-header',
  strict_value: 'v',
  choice: '',
  no: 'ok',
  runes: 'é!',
  i64: 3,
  outside: 11,
  f32: 2,
  dbl: 0.5,
  flt: 2,
  b: true,
  e: 1,
  at: { seconds: 2000 },
  d: { seconds: 1 },
  any: { type_url: 'type.googleapis.com/test.A', value: new Uint8Array() },
  notany: { type_url: 'type.googleapis.com/test.C', value: new Uint8Array() },
  kv: { a: '1' },
  sparse: { a: {} },
  items: [1, 2],
  bytes: Uint8Array.from([0x4d, 0x5a, 0, 0]),
  w: { value: 1 },
  x: 'set',
};

const BAD: readonly [Partial<Record<keyof typeof good, unknown>>, string][] = [
  [{ s: 'xx-mm-yz' }, 's string.prefix'],
  [{ s: 'ab-mm-y' }, 's string.suffix'],
  [{ s: 'ab-m-yz' }, 's string.contains'],
  [{ strict_name: 'bad name' }, 'strict_name string.well_known_regex'],
  [{ strict_value: 'a\u0007b' }, 'strict_value string.well_known_regex'],
  [{ choice: 'c' }, 'choice string.in'],
  [{ no: 'bad' }, 'no string.not_in'],
  [{ no: 'a..' }, 'no string.not_contains'],
  [{ no: 'abcd' }, 'no string.max_len'],
  [{ runes: 'é' }, 'runes string.len'],
  [{ i64: -5 }, 'i64 int64.gt'],
  [{ i64: '6' }, 'i64 int64.lte'],
  [{ i64: 0 }, 'i64 int64.not_in'],
  [{ outside: 7 }, 'outside sint32.gt+sint32.lt'],
  [{ f32: 3 }, 'f32 fixed32.in'],
  [{ dbl: 1 }, 'dbl double.lt'],
  [{ dbl: 0.4 }, 'dbl double.gte'],
  [{ flt: 2.5 }, 'flt float.const'],
  [{ b: false }, 'b bool.const'],
  [{ e: 3 }, 'e enum.in'],
  [{ e: 2 }, 'e enum.not_in'],
  [{ at: undefined }, 'at timestamp.required'],
  [{ at: { seconds: 999 } }, 'at timestamp.gt'],
  [{ at: { seconds: 4102444800 } }, 'at timestamp.lt_now'],
  [{ d: { seconds: 6 } }, 'd duration.lte'],
  [{ d: { seconds: 2 } }, 'd duration.in'],
  [{ any: { type_url: 'type.googleapis.com/test.B', value: new Uint8Array() } }, 'any any.in'],
  [{ notany: { type_url: 'type.googleapis.com/test.B', value: new Uint8Array() } }, 'notany any.not_in'],
  [{ kv: {} }, 'kv map.min_pairs'],
  [{ kv: { a: '1', b: '2', c: '3' } }, 'kv map.max_pairs'],
  [{ kv: { a: '' } }, 'kv["a"] string.min_len'],
  [{ sparse: { a: null } }, 'sparse["a"] map.no_sparse'],
  [{ items: [] }, 'items repeated.min_items'],
  [{ items: [1, 2, 3] }, 'items repeated.max_items'],
  [{ items: [1, 1] }, 'items[1] repeated.unique'],
  [{ bytes: Uint8Array.from([0x4e, 0x5a, 0, 0]) }, 'bytes bytes.prefix'],
  [{ bytes: Uint8Array.from([0x4d, 0x5a]) }, 'bytes bytes.len'],
  [{ w: { value: 2 } }, 'w double.lte'],
  [{ x: undefined }, 'kind oneof.required'],
];

test('every rule kind of validate.proto: the good message passes, each broken field is reported with its rule', () => {
  const v = new Validator(T);
  assert.deepEqual(v.validate('test.M', { ...good }), []);
  for (const [change, expected] of BAD) {
    const found = rulesOf(v.validate('test.M', { ...good, ...change }));
    assert.deepEqual(found, [expected], `${JSON.stringify(change)}`);
  }
});

test('proto3 defaults: an absent scalar is its default value, and rules apply to it', () => {
  const v = new Validator(T);
  const { s: _s, ...withoutS } = good;
  assert.deepEqual(rulesOf(v.validate('test.M', withoutS)), ['s string.prefix']);
});

// ---- Envoy's cross-field rules and RE2 ----

const wc = (weights: number[], total?: number): RouteConfiguration =>
  route({
    route: {
      weighted_clusters: {
        clusters: weights.map((w, i) => ({ name: `c${i}`, weight: { value: w } })),
        ...(total !== undefined ? { total_weight: { value: total } } : {}),
      },
    },
  });

test('weighted clusters: weights must add up to more than 0, and to total_weight when it is set', () => {
  const at = 'virtual_hosts[0].routes[0].route.weighted_clusters.clusters';
  assert.deepEqual(check(RC, wc([80, 20])), []);
  assert.deepEqual(check(RC, wc([80, 20], 100)), []);
  assert.deepEqual(rulesOf(check(RC, wc([0, 0]))), [`${at} envoy.weighted_clusters.sum`]);
  assert.deepEqual(rulesOf(check(RC, wc([80, 10], 100))), [`${at} envoy.weighted_clusters.total_weight`]);
  assert.deepEqual(rulesOf(check(RC, wc([]))), [`${at} repeated.min_items`]);
});

test('virtual hosts: a domain in two virtual hosts of one route config is refused (case-insensitive)', () => {
  const rc = (a: string, b: string): RouteConfiguration => ({
    name: '80',
    virtual_hosts: [
      { name: 'a', domains: ['a.default.svc.cluster.local', a] },
      { name: 'b', domains: [b] },
    ],
  });
  assert.deepEqual(check(RC, rc('a', 'b')), []);
  assert.deepEqual(rulesOf(check(RC, rc('a', 'A'))), ['virtual_hosts[1].domains[0] envoy.virtual_host.domains_unique']);
});

test('RE2: a regex Envoy would not compile breaks envoy.re2, a good one passes', () => {
  const re = (regex: string) => route({ match: { safe_regex: { regex } } });
  assert.deepEqual(check(RC, re('/api/v[0-9]+')), []);
  for (const bad of ['a{2000}', '(?=x)', '(abcdefghij|klmnopqrst|uvwxyzabcd){1000}'])
    assert.deepEqual(rulesOf(check(RC, re(bad))), ['virtual_hosts[0].routes[0].match.safe_regex.regex envoy.re2'], bad);
});

const L = TypeName.Listener;
const chain = (fcm: Record<string, unknown> | undefined, name?: string) => ({
  ...(name ? { name } : {}),
  ...(fcm ? { filter_chain_match: fcm } : {}),
  filters: [
    {
      name: 'envoy.filters.network.tcp_proxy',
      typed_config: packAny(TypeName.TcpProxy, { stat_prefix: 'x', cluster: 'c' }),
    },
  ],
});
const listener = (chains: ReturnType<typeof chain>[]): Listener => ({
  name: 'virtualInbound',
  address: { socket_address: { address: '0.0.0.0', port_value: 15006 } },
  filter_chains: chains,
});

test('filter chains: the same match twice is refused, also when equal only once its lists are expanded', () => {
  const at = 'filter_chains[1].filter_chain_match envoy.filter_chain.match_unique';
  assert.deepEqual(
    check(L, listener([chain({ destination_port: { value: 80 } }), chain({ destination_port: { value: 81 } })])),
    [],
  );
  assert.deepEqual(
    rulesOf(
      check(L, listener([chain({ destination_port: { value: 80 } }), chain({ destination_port: { value: 80 } })])),
    ),
    [at],
  );
  assert.deepEqual(rulesOf(check(L, listener([chain(undefined), chain({})]))), [at]);
  const alpn = (protocols: string[]) => chain({ destination_port: { value: 80 }, application_protocols: protocols });
  assert.deepEqual(check(L, listener([alpn(['h2']), alpn(['http/1.1'])])), []);
  assert.deepEqual(rulesOf(check(L, listener([alpn(['h2', 'http/1.1']), alpn(['http/1.1'])]))), [at]);
});

test('HTTP filters: the router must be last, and the last filter must be the router', () => {
  const hcm = (names: string[]) =>
    listener([
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: packAny(TypeName.HttpConnectionManager, {
              stat_prefix: 'x',
              rds: { route_config_name: '80', config_source: { ads: {} } },
              http_filters: names.map((n) => ({
                name: n,
                typed_config: n === 'router' ? packAny(TypeName.Router, {}) : packAny(TypeName.Cors, {}),
              })),
            }),
          },
        ],
      },
    ]);
  assert.deepEqual(check(L, hcm(['cors', 'router'])), []);
  const at = 'filter_chains[0].filters[0].typed_config.http_filters';
  assert.deepEqual(rulesOf(check(L, hcm(['router', 'cors']))), [
    `${at}[0] envoy.http_filters.terminal_last`,
    `${at}[1] envoy.http_filters.terminal_last`,
  ]);
});

test('clusters: ORIGINAL_DST needs CLUSTER_PROVIDED and no load assignment; LOGICAL_DNS one endpoint; STATIC IP addresses', () => {
  const ORIGINAL_DST = 4;
  const CLUSTER_PROVIDED = 6;
  const cla = (addresses: string[]) => ({
    cluster_name: 'x',
    endpoints: [
      {
        lb_endpoints: addresses.map((a) => ({
          endpoint: { address: { socket_address: { address: a, port_value: 443 } } },
        })),
      },
    ],
  });
  assert.deepEqual(
    check(CLUSTER, okCluster({ type: ORIGINAL_DST, lb_policy: CLUSTER_PROVIDED, eds_cluster_config: undefined })),
    [],
  );
  assert.deepEqual(
    rulesOf(check(CLUSTER, okCluster({ type: ORIGINAL_DST, lb_policy: 0, eds_cluster_config: undefined }))),
    ['lb_policy envoy.cluster.original_dst_lb'],
  );
  assert.deepEqual(
    rulesOf(
      check(
        CLUSTER,
        okCluster({ type: ORIGINAL_DST, lb_policy: CLUSTER_PROVIDED, load_assignment: cla(['10.0.0.1']) }),
      ),
    ),
    ['load_assignment envoy.cluster.original_dst_load_assignment'],
  );
  assert.deepEqual(rulesOf(check(CLUSTER, okCluster({ lb_policy: CLUSTER_PROVIDED }))), [
    'lb_policy envoy.cluster.cluster_provided_lb',
  ]);
  assert.deepEqual(check(CLUSTER, okCluster({ type: 2, load_assignment: cla(['www.google.com']) })), []);
  assert.deepEqual(rulesOf(check(CLUSTER, okCluster({ type: 2, load_assignment: cla(['a.com', 'b.com']) }))), [
    'load_assignment.endpoints envoy.cluster.logical_dns_single_endpoint',
  ]);
  assert.deepEqual(check(CLUSTER, okCluster({ type: 0, load_assignment: cla(['10.0.0.1', '::1']) })), []);
  assert.deepEqual(
    rulesOf(check(CLUSTER, okCluster({ type: 0, load_assignment: cla(['10.0.0.1', 'db.example.com']) }))),
    ['load_assignment.endpoints[0].lb_endpoints[1].endpoint.address.socket_address.address envoy.cluster.static_ip'],
  );
});

test('dynamic forward proxy clusters: CLUSTER_PROVIDED; typed upstream options need auto_sni and auto_san_validation unless insecure', () => {
  const CLUSTER_PROVIDED = 6;
  const dfp = (allowInsecure: boolean, upstream?: object, over: Partial<Cluster> = {}): Cluster =>
    okCluster({
      type: undefined,
      eds_cluster_config: undefined,
      lb_policy: CLUSTER_PROVIDED,
      cluster_type: {
        name: 'envoy.clusters.dynamic_forward_proxy',
        typed_config: packAny(TypeName.DfpClusterConfig, {
          dns_cache_config: { name: '*.example.com_dfp_dns_cache' },
          ...(allowInsecure ? { allow_insecure_cluster_options: true } : {}),
        }),
      },
      ...(upstream
        ? {
            typed_extension_protocol_options: {
              [TypeName.HttpProtocolOptions]: packAny(TypeName.HttpProtocolOptions, {
                explicit_http_config: { http2_protocol_options: {} },
                ...upstream,
              }),
            },
          }
        : {}),
      ...over,
    });
  // Without typed options Envoy sets auto_sni and auto_san_validation itself.
  assert.deepEqual(check(CLUSTER, dfp(false)), []);
  assert.deepEqual(rulesOf(check(CLUSTER, dfp(false, {}))), ['cluster_type envoy.cluster.dfp_auto_sni']);
  assert.deepEqual(rulesOf(check(CLUSTER, dfp(false, { upstream_http_protocol_options: { auto_sni: true } }))), [
    'cluster_type envoy.cluster.dfp_auto_sni',
  ]);
  assert.deepEqual(
    check(CLUSTER, dfp(false, { upstream_http_protocol_options: { auto_sni: true, auto_san_validation: true } })),
    [],
  );
  assert.deepEqual(check(CLUSTER, dfp(true, {})), []);
  assert.deepEqual(rulesOf(check(CLUSTER, dfp(false, undefined, { lb_policy: 0 }))), [
    'lb_policy envoy.cluster.dfp_lb',
  ]);
  // The protos' own rules apply inside the packed config: the DNS cache needs a name.
  const unnamed = dfp(false);
  (unnamed.cluster_type as { typed_config: unknown }).typed_config = packAny(TypeName.DfpClusterConfig, {
    dns_cache_config: { name: '' },
  });
  assert.deepEqual(rulesOf(check(CLUSTER, unnamed)), [
    'cluster_type.typed_config.dns_cache_config.name string.min_len',
  ]);
  // The SNI filter's port and cache are checked too.
  const sni = (config: object) =>
    check(TypeName.Listener, {
      name: 'l',
      address: { socket_address: { address: '0.0.0.0', port_value: 443 } },
      filter_chains: [
        {
          filters: [
            {
              name: 'envoy.filters.network.sni_dynamic_forward_proxy',
              typed_config: packAny(TypeName.SniDfpFilterConfig, config),
            },
            {
              name: 'envoy.filters.network.tcp_proxy',
              typed_config: packAny(TypeName.TcpProxy, { stat_prefix: 's', cluster: 'c' }),
            },
          ],
        },
      ],
    });
  assert.deepEqual(sni({ dns_cache_config: { name: 'c' }, port_value: 443 }), []);
  assert.deepEqual(rulesOf(sni({ port_value: 443 })), [
    'filter_chains[0].filters[0].typed_config.dns_cache_config message.required',
  ]);
});

test('a clean resource is remembered; the shared validator reports the same as a fresh one', () => {
  const bad = okCluster({ name: '' });
  assert.deepEqual(rulesOf(validateResource('clusters', bad)), ['name string.min_len']);
  assert.deepEqual(
    rulesOf(validateResource('clusters', bad)),
    ['name string.min_len'],
    'a bad one is reported every time',
  );
  const good = okCluster();
  assert.deepEqual(validateResource('clusters', good), []);
  assert.deepEqual(validateResource('clusters', good), []);
});

test("a validator trusting the process's skips what that one found clean (resources and packed configs); what it rejected is walked", () => {
  const tls = (sni: string) => ({
    name: 'envoy.transport_sockets.tls',
    typed_config: packAny('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', { sni }),
  });
  const clean = okCluster({ name: 'outbound|9080||remembered.default.svc.cluster.local', transport_socket: tls('a') });
  const bad = okCluster({ name: 'outbound|9080||bad.default.svc.cluster.local', connect_timeout: { seconds: 0 } });
  assert.deepEqual(validateResource('clusters', clean), [], "the process's validator walks it");
  assert.equal(validateResource('clusters', bad).length, 1);
  // Validators that reject every cluster, or every TLS context: asked only about what the process's did not find clean.
  const trusting = (hooks: Record<string, MessageHook>): Validator =>
    new Validator(rules, hooks, undefined, undefined, { memory: 'check', trust: envoyValidator() });
  const no: MessageHook = (_m, walk) => walk.report({ rule: 'test.no', message: 'no' });
  assert.deepEqual(validateResource('clusters', clean, undefined, trusting({ [CLUSTER]: no })), [], 'known clean');
  assert.deepEqual(rulesOf(validateResource('clusters', bad, undefined, trusting({ [CLUSTER]: no }))).sort(), [
    ' test.no',
    'connect_timeout duration.gt',
  ]);
  assert.deepEqual(rulesOf(validateResource('clusters', okCluster(), undefined, trusting({ [CLUSTER]: no }))), [
    ' test.no',
  ]);
  // Another cluster holding the same packed config: the config is not walked again; a new one is.
  const tlsNo = { 'envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext': no };
  const again = okCluster({
    name: 'outbound|9080||again.default.svc.cluster.local',
    transport_socket: clean.transport_socket,
  });
  assert.deepEqual(validateResource('clusters', again, undefined, trusting(tlsNo)), []);
  const fresh = okCluster({ name: 'outbound|9080||fresh.default.svc.cluster.local', transport_socket: tls('b') });
  assert.deepEqual(rulesOf(validateResource('clusters', fresh, undefined, trusting(tlsNo))), [
    'transport_socket.typed_config test.no',
  ]);
});
