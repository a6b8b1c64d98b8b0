/**
 * The generated per-type writers (scripts/gen-wire-encoders.mjs → src/xds/gen/wire-encoders.js)
 * against protobufjs, the reference: every message type of the descriptor, with every field set,
 * and every resource of the synthetic 2k-service mesh, byte for byte. The generated module is plain
 * code (workerd forbids eval and `new Function`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import protobuf from 'protobufjs';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import { buildInputSet } from '../../src/inputs/index.js';
import descriptor from '../../src/xds/gen/descriptor.js';
import { encodeWithProtobufjs } from '../../src/xds/proto.js';
import { XDS_TYPE_NAME, XDS_TYPES } from '../../src/xds/type-urls.js';
import { encodeFast } from '../../src/xds/wire/encode.js';
import { REPO } from '../helpers/paths.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

const root = protobuf.Root.fromJSON(descriptor as unknown as protobuf.INamespace);
root.resolveAll();

function allTypes(ns: protobuf.NamespaceBase, out: protobuf.Type[] = []): protobuf.Type[] {
  for (const nested of ns.nestedArray) {
    if (nested instanceof protobuf.Type) out.push(nested);
    if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type) allTypes(nested, out);
  }
  return out;
}

/** A value of a scalar type that is not its default (so implicit-presence fields are written too). */
function scalarSample(type: string, i: number): unknown {
  switch (type) {
    case 'string':
      return `v${i}-é`;
    case 'bytes':
      return new Uint8Array([i, 0, 255]);
    case 'bool':
      return true;
    case 'double':
    case 'float':
      return -1.5 - i;
    case 'int32':
    case 'sint32':
    case 'sfixed32':
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      return -3 - i;
    default:
      return 300 + i;
  }
}

/** Every field of `type` set: scalars to a non-default value, sub-messages to an empty (or one-level) message, lists of two, maps of two entries. */
function fullMessage(type: protobuf.Type, depth: number): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  for (const [i, f] of type.fieldsArray.entries()) {
    f.resolve();
    const one = (): unknown =>
      f.resolvedType instanceof protobuf.Type
        ? depth > 0
          ? fullMessage(f.resolvedType, depth - 1)
          : {}
        : f.resolvedType instanceof protobuf.Enum
          ? 1
          : scalarSample(f.type, i);
    if (f.map) m[f.name] = { b: one(), a: one() };
    else if (f.repeated) m[f.name] = [one(), one()];
    else m[f.name] = one();
  }
  return m;
}

const unsupported = (type: protobuf.Type): boolean => type.fieldsArray.some((f) => f.required || f.delimited);

/** Whether fullMessage(type, depth) holds something the fast writer leaves to protobufjs. */
function handsBack(type: protobuf.Type, depth: number): boolean {
  if (unsupported(type)) return true;
  return type.fieldsArray.some(
    (f) =>
      (f instanceof protobuf.MapField && f.keyType !== 'string') ||
      (f.resolvedType instanceof protobuf.Type &&
        (depth > 0 ? handsBack(f.resolvedType, depth - 1) : unsupported(f.resolvedType))),
  );
}

test('every message type of the descriptor, every field set: byte-equal to protobufjs', () => {
  const types = allTypes(root);
  let compared = 0;
  for (const type of types) {
    const name = type.fullName.slice(1);
    const samples: [object, boolean][] = [
      [{}, unsupported(type)],
      [fullMessage(type, 0), handsBack(type, 0)],
      [fullMessage(type, 1), handsBack(type, 1)],
    ];
    for (const [message, leftToProtobufjs] of samples) {
      const fast = encodeFast(name, message);
      if (leftToProtobufjs) {
        assert.equal(
          fast,
          undefined,
          `${name}: a group, a required field or a non-string map key is left to protobufjs`,
        );
        continue;
      }
      assert.ok(fast, `${name}: handed back`);
      assert.equal(hex(fast), hex(encodeWithProtobufjs(name, message)), name);
      compared++;
    }
  }
  assert.ok(types.length > 500 && compared > 1400, `${types.length} types, ${compared} messages compared`);
});

test('the synthetic mesh at 2000 services: each resource byte-equal to protobufjs', () => {
  const { output } = compile(buildInputSet(generateMesh({ services: 2000 }).docs));
  let resources = 0;
  for (const [group, table] of output.groups)
    for (const type of XDS_TYPES)
      for (const [name, message] of table[type] as ReadonlyMap<string, object>) {
        const typeName = XDS_TYPE_NAME[type];
        const fast = encodeFast(typeName, message);
        assert.ok(fast, `${group} ${type} ${name}: handed back`);
        assert.ok(Buffer.from(fast).equals(encodeWithProtobufjs(typeName, message)), `${group} ${type} ${name}`);
        resources++;
      }
  assert.ok(resources > 20_000, `${resources} resources`);
});

test('the generated writers are plain code: no eval, no Function constructor', () => {
  const code = readFileSync(join(REPO, 'src', 'xds', 'gen', 'wire-encoders.js'), 'utf8');
  assert.doesNotMatch(code, /\beval\s*\(|\bFunction\s*\(/);
  assert.match(code, /function envoy\$config\$cluster\$v3\$Cluster\(w, m, d\)/);
});

test('strings around the native-encoder length, ASCII or not, are byte-equal; a lone surrogate is left to protobufjs', () => {
  const TYPE = 'google.protobuf.StringValue';
  for (let n = 0; n < 200; n += n < 40 ? 1 : 37)
    for (const tail of ['', 'é', '✓', '🚀']) {
      const value = 'a'.repeat(n) + tail;
      const fast = encodeFast(TYPE, { value });
      assert.ok(fast, `${n} ${tail}`);
      assert.equal(hex(fast), hex(encodeWithProtobufjs(TYPE, { value })), `${n} ${JSON.stringify(tail)}`);
    }
  for (const value of ['x'.repeat(40) + '\ud800', '\udc00' + 'x'.repeat(40), 'short \ud800'])
    assert.equal(encodeFast(TYPE, { value }), undefined, JSON.stringify(value.slice(-3)));
});

test('an inherited repeated field is written, as protobufjs writes it (it reads lists without an own-property check)', () => {
  const samples: [string, object][] = [
    // VirtualHost declares more than 10 fields (read by its keys), ListValue one (read by name).
    [
      'envoy.config.route.v3.VirtualHost',
      Object.assign(Object.create({ domains: ['inherited.example'] }) as object, { name: 'vh' }),
    ],
    ['google.protobuf.ListValue', Object.create({ values: [{ stringValue: 'inherited' }] }) as object],
  ];
  for (const [type, message] of samples) {
    const fast = encodeFast(type, message);
    assert.ok(fast, `${type}: handed back`);
    assert.equal(hex(fast), hex(encodeWithProtobufjs(type, message)), type);
    assert.ok(
      Buffer.from(fast).toString('latin1').includes('inherited'),
      `${type}: the inherited list was not written`,
    );
  }
});
