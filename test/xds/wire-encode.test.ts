/**
 * The fast writer (src/xds/wire/) against protobufjs, the reference: every resource it writes for
 * every golden case and for the synthetic mesh is byte-equal to protobufjs's encoding of the same
 * message, and every packed `Any` it wrote inside them is what protobufjs writes for its decoded
 * message. Edge values (negative and 64-bit numbers, packed lists, maps, long bodies, non-ASCII)
 * are checked one by one, and values it leaves to protobufjs fall back to it.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import { deepFreeze } from '../../src/compile/intern.js';
import type { CompileOutput } from '../../src/compile/types.js';
import { readInputFiles } from '../../src/inputs/files.js';
import { buildInputSet, parseDocuments, type RawDocument } from '../../src/inputs/index.js';
import { codecOf, decodeMessage, encodeMessage, encodeWithProtobufjs } from '../../src/xds/proto.js';
import { typeNameOf, XDS_TYPE_NAME, XDS_TYPES } from '../../src/xds/type-urls.js';
import { encodeFast } from '../../src/xds/wire/encode.js';
import { EXAMPLES, FIXTURES, REPO } from '../helpers/paths.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

function compileDocs(docs: readonly RawDocument[]): CompileOutput {
  return compile(buildInputSet(docs)).output;
}

async function goldenCase(dir: string): Promise<RawDocument[]> {
  const spec = JSON.parse(readFileSync(join(dir, 'case.json'), 'utf8')) as { inputs: string[] };
  const paths = spec.inputs.map((ref) => {
    const [scheme, ...rest] = ref.split(':');
    return join(scheme === 'fixtures' ? FIXTURES : scheme === 'examples' ? EXAMPLES : dir, rest.join(':'));
  });
  const docs: RawDocument[] = [];
  for (const f of await readInputFiles(paths)) docs.push(...parseDocuments(f.text, f.file).docs);
  return docs;
}

/** Every packed Any under a message: its type name and bytes. */
function packedAnys(value: unknown, out: { type: string; value: Uint8Array }[] = []): typeof out {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return out;
  const o = value as Record<string, unknown>;
  if (typeof o.type_url === 'string' && o.value instanceof Uint8Array)
    out.push({ type: typeNameOf(o.type_url), value: o.value });
  for (const v of Array.isArray(o) ? o : Object.values(o)) packedAnys(v, out);
  return out;
}

/** Checks every resource of an output; returns how many resources and packed Anys were compared. */
function assertSameAsProtobufjs(label: string, output: CompileOutput): { resources: number; anys: number } {
  let resources = 0;
  let anys = 0;
  const seen = new Set<Uint8Array>();
  for (const [group, table] of output.groups)
    for (const type of XDS_TYPES)
      for (const [name, message] of table[type] as ReadonlyMap<string, object>) {
        const typeName = XDS_TYPE_NAME[type];
        const fast = encodeFast(typeName, message);
        assert.ok(fast, `${label} ${group} ${type} ${name}: the fast writer handed it back`);
        assert.equal(hex(fast), hex(encodeWithProtobufjs(typeName, message)), `${label} ${group} ${type} ${name}`);
        resources++;
        for (const any of packedAnys(message)) {
          if (seen.has(any.value) || !codecOf(any.type)) continue;
          seen.add(any.value);
          const decoded = decodeMessage(any.type, any.value);
          assert.equal(
            hex(any.value),
            hex(encodeWithProtobufjs(any.type, decoded)),
            `${label} ${name}: packed ${any.type}`,
          );
          anys++;
        }
      }
  return { resources, anys };
}

const GOLDEN = join(REPO, 'test', 'golden');
const cases = readdirSync(GOLDEN)
  .filter((d) => existsSync(join(GOLDEN, d, 'case.json')))
  .sort();

test('every golden case: each resource byte-equal to protobufjs, each packed Any too', async () => {
  let total = 0;
  for (const name of cases) {
    const { resources } = assertSameAsProtobufjs(name, compileDocs(await goldenCase(join(GOLDEN, name))));
    total += resources;
  }
  assert.ok(cases.length >= 10 && total > 500, `${cases.length} cases, ${total} resources`);
});

test('the synthetic mesh: each resource byte-equal to protobufjs', () => {
  const { resources, anys } = assertSameAsProtobufjs('synthetic', compileDocs(generateMesh({ services: 150 }).docs));
  assert.ok(resources > 500 && anys > 50, `${resources} resources, ${anys} packed Anys`);
});

