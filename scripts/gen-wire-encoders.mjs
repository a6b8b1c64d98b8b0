// Writes src/xds/gen/wire-encoders.js: one plain function per message type that writes the set
// fields of a `$Properties` object in field-number order with constant tags, calling the function
// of each sub-message's type directly. The rules are the field tables of gen-wire-schema.mjs
// (protobufjs's own: fields by id, implicit presence, packing), so the bytes are protobufjs's;
// the checks that hand a value back to protobufjs (src/xds/wire/runtime.ts) are the same as the
// table-walking writer had. Plain build-time code: workerd forbids eval and `new Function`.
import { writeFileSync } from 'node:fs';
import { FLAG, readWireTypes } from './gen-wire-schema.mjs';

/** protobufjs's `util.recursionLimit`. */
const RECURSION_LIMIT = 100;

/** protobufjs's `types.basic`: the wire type of each scalar. */
const WIRE_TYPE = {
  double: 1,
  float: 5,
  int32: 0,
  uint32: 0,
  sint32: 0,
  fixed32: 5,
  sfixed32: 5,
  int64: 0,
  uint64: 0,
  sint64: 0,
  fixed64: 1,
  sfixed64: 1,
  bool: 0,
  string: 2,
  bytes: 2,
};

/** The writer method of each scalar (src/xds/wire/writer.ts) and the check its value `x` must pass first. */
const NUMBER = (x) => `if (typeof ${x} !== 'number') notNumber();`;
const SCALAR = {
  string: ['string', (x) => `if (typeof ${x} !== 'string') notString();`],
  bytes: ['bytes', (x) => `if (!(${x} instanceof Uint8Array)) notBytes();`],
  bool: ['bool', () => ''],
  int32: ['int32', NUMBER],
  uint32: ['uint32', NUMBER],
  sint32: ['sint32', NUMBER],
  fixed32: ['fixed32', NUMBER],
  sfixed32: ['fixed32', NUMBER],
  double: ['double', NUMBER],
  float: ['float', NUMBER],
  int64: ['int64', NUMBER],
  uint64: ['int64', NUMBER],
  sint64: ['sint64', NUMBER],
  fixed64: ['fixed64', NUMBER],
  sfixed64: ['fixed64', NUMBER],
};

/** Checks scalar `x` and writes it (no tag). */
function writeScalar(scalar, x) {
  const [method, check] = SCALAR[scalar];
  return `${check(x)} w.${method}(${x});`.trim();
}

/** The runtime's field writer of each scalar: `(w, tag, value)` checks the value, writes the tag and the value. */
const FIELD = {
  string: 'str',
  bytes: 'byt',
  bool: 'bool',
  int32: 'i32',
  uint32: 'u32',
  sint32: 's32',
  fixed32: 'f32',
  sfixed32: 'f32',
  double: 'dbl',
  float: 'flt',
  int64: 'i64',
  uint64: 'i64',
  sint64: 's64',
  fixed64: 'f64',
  sfixed64: 'f64',
};

const tagOf = (id, wire) => ((id << 3) | wire) >>> 0;

/** Scalar `x` as field `id` (tag and value). */
function scalarField(scalar, id, x) {
  return `${FIELD[scalar]}(w, ${tagOf(id, WIRE_TYPE[scalar])}, ${x});`;
}

/** When an implicit-presence scalar `v` is written (not its type's default), as protobufjs decides. */
function notDefault(scalar) {
  switch (scalar) {
    case 'bool':
      return 'v !== false';
    case 'string':
      return "v !== ''";
    case 'bytes':
      return 'v.length';
    case 'double':
    case 'float':
      return '(v !== 0 || 1 / v < 0)'; // !Object.is(v, 0): -0 is written
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return 'set64(v)';
    default:
      return 'v !== 0';
  }
}

/** Writes the varint bytes of a tag: `w.t1(b)`, `w.t2(b0, b1)`, else `w.uint32(tag)`. */
function tag(id, wire) {
  const t = ((id << 3) | wire) >>> 0;
  if (t < 128) return `w.t1(${t});`;
  if (t < 1 << 14) return `w.t2(${(t & 127) | 128}, ${t >>> 7});`;
  return `w.uint32(${t});`;
}

