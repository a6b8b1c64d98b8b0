/**
 * messageFromJson (src/xds/json-message.ts): proto3 JSON as istiod reads an EnvoyFilter patch
 * value (golang/protobuf jsonpb) into the `$Properties` shape. The reference is protobufjs: the
 * shape encodes (fast writer and protobufjs alike) to the bytes of the message protobufjs builds
 * from the same values, and decodes back to them. Each well-known type, both field spellings, and
 * each problem kind with its path.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import rules from '../../src/xds/gen/validate-rules.js';
import { MAX_JSON_DEPTH, messageFromJson, parseGoDuration } from '../../src/xds/json-message.js';
import {
  codecOf,
  decodeMessage,
  encodeMessage,
  encodeWithProtobufjs,
  takePackedMessage,
  toStruct,
  type Any,
} from '../../src/xds/proto.js';
import { ENVOY_RULES, Validator } from '../../src/xds/validate/index.js';

const HTTP_FILTER = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter';
const HCM = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const LUA = 'envoy.extensions.filters.http.lua.v3.Lua';
const LUA_URL = `type.googleapis.com/${LUA}`;
const CLUSTER = 'envoy.config.cluster.v3.Cluster';
const LISTENER = 'envoy.config.listener.v3.Listener';
const ROUTE = 'envoy.config.route.v3.Route';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function convert(typeName: string, json: unknown): Record<string, unknown> {
  const r = messageFromJson(typeName, json);
  assert.ok(r.ok, `expected ${typeName} to convert: ${JSON.stringify(r.ok ? [] : r.problems)}`);
  return r.message as Record<string, unknown>;
}

function problemsOf(typeName: string, json: unknown, path?: string): string[] {
  const r = messageFromJson(typeName, json, path);
  assert.equal(r.ok, false, `expected problems for ${JSON.stringify(json)}`);
  return r.ok ? [] : r.problems.map((p) => `${p.path}: ${p.message}`);
}

/** Encodes with the fast writer and with protobufjs: the same bytes; returns them. */
function bytesOf(typeName: string, message: object): string {
  const fast = hex(encodeMessage(typeName, message));
  assert.equal(fast, hex(encodeWithProtobufjs(typeName, message)), 'fast writer and protobufjs agree');
  return fast;
}

/** protobufjs's own message from plain values (its fromObject: the reference), encoded. */
function referenceBytes(typeName: string, object: Record<string, unknown>): string {
  const codec = codecOf(typeName);
  assert.ok(codec);
  return hex(codec.encode(codec.fromObject(object)).finish());
}

const luaCode = 'function envoy_on_request(h) h:headers():add("x-lua", "1") end';

test('a Lua HTTP filter: snake_case and lowerCamelCase give the same bytes, protobufjs encodes the same values the same', () => {
  const snake = convert(HTTP_FILTER, {
    name: 'envoy.filters.http.lua',
    typed_config: {
      '@type': LUA_URL,
      inline_code: luaCode,
      source_codes: { 'b.lua': { inline_string: 'x' }, 'a.lua': { filename: '/etc/a.lua' } },
      stat_prefix: 'lua',
    },
    is_optional: true,
  });
  const camel = convert(HTTP_FILTER, {
    name: 'envoy.filters.http.lua',
    typedConfig: {
      '@type': LUA_URL,
      inlineCode: luaCode,
      sourceCodes: { 'b.lua': { inlineString: 'x' }, 'a.lua': { filename: '/etc/a.lua' } },
      statPrefix: 'lua',
    },
    isOptional: true,
  });
  assert.equal(bytesOf(HTTP_FILTER, snake), bytesOf(HTTP_FILTER, camel));
  const any = snake.typed_config as Any;
  assert.equal(any.type_url, LUA_URL);
  // The Any's payload: protobufjs's encoding of the same Lua values (map keys sorted, as the compiler builds them).
  assert.equal(
    hex(any.value as Uint8Array),
    referenceBytes(LUA, {
      inline_code: luaCode,
      source_codes: { 'a.lua': { filename: '/etc/a.lua' }, 'b.lua': { inline_string: 'x' } },
      stat_prefix: 'lua',
    }),
  );
  // And back: the decoded filter holds what the JSON said.
  const decoded = decodeMessage(HTTP_FILTER, encodeMessage(HTTP_FILTER, snake)) as Record<string, unknown>;
  assert.equal(decoded.name, 'envoy.filters.http.lua');
  assert.equal(decoded.is_optional, true);
  const lua = decodeMessage(LUA, (decoded.typed_config as Any).value as Uint8Array) as Record<string, unknown>;
  assert.equal(lua.inline_code, luaCode);
  assert.deepEqual(Object.keys(lua.source_codes as object), ['a.lua', 'b.lua']);
  // The packed message is handed to the acceptance check, as for the compiler's own Anys.
  assert.equal((takePackedMessage(camel.typed_config as object) as Record<string, unknown>).inline_code, luaCode);
});

