/**
 * mergeMessage (src/xds/proto-merge.ts): Istio's pkg/proto/merge Merge / MergeWithReplaceList on
 * the `$Properties` shape. Facts from istio's merge_test.go and from the MERGE cases of
 * pilot/pkg/networking/core/envoyfilter (cluster_patch_test.go, listener_patch_test.go), plus Go's
 * proto.Merge rules (scalars, oneofs, maps, wrappers, bytes, Any); inputs are frozen and stay as they were.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deepFreeze } from '../../src/compile/intern.js';
import { messageFromJson } from '../../src/xds/json-message.js';
import { mergeMessage } from '../../src/xds/proto-merge.js';
import { decodeMessage, encodeMessage, packAny, toStruct, type Any } from '../../src/xds/proto.js';

const LISTENER = 'envoy.config.listener.v3.Listener';
const CLUSTER = 'envoy.config.cluster.v3.Cluster';
const ROUTE = 'envoy.config.route.v3.Route';
const HTTP_FILTER = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter';

/** JSON text with bytes (Uint8Array or Buffer) as hex: a comparison blind to the bytes' class. */
const canon = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) => {
    if (x instanceof Uint8Array) return Buffer.from(x).toString('hex');
    const b = x as { type?: unknown; data?: unknown };
    return b && b.type === 'Buffer' && Array.isArray(b.data) ? Buffer.from(b.data as number[]).toString('hex') : x;
  });

/** Merges deep-frozen inputs, and checks neither changed (and a merge of copies gives the same). */
function merge<T extends object>(typeName: string, dst: T, src: object, replaceLists = false): Record<string, unknown> {
  const before = [canon(dst), canon(src)];
  const ofCopies = mergeMessage(typeName, structuredClone(dst), structuredClone(src), replaceLists);
  const out = mergeMessage(typeName, deepFreeze(dst), deepFreeze(src), replaceLists);
  assert.equal(canon(out), canon(ofCopies));
  assert.deepEqual([canon(dst), canon(src)], before, 'inputs untouched');
  assert.notEqual(out, dst);
  return out as Record<string, unknown>;
}

/** A patch value as istiod reads it. */
function fromJson(typeName: string, json: unknown): object {
  const r = messageFromJson(typeName, json);
  assert.ok(r.ok, JSON.stringify(r.ok ? [] : r.problems));
  return r.message;
}

const names = (filters: unknown): string[] => (filters as { name: string }[]).map((f) => f.name);

test('istio TestMerge: a Duration field is replaced whole, dst unchanged', () => {
  const dst = { listener_filters_timeout: { seconds: 789, nanos: 999 } };
  const out = merge(LISTENER, dst, { listener_filters_timeout: { seconds: 123, nanos: 456 } });
  assert.deepEqual(out.listener_filters_timeout, { seconds: 123, nanos: 456 });
  assert.deepEqual(dst.listener_filters_timeout, { seconds: 789, nanos: 999 });
  // Replaced, not merged: a src Duration without nanos leaves none.
  assert.deepEqual(merge(LISTENER, dst, { listener_filters_timeout: { seconds: 5 } }).listener_filters_timeout, {
    seconds: 5,
  });
});

test('istio TestMerge_AppendsList and TestMergeWithReplaceList (+ empty list kept, nested replace)', () => {
  const dst = { name: 'keep-me', listener_filters: [{ name: 'a' }, { name: 'b' }] };
  assert.deepEqual(names(merge(LISTENER, dst, { listener_filters: [{ name: 'c' }] }).listener_filters), [
    'a',
    'b',
    'c',
  ]);
  const replaced = merge(LISTENER, dst, { listener_filters: [{ name: 'c' }] }, true);
  assert.deepEqual(names(replaced.listener_filters), ['c']);
  assert.equal(replaced.name, 'keep-me');
  const untouched = merge(LISTENER, { listener_filters: [{ name: 'a' }] }, { name: 'set-name' }, true);
  assert.deepEqual(names(untouched.listener_filters), ['a']);
  assert.equal(untouched.name, 'set-name');
  const nested = merge(
    LISTENER,
    { filter_chains: [{ filters: [{ name: 'f1' }, { name: 'f2' }] }] },
    { filter_chains: [{ filters: [{ name: 'f3' }] }] },
    true,
  );
  assert.equal((nested.filter_chains as unknown[]).length, 1);
  assert.deepEqual(names((nested.filter_chains as { filters: unknown }[])[0]?.filters), ['f3']);
});