const fnName = (typeName) => typeName.replaceAll('.', '$');

/**
 * Types whose objects the compiler shares between resources, so the runtime keeps their bytes per
 * object (measured on the synthetic mesh: each is reused 3-4 times per encoding). Types whose
 * objects are mostly one per resource (Metadata, Struct) are not: keeping their bytes would cost
 * memory for nothing (measured: no gain). Nor is `google.protobuf.Any`: its `value` already holds the
 * packed bytes, so writing it again is a copy, and a kept copy per Any cost ~20 MB at 10k services.
 */
const SHARED_TYPES = new Set(['envoy.config.route.v3.RetryPolicy', 'envoy.config.core.v3.ConfigSource']);

/**
 * Types of which the compiler shares only some objects, and marks those by freezing them (interned,
 * deep-frozen: src/compile/intern.ts): a listener's filter chains (`virtualInbound`'s passthrough and
 * TCP chains are one object in every workload with the same policies, an HTTP chain is the
 * service's own), its listener filters, a chain's filters and matches; a cluster's settings
 * (cluster/shared-parts.ts) and auto-mTLS plaintext match; transport sockets (the inbound mTLS ones
 * are shared and frozen, an outbound cluster's carries its own SNI and is written anew). The runtime
 * keeps the bytes of the frozen ones only, so what it keeps is bounded by the compiler's intern
 * tables.
 */
const FROZEN_SHARED_TYPES = new Set([
  'envoy.config.listener.v3.FilterChain',
  'envoy.config.listener.v3.ListenerFilter',
  'envoy.config.listener.v3.Filter',
  'envoy.config.listener.v3.FilterChainMatch',
  'envoy.config.core.v3.TransportSocket',
  'envoy.config.cluster.v3.Cluster.TransportSocketMatch',
  'envoy.config.cluster.v3.CircuitBreakers',
  'envoy.config.cluster.v3.OutlierDetection',
  'envoy.config.cluster.v3.Cluster.CommonLbConfig',
]);

/** descriptorJs: the generated descriptor module. */
export function writeWireEncoders(descriptorJs, outJs, outDts) {
  const sharedTypes = SHARED_TYPES;
  const types = readWireTypes(descriptorJs);
  const names = Object.keys(types).sort();
  const out = [
    '// Generated by scripts/gen-wire-encoders.mjs. Do not edit.',
    '// One writer per message type: its set fields in field-number order, constant tags.',
    '/* eslint-disable */',
    'export default function wireEncoders(rt) {',
    '  const { hasOwn, tooDeep, unknowns, notString, notBytes, notNumber, unsupported, sub, shared, frozen, set64, str, byt, bool, i32, u32, s32, f32, dbl, flt, i64, s64, f64 } = rt;',
  ];
  for (const name of names) out.push(...typeWriter(name, types[name], sharedTypes));
  out.push('  return new Map([');
  for (const name of names) out.push(`    [${JSON.stringify(name)}, ${fnName(name)}],`);
  out.push('  ]);', '}', '');
  writeFileSync(outJs, out.join('\n'));
  writeFileSync(
    outDts,
    '// Generated by scripts/gen-wire-encoders.mjs. Do not edit.\nimport type { MessageWriter, WireRuntime } from "../wire/runtime.js";\nexport default function wireEncoders(rt: WireRuntime): ReadonlyMap<string, MessageWriter>;\n',
  );
}

/**
 * Types with more fields than this are written by their own keys: a message of a large type (a
 * Cluster declares ~50 fields) sets a few, and a load of each absent field from objects of many
 * shapes costs more than a `for…in` over the present ones.
 */
const SPARSE_FROM_FIELDS = 10;