test('a Cluster: enums by name or number, quoted integers, wrappers as bare values, default scalars left out', () => {
  const byName = convert(CLUSTER, {
    name: 'outbound|80||a.default.svc.cluster.local',
    type: 'STRICT_DNS',
    lb_policy: 'RING_HASH',
    dns_lookup_family: 'V6_ONLY',
    per_connection_buffer_limit_bytes: 32768,
    ring_hash_lb_config: { minimum_ring_size: '1024', maximum_ring_size: 8388608 },
    ignore_health_on_host_removal: false, // the default: not set, as in Go
    alt_stat_name: '',
  });
  const byNumber = convert(CLUSTER, {
    name: 'outbound|80||a.default.svc.cluster.local',
    type: 1,
    lbPolicy: 2,
    dnsLookupFamily: 2,
    perConnectionBufferLimitBytes: '32768',
    ringHashLbConfig: { minimumRingSize: 1024, maximumRingSize: '8388608' },
  });
  assert.deepEqual(byName, byNumber);
  assert.deepEqual(byName, {
    name: 'outbound|80||a.default.svc.cluster.local',
    type: 1,
    lb_policy: 2,
    per_connection_buffer_limit_bytes: { value: 32768 },
    dns_lookup_family: 2,
    ring_hash_lb_config: { minimum_ring_size: { value: 1024 }, maximum_ring_size: { value: 8388608 } },
  });
  assert.equal(bytesOf(CLUSTER, byName), referenceBytes(CLUSTER, byName));
  // A quoted uint32 is read, as in istiod's test (xffNumTrustedHops: "4").
  assert.deepEqual(convert(HCM, { xffNumTrustedHops: '4', mergeSlashes: true }), {
    xff_num_trusted_hops: 4,
    merge_slashes: true,
  });
});

test('64-bit integers: as strings or numbers, beyond 2^53 exactly', () => {
  const opt = convert('envoy.config.core.v3.SocketOption', {
    level: '-9223372036854775808',
    name: 2 ** 53 + 2, // beyond Number.MAX_SAFE_INTEGER (a JSON number can be)
    int_value: '9223372036854775807',
  });
  const decoded = decodeMessage(
    'envoy.config.core.v3.SocketOption',
    encodeMessage('envoy.config.core.v3.SocketOption', opt),
  );
  const d = decoded as Record<string, unknown>;
  assert.equal(String(d.level), '-9223372036854775808');
  assert.equal(String(d.name), '9007199254740994');
  assert.equal(String(d.int_value), '9223372036854775807');
  const ring = convert('envoy.config.cluster.v3.Cluster.RingHashLbConfig', {
    maximum_ring_size: '18446744073709551615',
  });
  const back = decodeMessage(
    'envoy.config.cluster.v3.Cluster.RingHashLbConfig',
    encodeMessage('envoy.config.cluster.v3.Cluster.RingHashLbConfig', ring),
  ) as { maximum_ring_size: { value: { toString(): string } } };
  assert.equal(String(back.maximum_ring_size.value), '18446744073709551615');
  assert.deepEqual(problemsOf('envoy.config.core.v3.SocketOption', { level: '9223372036854775808' }), [
    'level: 9223372036854775808 is out of range for int64',
  ]);
  assert.deepEqual(problemsOf(CLUSTER, { per_connection_buffer_limit_bytes: -1 }), [
    'per_connection_buffer_limit_bytes: -1 is out of range for uint32',
  ]);
  assert.deepEqual(problemsOf(CLUSTER, { per_connection_buffer_limit_bytes: 1.5 }), [
    'per_connection_buffer_limit_bytes: expected an integer (uint32), got 1.5',
  ]);
});