test('a shared sub-message is written from its kept bytes, identical each time', () => {
  const transport_socket = {
    name: 'envoy.transport_sockets.tls',
    typed_config: { type_url: 'type.googleapis.com/x.Y', value: new Uint8Array(300).fill(7) },
  };
  const a = { name: 'a', transport_socket };
  const b = { name: 'b', transport_socket };
  for (const c of [a, b, a])
    assert.equal(
      hex(encodeMessage('envoy.config.cluster.v3.Cluster', c)),
      hex(encodeWithProtobufjs('envoy.config.cluster.v3.Cluster', c)),
    );
});

test('a frozen filter chain is written from its kept bytes; an unfrozen one is written anew each time', () => {
  const LISTENER = 'envoy.config.listener.v3.Listener';
  const config = (): Uint8Array => new Uint8Array(300).fill(7);
  const chain = (name: string) => ({
    name,
    filter_chain_match: { destination_port: { value: 8080 }, transport_protocol: 'tls' },
    filters: [
      {
        name: 'envoy.filters.network.tcp_proxy',
        typed_config: { type_url: 'type.googleapis.com/x.Y', value: config() },
      },
    ],
  });
  const frozen = deepFreeze(chain('frozen'));
  const own = chain('own');
  const listener = (name: string) => ({ name, filter_chains: [frozen, own, frozen], listener_filters: [] });
  for (const name of ['a', 'b', 'a'])
    assert.equal(
      hex(encodeMessage(LISTENER, listener(name))),
      hex(encodeWithProtobufjs(LISTENER, listener(name))),
      name,
    );
  // Bytes cannot be frozen: a change inside them shows which chain was written anew. Only the
  // unfrozen one is (the compiler never changes a message it has handed out, frozen or not).
  const before = encodeMessage(LISTENER, listener('c'));
  (frozen.filters[0]?.typed_config.value as Uint8Array).fill(0xee);
  own.filters[0]?.typed_config.value.fill(0xdd);
  const after = encodeMessage(LISTENER, listener('c'));
  assert.equal(after.length, before.length);
  const changed = after.filter((b, i) => b !== before[i]);
  assert.equal(changed.length, 300, 'only the unfrozen chain is written anew');
  assert.ok(
    changed.every((b) => b === 0xdd),
    'the frozen chain: its kept bytes, twice',
  );
});

test('edge values: byte-equal to protobufjs', () => {
  const long = 'x'.repeat(20_000);
  const samples: [string, object][] = [
    // negative int32 (ten bytes), implicit defaults skipped, oneof members written at 0
    ['envoy.config.core.v3.SocketAddress', { protocol: 0, address: '', port_value: 0, ipv4_compat: false }],
    ['envoy.config.core.v3.SocketAddress', { address: 'héllo wörld ✓ 🚀', port_value: 4294967295 }],
    ['google.protobuf.Int32Value', { value: -5 }],
    ['google.protobuf.Int64Value', { value: -1 }],
    ['google.protobuf.Int64Value', { value: 2 ** 40 + 3 }],
    ['google.protobuf.UInt64Value', { value: 2 ** 53 - 1 }],
    ['google.protobuf.DoubleValue', { value: -0 }],
    ['google.protobuf.DoubleValue', { value: 3.25 }],
    ['google.protobuf.FloatValue', { value: 0.1 }],
    ['google.protobuf.Duration', { seconds: 0, nanos: 0 }],
    ['google.protobuf.Duration', { seconds: 1, nanos: 500_000_000 }],
    ['google.protobuf.BytesValue', { value: new Uint8Array([0, 1, 255]) }],
    // packed uint32 list, repeated sub-messages, a body > 16 KiB (a three-byte length)
    [
      'envoy.config.route.v3.RetryPolicy',
      { retry_on: '5xx', retriable_status_codes: [503, 0, 70000], num_retries: { value: 2 } },
    ],
    [
      'envoy.config.route.v3.VirtualHost',
      { name: long, domains: [long, 'b'], routes: [{ name: long, match: { prefix: '/' } }] },
    ],
    // maps (string → Struct → Value with every kind)
    [
      'envoy.config.core.v3.Metadata',
      {
        filter_metadata: {
          istio: {
            fields: {
              s: { stringValue: 'v' },
              n: { numberValue: 1.5 },
              b: { boolValue: false },
              z: { nullValue: 0 },
              l: { listValue: { values: [{ stringValue: 'a' }, { numberValue: -2 }] } },
              o: { structValue: { fields: { k: { stringValue: '' } } } },
            },
          },
          empty: {},
        },
      },
    ],
  ];
  for (const [type, message] of samples) {
    const fast = encodeFast(type, message);
    assert.ok(fast, `${type}: handed back`);
    assert.equal(
      hex(fast),
      hex(encodeWithProtobufjs(type, message)),
      `${type} ${JSON.stringify(message).slice(0, 80)}`,
    );
  }
});