test('envoyfilter cluster MERGE cases: enum patches over a cluster, other fields kept', () => {
  // cluster_patch_test.go: {"dns_lookup_family":"V6_ONLY"} then {"lb_policy":"RING_HASH"} over
  // outbound|443||cluster2 (http2_protocol_options, MAGLEV).
  const cluster2 = {
    name: 'outbound|443||cluster2',
    http2_protocol_options: { allow_connect: true, allow_metadata: true },
    lb_policy: 5, // MAGLEV
  };
  const step1 = merge(CLUSTER, cluster2, fromJson(CLUSTER, { dns_lookup_family: 'V6_ONLY' }));
  const step2 = merge(CLUSTER, step1, fromJson(CLUSTER, { lb_policy: 'RING_HASH' }));
  assert.deepEqual(step2, {
    name: 'outbound|443||cluster2',
    http2_protocol_options: { allow_connect: true, allow_metadata: true },
    lb_policy: 2,
    dns_lookup_family: 2,
  });
  // {"type":"EDS"}: a oneof member (cluster_discovery_type) set, the other member (cluster_type) cleared.
  const custom = { name: 'c', cluster_type: { name: 'envoy.clusters.dynamic_forward_proxy' } };
  assert.deepEqual(merge(CLUSTER, custom, fromJson(CLUSTER, { type: 'EDS' })), { name: 'c', type: 3 });
  // A oneof member at its default value is still set (present): STATIC is 0.
  assert.deepEqual(merge(CLUSTER, custom, { type: 0 }), { name: 'c', type: 0 });
});

test('envoyfilter listener MERGE cases: listener_filters appended, filter_chain_match merged', () => {
  // listener_patch_test.go: {"listener_filters": [{"name":"foo"}]} and {"filter_chain_match": {"server_names": ["foo.com"]}}.
  const listener = {
    name: '0.0.0.0_80',
    listener_filters: [{ name: 'envoy.filters.listener.tls_inspector' }],
  };
  assert.deepEqual(
    names(merge(LISTENER, listener, fromJson(LISTENER, { listener_filters: [{ name: 'foo' }] })).listener_filters),
    ['envoy.filters.listener.tls_inspector', 'foo'],
  );
  const FC = 'envoy.config.listener.v3.FilterChain';
  const chain = { filter_chain_match: { transport_protocol: 'tls', server_names: ['bar.com'] }, name: 'fc' };
  assert.deepEqual(merge(FC, chain, fromJson(FC, { filter_chain_match: { server_names: ['foo.com'] } })), {
    filter_chain_match: { transport_protocol: 'tls', server_names: ['bar.com', 'foo.com'] },
    name: 'fc',
  });
});

test('proto3 scalars: a default in src does not overwrite; a message set in src (even empty) is created', () => {
  const dst = { name: 'a', per_connection_buffer_limit_bytes: { value: 10 }, respect_dns_ttl: true };
  const out = merge(CLUSTER, dst, { name: '', respect_dns_ttl: false, lb_policy: 0, common_lb_config: {} });
  assert.deepEqual(out, {
    name: 'a',
    per_connection_buffer_limit_bytes: { value: 10 },
    respect_dns_ttl: true,
    common_lb_config: {},
  });
  // A wrapper whose src value is the default leaves dst's value (Go merges the wrapper as a message).
  assert.deepEqual(merge(CLUSTER, dst, { per_connection_buffer_limit_bytes: {} }).per_connection_buffer_limit_bytes, {
    value: 10,
  });
  assert.deepEqual(
    merge(CLUSTER, dst, { per_connection_buffer_limit_bytes: { value: 0 } }).per_connection_buffer_limit_bytes,
    {
      value: 10,
    },
  );
  assert.deepEqual(
    merge(CLUSTER, dst, { per_connection_buffer_limit_bytes: { value: 7 } }).per_connection_buffer_limit_bytes,
    {
      value: 7,
    },
  );
});