test('Duration: Go durations (jsonpb reads them with time.ParseDuration)', () => {
  const timeout = (text: string): unknown => convert(CLUSTER, { connect_timeout: text }).connect_timeout;
  assert.deepEqual(timeout('1.5s'), { seconds: 1, nanos: 500_000_000 });
  assert.deepEqual(timeout('0.25s'), { nanos: 250_000_000 });
  assert.deepEqual(timeout('100ms'), { nanos: 100_000_000 });
  assert.deepEqual(timeout('1m30s'), { seconds: 90 });
  assert.deepEqual(timeout('2h'), { seconds: 7200 });
  assert.deepEqual(timeout('-1.5s'), { seconds: -1, nanos: -500_000_000 });
  assert.deepEqual(timeout('0s'), {});
  assert.deepEqual(timeout('0'), {});
  assert.deepEqual(timeout('1us'), { nanos: 1000 });
  assert.equal(parseGoDuration('1.0000000001s'), 1_000_000_000n);
  assert.equal(parseGoDuration('.5s'), 500_000_000n);
  for (const bad of ['1.5', '1x', '', 's', '.s', '3000000h'])
    assert.equal(parseGoDuration(bad), null, `"${bad}" does not parse`);
  const c = convert(CLUSTER, { connect_timeout: '1.5s' });
  assert.equal(bytesOf(CLUSTER, c), referenceBytes(CLUSTER, { connect_timeout: { seconds: 1, nanos: 500_000_000 } }));
  assert.deepEqual(problemsOf(CLUSTER, { connect_timeout: '1.5' }), [
    'connect_timeout: bad duration "1.5" (a Go duration such as "1.5s", "100ms", "1m")',
  ]);
  assert.deepEqual(problemsOf(CLUSTER, { connect_timeout: 5 }), [
    'connect_timeout: expected a duration such as "1.5s", got number 5',
  ]);
});

test('Timestamp: RFC 3339, offsets and fractions', () => {
  const TS = 'google.protobuf.Timestamp';
  assert.deepEqual(convert(TS, '1970-01-01T00:00:00Z'), {});
  assert.deepEqual(convert(TS, '2024-02-29T12:00:00.5Z'), { seconds: 1709208000, nanos: 500_000_000 });
  assert.deepEqual(convert(TS, '2024-02-29T14:00:00+02:00'), { seconds: 1709208000 });
  assert.deepEqual(convert(TS, '1969-12-31T23:59:59.000000001Z'), { seconds: -1, nanos: 1 });
  assert.deepEqual(convert(TS, '2024-02-29T12:00:00.5Z'), {
    seconds: Date.UTC(2024, 1, 29, 12) / 1000,
    nanos: 500_000_000,
  });
  for (const bad of ['2023-02-29T00:00:00Z', '2024-01-01 00:00:00Z', '2024-01-01T00:00:00', '2024-13-01T00:00:00Z'])
    assert.equal(messageFromJson(TS, bad).ok, false, bad);
});

test('Struct, Value, ListValue: the shape toStruct builds (keys sorted), null as a null Value', () => {
  const json = { tlsMode: 'istio', b: [1, 'two', true, null, { x: {} }], a: null, n: 1.5 };
  const route = convert(ROUTE, { match: { prefix: '/' }, metadata: { filter_metadata: { custom: json } } });
  assert.deepEqual(
    (route.metadata as { filter_metadata: Record<string, unknown> }).filter_metadata.custom,
    toStruct(json),
  );
  assert.deepEqual(convert('google.protobuf.Value', null), { nullValue: 0 });
  assert.deepEqual(convert('google.protobuf.ListValue', []), {});
  assert.deepEqual(convert('google.protobuf.ListValue', ['a']), { values: [{ stringValue: 'a' }] });
  assert.equal(bytesOf(ROUTE, route), referenceBytes(ROUTE, route));
  assert.deepEqual(problemsOf('google.protobuf.Struct', [1]), [
    ': expected an object (google.protobuf.Struct), got an array',
  ]);
});