test('values protobufjs writes its own way go to protobufjs; encodeMessage still gives its bytes', () => {
  const handedBack: [string, object][] = [
    ['google.protobuf.StringValue', { value: 'lone \ud800 surrogate' }],
    ['google.protobuf.Int64Value', { value: '12345678901234' }],
    ['google.protobuf.BytesValue', { value: 'AAEC' }],
    ['google.protobuf.Duration', { seconds: 1, $unknowns: [new Uint8Array([8, 1])] }],
    ['no.such.Type', {}],
  ];
  for (const [type, message] of handedBack) {
    assert.equal(encodeFast(type, message), undefined, `${type} ${JSON.stringify(message)}`);
    if (type !== 'no.such.Type')
      assert.equal(hex(encodeMessage(type, message)), hex(encodeWithProtobufjs(type, message)));
  }
});

test('sparse messages nested deeper than the field-position stack, and a write handed back half-way, leave every write exact', () => {
  const PERMISSION = 'envoy.config.rbac.v3.Permission';
  // Permission declares 13 fields (written by its own keys); each level sets three, so 90 levels
  // stack 270 positions, past the stack's first size.
  const nested = (depth: number, leaf: object): object => {
    let m: object = leaf;
    for (let i = 0; i < depth; i++) m = { destination_port: 8000 + i, not_rule: m, any: i % 2 === 0 };
    return m;
  };
  const deep = nested(90, { destination_port: 1 });
  const handedBack = nested(60, { destination_port: 2, $unknowns: [new Uint8Array([8, 1])] });
  for (const [label, message] of [
    ['deep', deep],
    ['handed back', handedBack],
    ['deep again', deep],
  ] as const) {
    const fast = encodeFast(PERMISSION, message);
    if (label === 'handed back') assert.equal(fast, undefined, label);
    else assert.equal(hex(fast ?? new Uint8Array()), hex(encodeWithProtobufjs(PERMISSION, message)), label);
  }
});

test('inherited properties are not fields or map entries, as in protobufjs', () => {
  const cluster = Object.assign(Object.create({ name: 'inherited', alt_stat_name: 'inherited' }) as object, {
    alt_stat_name: 'own',
  });
  const filterMetadata = Object.assign(Object.create({ inherited: { fields: {} } }) as object, {
    own: { fields: { k: { stringValue: 'v' } } },
  });
  const samples: [string, object][] = [
    ['envoy.config.cluster.v3.Cluster', cluster],
    ['envoy.config.core.v3.Metadata', { filter_metadata: filterMetadata }],
  ];
  for (const [type, message] of samples) {
    const fast = encodeFast(type, message);
    assert.ok(fast, `${type}: handed back`);
    assert.equal(hex(fast), hex(encodeWithProtobufjs(type, message)), type);
    assert.ok(!Buffer.from(fast).toString('latin1').includes('inherited'), `${type}: an inherited key was written`);
  }
});

test("a cluster's frozen parts (settings, the plaintext socket match) are written from their kept bytes; its own transport socket anew", () => {
  const CLUSTER = 'envoy.config.cluster.v3.Cluster';
  const socket = (value: Uint8Array) => ({
    name: 'envoy.transport_sockets.tls',
    typed_config: { type_url: 'type.googleapis.com/x.Y', value },
  });
  const plaintext = deepFreeze({
    name: 'tlsMode-disabled',
    match: {},
    transport_socket: socket(new Uint8Array(200).fill(7)),
  });
  const breakers = deepFreeze({ thresholds: [{ max_connections: { value: 100 }, track_remaining: true }] });
  const own = socket(new Uint8Array(300).fill(8));
  const cluster = (name: string) => ({
    name,
    circuit_breakers: breakers,
    outlier_detection: deepFreeze({ consecutive_5xx: { value: 5 }, interval: { seconds: 10 } }),
    transport_socket_matches: [{ name: 'tlsMode-istio', match: {}, transport_socket: own }, plaintext],
  });
  for (const name of ['a', 'b', 'a'])
    assert.equal(hex(encodeMessage(CLUSTER, cluster(name))), hex(encodeWithProtobufjs(CLUSTER, cluster(name))), name);
  // As above: a change inside the bytes shows which parts were written anew.
  const before = encodeMessage(CLUSTER, cluster('c'));
  plaintext.transport_socket.typed_config.value.fill(0xee);
  own.typed_config.value.fill(0xdd);
  const after = encodeMessage(CLUSTER, cluster('c'));
  const changed = after.filter((b, i) => b !== before[i]);
  assert.equal(changed.length, 300, "only the cluster's own socket is written anew");
  assert.ok(changed.every((b) => b === 0xdd));
});
