import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import { deepFreeze, InternTable, releaseInternTables } from '../../src/compile/intern.js';
import type { CompileOutput } from '../../src/compile/types.js';
import { buildInputSet } from '../../src/inputs/index.js';
import { encodeMessage, takePackedMessage, type envoy } from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';
import type { Cluster, ClusterLoadAssignment, Listener } from '../../src/xds/proto.js';

type CommonTlsContext = envoy.extensions.transport_sockets.tls.v3.CommonTlsContext.$Properties;

const output = (seed: number): CompileOutput =>
  compile(buildInputSet(generateMesh({ services: 60, seed }).docs)).output;

/** As many objects as distinct values: equal values are one object. */
function assertShared(values: readonly unknown[], what: string): void {
  const present = values.filter((v) => v !== undefined);
  assert.ok(present.length > 10, what);
  assert.equal(new Set(present).size, new Set(present.map((v) => JSON.stringify(v))).size, what);
}

const clustersOf = (out: CompileOutput, group: string): Cluster[] => [
  ...(out.groups.get(group)?.clusters.values() ?? []),
];

test('an intern table gives one frozen object per key; its parts cannot be edited', () => {
  const t = new InternTable<{ a: { b: number[] } }>();
  const x = t.share({ a: { b: [1] } });
  assert.equal(t.share({ a: { b: [1] } }), x);
  assert.notEqual(t.share({ a: { b: [2] } }), x);
  assert.throws(() => {
    (x.a.b as number[]).push(2);
  }, TypeError);
  assert.throws(() => {
    (x.a as { b: number[] }).b = [];
  }, TypeError);
  assert.deepEqual(x, { a: { b: [1] } });
});

test('deepFreeze leaves byte buffers writable (they cannot be frozen) and freezes what holds them', () => {
  const any = deepFreeze({ type_url: 't', value: new Uint8Array([1, 2]) });
  assert.ok(Object.isFrozen(any));
  assert.equal(any.value[1], 2);
});

test('equal cluster settings, endpoint parts and inbound listener filters are one object each', () => {
  const out = output(5);
  const outbound = clustersOf(out, 'outbound').filter((c) => c.name?.startsWith('outbound|'));
  assert.ok(outbound.length > 10);
  assertShared(
    outbound.map((c) => c.connect_timeout),
    'connect timeouts',
  );
  assertShared(
    outbound.map((c) => c.circuit_breakers),
    'circuit breakers',
  );
  assertShared(
    outbound.map((c) => c.common_lb_config),
    'common lb config',
  );

  const inbound = [...out.groups.entries()].filter(([id]) => id.startsWith('inbound/'));
  const listeners = inbound.map(([, t]) => t.listeners.get('virtualInbound') as Listener);
  assert.ok(listeners.length > 10);
  assertShared(
    listeners.map((l) => l.listener_filters),
    'listener filters',
  );
  assert.equal(new Set(listeners.map((l) => l.address)).size, 1);
  const inboundClusters = inbound.flatMap(([, t]) => [...t.clusters.values()]);
  assertShared(
    inboundClusters.map((c) => c.circuit_breakers),
    'inbound circuit breakers',
  );
  const endpoints = [...(out.groups.get('endpoints')?.endpoints.values() ?? [])].flatMap(
    (cla: ClusterLoadAssignment) => cla.endpoints ?? [],
  );
  assertShared(
    endpoints.map((e) => e.locality),
    'localities',
  );
  assertShared(
    endpoints.flatMap((e) => (e.lb_endpoints ?? []).map((l) => l.metadata)),
    'endpoint metadata',
  );
});

test('shared parts are frozen: editing one resource cannot change another', () => {
  const out = output(7);
  const [a, b] = clustersOf(out, 'outbound').filter((c) => c.name?.startsWith('outbound|') && c.circuit_breakers);
  assert.ok(a && b && a.circuit_breakers === b.circuit_breakers);
  const before = encodeMessage(TypeName.Cluster, b);
  assert.throws(() => {
    (a.circuit_breakers as { thresholds: unknown[] }).thresholds.push({});
  }, TypeError);
  assert.throws(() => {
    (a.connect_timeout as { seconds: number }).seconds = 99;
  }, TypeError);
  assert.deepEqual(encodeMessage(TypeName.Cluster, b), before);
});

test('a compile after others (warm intern tables) encodes exactly as the first', () => {
  const encodeAll = (out: CompileOutput): string[] =>
    [...out.groups].flatMap(([id, t]) => [
      ...[...t.clusters].map(
        ([n, c]) => `${id} ${n} ${Buffer.from(encodeMessage(TypeName.Cluster, c)).toString('hex')}`,
      ),
      ...[...t.listeners].map(
        ([n, l]) => `${id} ${n} ${Buffer.from(encodeMessage(TypeName.Listener, l)).toString('hex')}`,
      ),
      ...[...t.endpoints].map(
        ([n, e]) => `${id} ${n} ${Buffer.from(encodeMessage(TypeName.ClusterLoadAssignment, e)).toString('hex')}`,
      ),
    ]);
  const first = encodeAll(output(11));
  output(12);
  output(13);
  assert.deepEqual(encodeAll(output(11)), first);
});

test("outbound clusters' TLS parts are shared and frozen: the plaintext socket match, each service's Istio mTLS context, the SDS secrets", () => {
  const clusters = clustersOf(output(7), 'outbound').filter((c) => c.transport_socket_matches?.length === 2);
  assert.ok(clusters.length > 10);
  const plaintext = new Set(clusters.map((c) => c.transport_socket_matches?.[1]));
  assert.equal(plaintext.size, 1, 'one tlsMode-disabled match');
  const [match] = plaintext;
  assert.ok(match && Object.isFrozen(match) && Object.isFrozen(match.transport_socket));
  // The packed context each socket encodes: only the SNI is the cluster's own.
  const contexts = clusters.map((c) => {
    const ctx = takePackedMessage(c.transport_socket_matches?.[0]?.transport_socket?.typed_config as object) as {
      common_tls_context: CommonTlsContext;
      sni: string;
    };
    assert.equal(ctx.sni, c.name?.replace(/^outbound\|(\d+)\|([^|]*)\|/, 'outbound_.$1_.$2_.'));
    return ctx.common_tls_context;
  });
  assertShared(contexts, 'common TLS contexts');
  assert.ok(contexts.every((c) => Object.isFrozen(c)));
  assert.equal(new Set(contexts.map((c) => c.tls_certificate_sds_secret_configs?.[0])).size, 1, 'one `default` secret');
  assert.equal(new Set(contexts.map((c) => c.tls_params)).size, 1, 'one TLS parameters object');
  assert.throws(() => {
    (contexts[0]?.alpn_protocols as string[]).push('h3');
  }, TypeError);
});

test('releaseInternTables empties every table: a later value is a new object, equal to the one before', () => {
  const t = new InternTable<{ a: number[] }>();
  const before = t.share({ a: [1, 2] });
  assert.equal(t.share({ a: [1, 2] }), before);
  releaseInternTables();
  const after = t.share({ a: [1, 2] });
  assert.notEqual(after, before);
  assert.deepEqual(after, before);
});

test('a compile after releaseInternTables gives the same output', () => {
  const first = output(7);
  releaseInternTables();
  assert.deepEqual(output(7), first);
});