test('wrappers as bare values (the default value: an empty wrapper, present), Empty, null fields left out', () => {
  assert.deepEqual(convert(ROUTE, { match: { prefix: '/', case_sensitive: false } }).match, {
    prefix: '/',
    case_sensitive: {},
  });
  assert.deepEqual(convert(ROUTE, { match: { prefix: '/', caseSensitive: true } }).match, {
    prefix: '/',
    case_sensitive: { value: true },
  });
  assert.deepEqual(convert(ROUTE, { match: { prefix: '/', case_sensitive: null }, name: null }), {
    match: { prefix: '/' },
  });
  assert.deepEqual(convert('google.protobuf.StringValue', 'x'), { value: 'x' });
  assert.deepEqual(convert('google.protobuf.BytesValue', 'AAEC'), { value: new Uint8Array([0, 1, 2]) });
  assert.deepEqual(convert('google.protobuf.DoubleValue', 'NaN'), { value: NaN });
  assert.deepEqual(convert('google.protobuf.Empty', {}), {});
  assert.deepEqual(problemsOf('google.protobuf.Empty', { a: 1 }), ['a: unknown field "a" in google.protobuf.Empty']);
  assert.deepEqual(convert('google.protobuf.FieldMask', 'fooBar,baz.quxQuux'), { paths: ['foo_bar', 'baz.qux_quux'] });
  // A top-level null is an empty message (jsonpb).
  assert.deepEqual(convert(ROUTE, null), {});
});

test('bytes: standard base64', () => {
  const lua = convert(LUA, { default_source_code: { inline_bytes: 'aGVsbG8=' } });
  assert.deepEqual(lua.default_source_code, { inline_bytes: new Uint8Array(Buffer.from('hello')) });
  assert.equal(bytesOf(LUA, lua), referenceBytes(LUA, { default_source_code: { inline_bytes: Buffer.from('hello') } }));
  assert.deepEqual(problemsOf(LUA, { default_source_code: { inline_bytes: 'aGVsbG8' } }), [
    'default_source_code.inline_bytes: not valid base64',
  ]);
});

test('Any: nested Anys, TypedStruct, well-known inner types under "value", the URL as written', () => {
  // udpa.type.v1.TypedStruct is an ordinary message (istiod's cluster patch test carries one).
  const socket = convert('envoy.config.core.v3.TransportSocket', {
    name: 'transport_sockets.alts',
    typed_config: {
      '@type': 'type.googleapis.com/udpa.type.v1.TypedStruct',
      type_url: 'type.googleapis.com/envoy.extensions.transport_sockets.alts.v3.Alts',
      value: { handshaker_service: '1.2.3.4' },
    },
  });
  const ts = decodeMessage('udpa.type.v1.TypedStruct', (socket.typed_config as Any).value as Uint8Array) as Record<
    string,
    unknown
  >;
  assert.equal(ts.type_url, 'type.googleapis.com/envoy.extensions.transport_sockets.alts.v3.Alts');
  assert.deepEqual(
    hex(encodeMessage('google.protobuf.Struct', ts.value as object)),
    hex(encodeMessage('google.protobuf.Struct', toStruct({ handshaker_service: '1.2.3.4' }))),
  );
  assert.ok(
    convert(HTTP_FILTER, { name: 'x', typed_config: { '@type': 'type.googleapis.com/xds.type.v3.TypedStruct' } }),
  );
  // An Any inside an Any's message (HCM → http_filters[0].typed_config).
  const hcm = convert(LISTENER, {
    name: 'l',
    filter_chains: [
      {
        filters: [
          {
            name: 'envoy.filters.network.http_connection_manager',
            typed_config: {
              '@type': `type.googleapis.com/${HCM}`,
              stat_prefix: 'in',
              http_filters: [{ name: 'lua', typed_config: { '@type': LUA_URL, inline_code: 'x' } }],
            },
          },
        ],
      },
    ],
  });
  const filter = (hcm.filter_chains as { filters: { typed_config: Any }[] }[])[0]?.filters[0];
  assert.ok(filter);
  const inner = decodeMessage(HCM, filter.typed_config.value as Uint8Array) as {
    http_filters: { typed_config: Any }[];
  };
  assert.equal(inner.http_filters[0]?.typed_config.type_url, LUA_URL);
  // A well-known type in an Any: under "value".
  const wk = convert(HTTP_FILTER, {
    name: 'x',
    typed_config: { '@type': 'type.googleapis.com/google.protobuf.Struct', value: { a: 1 } },
  });
  assert.equal(
    hex((wk.typed_config as Any).value as Uint8Array),
    hex(encodeMessage('google.protobuf.Struct', toStruct({ a: 1 }))),
  );
  // Go resolves the type by what follows the last '/', and keeps the URL as written (istiod's test).
  const doubled = convert(HTTP_FILTER, {
    name: 'x',
    typed_config: { '@type': `type.googleapis.com/type.googleapis.com/${LUA}`, inlineCode: 'y' },
  });
  assert.equal((doubled.typed_config as Any).type_url, `type.googleapis.com/type.googleapis.com/${LUA}`);
  assert.equal(
    (decodeMessage(LUA, (doubled.typed_config as Any).value as Uint8Array) as { inline_code: string }).inline_code,
    'y',
  );
});