test('oneofs: a member set in src replaces another member; the same member merges', () => {
  const route = {
    match: { prefix: '/', case_sensitive: { value: false } },
    route: { cluster: 'a', timeout: { seconds: 1 } },
  };
  assert.deepEqual(merge(ROUTE, route, { match: { path: '/x' } }).match, {
    case_sensitive: { value: false },
    path: '/x',
  });
  assert.deepEqual(merge(ROUTE, route, { direct_response: { status: 200 } }), {
    match: { prefix: '/', case_sensitive: { value: false } },
    direct_response: { status: 200 },
  });
  assert.deepEqual(
    merge(ROUTE, route, { route: { weighted_clusters: { clusters: [{ name: 'b', weight: { value: 1 } }] } } }).route,
    {
      timeout: { seconds: 1 },
      weighted_clusters: { clusters: [{ name: 'b', weight: { value: 1 } }] },
    },
  );
});

test('maps merge by key, each src entry replacing the dst entry whole; Structs likewise', () => {
  const dst = {
    match: { prefix: '/' },
    metadata: { filter_metadata: { istio: toStruct({ config: 'x', keep: 1 }), other: toStruct({ a: 1 }) } },
  };
  const out = merge(
    ROUTE,
    dst,
    fromJson(ROUTE, { metadata: { filter_metadata: { istio: { added: true }, custom: { b: 2 } } } }),
  );
  const fm = (out.metadata as { filter_metadata: Record<string, unknown> }).filter_metadata;
  assert.deepEqual(Object.keys(fm), ['custom', 'istio', 'other']); // re-sorted
  assert.deepEqual(fm.istio, toStruct({ added: true })); // replaced, not merged (Go's mergeMap)
  assert.deepEqual(fm.other, toStruct({ a: 1 }));
  // Inside one Struct, the fields map merges by key.
  const S = 'google.protobuf.Struct';
  assert.deepEqual(
    merge(S, toStruct({ a: 1, c: { x: 1 } }), toStruct({ b: 2, c: { y: 2 } })),
    toStruct({ a: 1, b: 2, c: { y: 2 } }),
  );
});

test('bytes are replaced; an Any merges as a message (type_url and value replaced when set)', () => {
  const LUA = 'envoy.extensions.filters.http.lua.v3.Lua';
  const oldAny = packAny(LUA, { inline_code: 'old' });
  const newAny = packAny(LUA, { stat_prefix: 'new' });
  const out = merge(HTTP_FILTER, { name: 'lua', typed_config: oldAny }, { typed_config: newAny });
  assert.equal(canon((out.typed_config as Any).value), canon(newAny.value));
  const decoded = decodeMessage(LUA, (out.typed_config as Any).value as Uint8Array) as Record<string, unknown>;
  assert.equal(decoded.stat_prefix, 'new');
  assert.equal(Object.prototype.hasOwnProperty.call(decoded, 'inline_code'), false);
  // An Any where dst had none is taken whole.
  assert.equal(
    (mergeMessage(HTTP_FILTER, { name: 'x' }, { typed_config: newAny }) as { typed_config?: Any }).typed_config,
    newAny,
  );
  // Bytes: a DataSource's inline_bytes replaced.
  const DS = 'envoy.config.core.v3.DataSource';
  assert.equal(
    canon(merge(DS, { inline_bytes: new Uint8Array([1, 2]) }, { inline_bytes: new Uint8Array([3]) })),
    canon({ inline_bytes: new Uint8Array([3]) }),
  );
  // The merged message encodes (fast writer) and decodes as the fields say.
  const enc = decodeMessage(HTTP_FILTER, encodeMessage(HTTP_FILTER, out)) as { name: string };
  assert.equal(enc.name, 'lua');
});

test('decoded messages (class instances, Longs, own empty lists) merge by their own fields: the bytes of the plain merge', () => {
  const plainDst = { name: 'a', lb_policy: 1, connect_timeout: { seconds: 3 }, filters: [{ name: 'f' }] };
  const plainSrc = { dns_lookup_family: 2, filters: [{ name: 'g' }] };
  const dst = decodeMessage(CLUSTER, encodeMessage(CLUSTER, plainDst));
  const src = decodeMessage(CLUSTER, encodeMessage(CLUSTER, plainSrc));
  const hex = (m: object): string => Buffer.from(encodeMessage(CLUSTER, m)).toString('hex');
  assert.equal(hex(mergeMessage(CLUSTER, dst, src)), hex(mergeMessage(CLUSTER, plainDst, plainSrc)));
  assert.equal(
    hex(mergeMessage(CLUSTER, plainDst, plainSrc)),
    hex({
      name: 'a',
      lb_policy: 1,
      connect_timeout: { seconds: 3 },
      filters: [{ name: 'f' }, { name: 'g' }],
      dns_lookup_family: 2,
    }),
  );
});
