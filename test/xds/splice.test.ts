/**
 * Editing a repeated field of an encoded message in place (src/xds/wire/splice.ts), as an
 * EnvoyFilter's HTTP_FILTER patch edits every inbound HCM's `http_filters`: for bytes in field-number
 * order the result is byte for byte the encoding of the edited message; other bytes are refused.
 * And end to end: the HCMs a compile patched this way are the encodings of what they hold.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envoyFilterDocuments } from '../../bench/envoy-filters.js';
import { generateMesh } from '../../bench/synthetic.js';
import { compileOwned } from '../../src/compile/index.js';
import { buildInputSet } from '../../src/inputs/index.js';
import {
  decodeMessage,
  encodeMessage,
  packAny,
  type Any,
  type HttpConnectionManager,
  type Listener,
} from '../../src/xds/proto.js';
import { TypeName } from '../../src/xds/type-urls.js';
import { lengthDelimited, repeatedField, withItems } from '../../src/xds/wire/splice.js';

const HCM = TypeName.HttpConnectionManager;
const HTTP_FILTER = 'envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter';
const HTTP_FILTERS = 5;

const filter = (name: string) => ({ name, typed_config: packAny(TypeName.Router, {}) });
const [a, b, router, lua] = ['a', 'b', 'envoy.filters.http.router', 'envoy.lua'].map(filter) as [
  ReturnType<typeof filter>,
  ReturnType<typeof filter>,
  ReturnType<typeof filter>,
  ReturnType<typeof filter>,
];
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const item = (f: object): Uint8Array => lengthDelimited(HTTP_FILTERS, encodeMessage(HTTP_FILTER, f));

/** An HCM with fields before (1-4) and after (6, 7, 36) its HTTP filters. */
const hcm = (filters?: object[]): HttpConnectionManager => ({
  codec_type: 0,
  stat_prefix: 'inbound_0.0.0.0_9080',
  rds: { route_config_name: '9080', config_source: { ads: {} } },
  ...(filters ? { http_filters: filters } : {}),
  use_remote_address: { value: false },
  tracing: { client_sampling: { value: 100 } },
  normalize_path: { value: true },
});

test('the items of a repeated field replaced in place: the encoding of the message with the new list', () => {
  const bytes = encodeMessage(HCM, hcm([a, b, router]));
  const field = repeatedField(bytes, HTTP_FILTERS);
  assert.ok(field);
  assert.equal(field.items.length, 3);
  const [ia, ib, ir] = field.items as [Uint8Array, Uint8Array, Uint8Array];
  for (const [items, list] of [
    [
      [ia, item(lua), ib, ir],
      [a, lua, b, router],
    ],
    [[ir], [router]],
    [[], []],
    [
      [item(lua), ia, ib, ir, item(lua)],
      [lua, a, b, router, lua],
    ],
  ] as const)
    assert.equal(hex(withItems(field, items)), hex(encodeMessage(HCM, hcm([...list]))), list.map((f) => f.name).join());
});

test('a message without the field: the items go where the field would be', () => {
  const field = repeatedField(encodeMessage(HCM, hcm()), HTTP_FILTERS);
  assert.ok(field);
  assert.equal(field.items.length, 0);
  assert.equal(hex(withItems(field, [item(lua), item(router)])), hex(encodeMessage(HCM, hcm([lua, router]))));
  // Nothing after it: the end.
  const head = repeatedField(encodeMessage(HCM, { stat_prefix: 'x' }), HTTP_FILTERS);
  assert.equal(
    hex(withItems(head as NonNullable<typeof head>, [item(router)])),
    hex(encodeMessage(HCM, { stat_prefix: 'x', http_filters: [router] })),
  );
});

test('bytes not in field-number order, or not parsing, are refused', () => {
  const filters = encodeMessage(HCM, { http_filters: [router] });
  const prefix = encodeMessage(HCM, { stat_prefix: 'x' });
  // A valid encoding (a message is its fields in any order), but not the wire writer's.
  const appended = new Uint8Array([...filters, ...prefix]);
  assert.deepEqual(
    decodeMessage(HCM, appended),
    decodeMessage(HCM, encodeMessage(HCM, { stat_prefix: 'x', http_filters: [router] })),
  );
  assert.equal(repeatedField(appended, HTTP_FILTERS), undefined);
  assert.equal(repeatedField(new Uint8Array([0x2a, 0x05, 0x01]), HTTP_FILTERS), undefined, 'truncated');
  assert.equal(repeatedField(new Uint8Array([0x28, 0x01]), HTTP_FILTERS), undefined, 'field 5 as a varint');
});

test("an HTTP_FILTER patch edits every inbound HCM's bytes in place: each is the encoding of the HCM it holds", () => {
  const docs = [...generateMesh({ services: 30 }).docs, ...envoyFilterDocuments()];
  const { output } = compileOwned(buildInputSet(docs));
  let patched = 0;
  for (const [id, table] of output.groups) {
    if (!id.startsWith('inbound/')) continue;
    for (const l of table.listeners.values() as Iterable<Listener>)
      for (const chain of l.filter_chains ?? [])
        for (const f of chain.filters ?? []) {
          const any = f.typed_config as Any | undefined;
          if (f.name !== 'envoy.filters.network.http_connection_manager' || !any?.value) continue;
          const decoded = decodeMessage(HCM, any.value) as HttpConnectionManager;
          if (!decoded.http_filters?.some((h) => h.name === 'envoy.lua')) continue;
          patched++;
          assert.equal(hex(encodeMessage(HCM, decoded)), hex(any.value), `${id} ${l.name}`);
        }
  }
  assert.ok(patched >= 30, `${patched} patched HCMs`);
});