function typeWriter(name, rows, sharedTypes) {
  const fn = fnName(name);
  const bad = rows.find((r) => r[3] & FLAG.unsupported);
  if (bad)
    return [`  function ${fn}() { unsupported(${JSON.stringify(`${name}.${bad[0]}: a group or required field`)}); }`];
  const lines = [
    `  function ${fn}(w, m, d) {`,
    `    if (d > ${RECURSION_LIMIT}) tooDeep();`,
    "    if (m.$unknowns != null && hasOwn.call(m, '$unknowns')) unknowns();",
  ];
  if (rows.length) lines.push('    let v, at;');
  if (rows.length <= SPARSE_FROM_FIELDS) {
    for (const row of rows) lines.push(...fieldWriter(row, sharedTypes).map((l) => `    ${l}`));
    lines.push('  }');
    return lines;
  }
  // Sparse: a bit per present key (by field-number position), then the set bits in order.
  const words = Math.ceil(rows.length / 32);
  const bits = Array.from({ length: words }, (_, i) => `b${i}`);
  const positions = `${fn}$at`;
  lines.push(`    let ${bits.map((b) => `${b} = 0`).join(', ')};`);
  lines.push('    for (const k in m) {');
  lines.push(`      const p = ${positions}.get(k);`);
  if (words === 1) lines.push('      if (p !== undefined) b0 |= 1 << p;');
  else {
    lines.push('      if (p === undefined) continue;');
    lines.push(`      switch (p >> 5) { ${bits.map((b, i) => `case ${i}: ${b} |= 1 << (p & 31); break;`).join(' ')} }`);
  }
  lines.push('    }');
  rows.forEach((row, i) => {
    lines.push(`    if (b${i >> 5} & ${(1 << (i & 31)) | 0}) {`);
    lines.push(...fieldWriter(row, sharedTypes).map((l) => `      ${l}`));
    lines.push('    }');
  });
  lines.push('  }');
  const at = rows.map((r, i) => `[${JSON.stringify(r[0])}, ${i}]`).join(', ');
  return [`  const ${positions} = new Map([${at}]);`, ...lines];
}

/** Sub-message `x` (of type `message`) as field `id` (tag, length, body). */
function subWriter(x, id, message, sharedTypes) {
  const how = sharedTypes.has(message) ? 'shared' : FROZEN_SHARED_TYPES.has(message) ? 'frozen' : 'sub';
  return [`${how}(w, ${tagOf(id, 2)}, ${x}, d, ${fnName(message)});`];
}

function fieldWriter([field, id, scalar, flags, ref = '', value = ''], sharedTypes) {
  const key = JSON.stringify(field);
  const get = /^[A-Za-z_$][\w$]*$/.test(field) ? `m.${field}` : `m[${key}]`;
  const own = `(v = ${get}) != null && hasOwn.call(m, ${key})`;
  if (flags & FLAG.map) {
    if (ref !== 'string') return [`if (${own}) unsupported('map key type');`];
    const entry = scalar === '' ? subWriter('x', 2, value, sharedTypes) : [scalarField(scalar, 2, 'x')];
    return [
      `if (${own})`,
      '  for (const k in v) {',
      '    if (!hasOwn.call(v, k)) continue;',
      `    const x = v[k];`,
      `    ${tag(id, 2)} const e = w.fork(); w.t1(10); w.string(k);`,
      ...entry.map((l) => `    ${l}`),
      '    w.ldelim(e);',
      '  }',
    ];
  }
  if (flags & FLAG.repeated) {
    // protobufjs writes a repeated field by its value alone (no own-property check).
    const list = `(v = ${get}) != null && v.length`;
    if (flags & FLAG.packed)
      return [
        `if (${list}) {`,
        `  ${tag(id, 2)} at = w.fork();`,
        `  for (let i = 0; i < v.length; i++) { const x = v[i]; ${writeScalar(scalar, 'x')} }`,
        '  w.ldelim(at);',
        '}',
      ];
    const body = scalar === '' ? subWriter('x', id, ref, sharedTypes) : [scalarField(scalar, id, 'x')];
    return [`if (${list}) for (let i = 0; i < v.length; i++) { const x = v[i]; ${body.join(' ')} }`];
  }
  if (scalar === '') return [`if (${own}) ${subWriter('v', id, ref, sharedTypes)}`];
  const when = flags & FLAG.implicit ? `${own} && ${notDefault(scalar)}` : own;
  return [`if (${when}) ${scalarField(scalar, id, 'v')}`];
}