test('each problem kind, with its field path', () => {
  const hcmFilter = (httpFilters: unknown[]): unknown => ({
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: { '@type': `type.googleapis.com/${HCM}`, stat_prefix: 'x', http_filters: httpFilters },
  });
  assert.deepEqual(problemsOf(HTTP_FILTER, { name: 'x', typed_config: { '@type': LUA_URL, inline_cod: 'x' } }), [
    `typed_config.inline_cod: unknown field "inline_cod" in ${LUA}`,
  ]);
  assert.deepEqual(
    problemsOf('envoy.config.listener.v3.Filter', hcmFilter([{ name: 'a' }, { name: 'b' }, { name: 7 }])),
    ['typed_config.http_filters[2].name: expected a string, got number 7'],
  );
  assert.deepEqual(problemsOf(CLUSTER, { lb_policy: 'ROUND_ROBINN' }), [
    'lb_policy: unknown value "ROUND_ROBINN" for enum envoy.config.cluster.v3.Cluster.LbPolicy',
  ]);
  assert.deepEqual(problemsOf(CLUSTER, { name: ['a'] }), ['name: expected a string, got an array']);
  assert.deepEqual(problemsOf(CLUSTER, { load_assignment: 'x' }), [
    'load_assignment: expected an object (envoy.config.endpoint.v3.ClusterLoadAssignment), got string "x"',
  ]);
  assert.deepEqual(problemsOf(CLUSTER, { transport_socket_matches: {} }), [
    'transport_socket_matches: expected an array, got an object',
  ]);
  assert.deepEqual(
    problemsOf(HTTP_FILTER, {
      name: 'x',
      typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.network.redis_proxy.v3.RedisProxy' },
    }),
    [
      "typed_config.@type: unknown type type.googleapis.com/envoy.extensions.filters.network.redis_proxy.v3.RedisProxy (not in meshsnap's Envoy API set)",
    ],
  );
  assert.deepEqual(problemsOf(HTTP_FILTER, { name: 'x', typed_config: { inline_code: 'x' } }), [
    'typed_config: an Any needs "@type"',
  ]);
  // Two members of one oneof (jsonpb keeps the later declared one silently; meshsnap reports it).
  assert.deepEqual(problemsOf(HTTP_FILTER, { name: 'x', typed_config: { '@type': LUA_URL }, config_discovery: {} }), [
    'config_discovery: oneof config_type: typed_config is set too (set one of them)',
  ]);
  assert.deepEqual(problemsOf(ROUTE, { match: { prefix: '/', path: '/a' } }), [
    'match.path: oneof path_specifier: prefix is set too (set one of them)',
  ]);
  // A field under both its names.
  assert.deepEqual(problemsOf(CLUSTER, { lb_policy: 1, lbPolicy: 2 }), [
    'lb_policy: given twice, as "lb_policy" and "lbPolicy"',
  ]);
  // The caller's path prefixes every problem.
  assert.deepEqual(problemsOf(CLUSTER, { nme: 'x' }, 'spec.configPatches[0].patch.value'), [
    'spec.configPatches[0].patch.value.nme: unknown field "nme" in envoy.config.cluster.v3.Cluster',
  ]);
  // Several problems at once.
  assert.equal(problemsOf(CLUSTER, { a: 1, b: 2, name: 3 }).length, 3);
  assert.deepEqual(problemsOf('no.such.Type', {}), [': no.such.Type is not a message type meshsnap knows']);
});

test(`nesting is bounded (${MAX_JSON_DEPTH} levels), in messages and in Structs`, () => {
  let struct: unknown = 'leaf';
  for (let i = 0; i < MAX_JSON_DEPTH + 5; i++) struct = { k: struct };
  const problems = problemsOf(ROUTE, { metadata: { filter_metadata: { deep: struct } } });
  assert.equal(problems.length, 1);
  assert.match(problems[0] as string, /^metadata\.filter_metadata\.deep(\.k)+: nested deeper than 64 levels$/);
  let shallow: unknown = 'leaf';
  for (let i = 0; i < 20; i++) shallow = { k: shallow };
  assert.ok(messageFromJson(ROUTE, { metadata: { filter_metadata: { ok: shallow } } }).ok);
  // Messages: Any inside Any inside … (each an HttpFilter's typed_config of a composite-like chain).
  let any: unknown = { '@type': LUA_URL };
  for (let i = 0; i < MAX_JSON_DEPTH; i++)
    any = { '@type': `type.googleapis.com/${HTTP_FILTER}`, name: 'n', typed_config: any };
  const deep = messageFromJson(HTTP_FILTER, { name: 'top', typed_config: any });
  assert.equal(deep.ok, false);
  assert.match(deep.ok ? '' : (deep.problems[0]?.message ?? ''), /nested deeper than 64 levels/);
});

test('allowUnknownFields: unknown fields are skipped and listed (istiod applies EnvoyFilters so)', () => {
  const r = messageFromJson(
    HTTP_FILTER,
    { name: 'x', typed_config: { '@type': LUA_URL, inline_code: 'c', newer_field: 1 }, other: true },
    '',
    { allowUnknownFields: true },
  );
  assert.ok(r.ok);
  assert.deepEqual(
    r.ignored?.map((p) => p.path),
    ['typed_config.newer_field', 'other'],
  );
  assert.equal(
    (
      decodeMessage(LUA, (r.message as { typed_config: Any }).typed_config.value as Uint8Array) as {
        inline_code: string;
      }
    ).inline_code,
    'c',
  );
  // Other problems still fail.
  assert.equal(messageFromJson(CLUSTER, { lb_policy: 'NOPE' }, '', { allowUnknownFields: true }).ok, false);
});

test('the Envoy acceptance check walks a converted Lua filter: a good one passes, a DataSource without its source is reported', () => {
  const validator = (): Validator => new Validator(rules, ENVOY_RULES);
  const good = convert(HTTP_FILTER, {
    name: 'envoy.filters.http.lua',
    typed_config: { '@type': LUA_URL, default_source_code: { inline_string: luaCode } },
  });
  assert.deepEqual(validator().validate(HTTP_FILTER, good), []);
  const bad = convert(HTTP_FILTER, {
    name: 'envoy.filters.http.lua',
    typed_config: { '@type': LUA_URL, default_source_code: {} },
  });
  const found = validator()
    .validate(HTTP_FILTER, bad)
    .map((v) => `${v.path} ${v.rule}`);
  assert.ok(
    found.some((f) => f.startsWith('typed_config.default_source_code')),
    `expected the DataSource's required oneof to be reported, got ${JSON.stringify(found)}`,
  );
  // A local rate limit filter without its required stat_prefix (string.min_len).
  const rl = convert(HTTP_FILTER, {
    name: 'envoy.filters.http.local_ratelimit',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit',
      token_bucket: { max_tokens: 10, fill_interval: '1s' },
    },
  });
  assert.deepEqual(
    validator()
      .validate(HTTP_FILTER, rl)
      .map((v) => `${v.path} ${v.rule}`),
    ['typed_config.stat_prefix string.min_len'],
  );
});
