// Builds the protoc-gen-validate rule table of the Envoy messages meshsnap emits, from the
// `(validate.rules)` field options and `(validate.required)` oneof options of the very .proto files
// the static code is generated from. Read by src/xds/validate/ (the checker); data only, so it
// imports in workerd. protobufjs's `parsedOptions` keep every value of a repeated rule (`in`,
// `not_in`), which its flattened `options` (and `pbjs -t json`) do not.
//
// The table keeps only what the checker walks: a message is listed when it has a rule, a required
// oneof, an `Any` field, or a field of a listed message type (fixed point); a field is listed when
// it has rules or leads to a listed message. Unknown rule kinds fail the build, so every rule in the
// table is one the checker enforces.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';

/** Rule kinds (and their keys) src/xds/validate/ enforces. */
const KNOWN = {
  string: [
    'const',
    'len',
    'min_len',
    'max_len',
    'len_bytes',
    'min_bytes',
    'max_bytes',
    'pattern',
    'prefix',
    'suffix',
    'contains',
    'not_contains',
    'in',
    'not_in',
    'well_known_regex',
    'strict',
    'ignore_empty',
  ],
  bytes: ['const', 'len', 'min_len', 'max_len', 'prefix', 'suffix', 'contains', 'in', 'not_in', 'ignore_empty'],
  number: ['const', 'lt', 'lte', 'gt', 'gte', 'in', 'not_in', 'ignore_empty'],
  bool: ['const'],
  enum: ['const', 'defined_only', 'in', 'not_in'],
  message: ['required', 'skip'],
  repeated: ['min_items', 'max_items', 'unique', 'items', 'ignore_empty'],
  map: ['min_pairs', 'max_pairs', 'no_sparse', 'keys', 'values', 'ignore_empty'],
  any: ['required', 'in', 'not_in'],
  duration: ['required', 'const', 'lt', 'lte', 'gt', 'gte', 'in', 'not_in'],
  timestamp: ['required', 'const', 'lt', 'lte', 'gt', 'gte', 'lt_now', 'gt_now', 'within'],
};
const NUMBER_KINDS = [
  'float',
  'double',
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
  'sfixed32',
  'sfixed64',
];

function assertKnownRules(rules, where) {
  for (const [kind, body] of Object.entries(rules)) {
    const keys = KNOWN[NUMBER_KINDS.includes(kind) ? 'number' : kind];
    if (!keys) throw new Error(`${where}: validate rule kind ${kind} is not enforced by src/xds/validate/`);
    for (const [key, value] of Object.entries(body)) {
      if (!keys.includes(key))
        throw new Error(`${where}: validate rule ${kind}.${key} is not enforced by src/xds/validate/`);
      if (key === 'items' || key === 'keys' || key === 'values') assertKnownRules(value, `${where}.${kind}.${key}`);
    }
  }
}

/** Deep-merges the `(validate.rules)` entries of one field's parsedOptions. */
function mergeRules(into, from) {
  for (const [k, v] of Object.entries(from)) {
    if (v && typeof v === 'object' && !Array.isArray(v) && into[k] && typeof into[k] === 'object')
      mergeRules(into[k], v);
    else into[k] = v;
  }
  return into;
}

function fieldRules(field) {
  let rules;
  for (const opt of field.parsedOptions ?? []) {
    const r = opt['(validate.rules)'];
    if (r) rules = mergeRules(rules ?? {}, r);
  }
  return rules;
}

/** Repeated `in`/`not_in` rules parsed from a single value are arrays in the table. */
function normalise(rules) {
  for (const body of Object.values(rules)) {
    for (const [key, value] of Object.entries(body)) {
      if ((key === 'in' || key === 'not_in') && !Array.isArray(value)) body[key] = [value];
      if (key === 'items' || key === 'keys' || key === 'values') normalise(value);
    }
  }
  return rules;
}

const fullName = (t) => t.fullName.replace(/^\./, '');

/**
 * Loads the protos and returns the rule table: `{ messages: { [type]: { fields, oneofs? } }, enums: { [type]: { [name]: number } } }`.
 */
export function buildValidateRules(includes, protos) {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    for (const dir of includes) {
      const p = join(dir, target);
      if (existsSync(p)) return p;
    }
    return target;
  };
  root.loadSync(protos, { keepCase: true });
  root.resolveAll();

  const types = [];
  const collect = (ns) => {
    for (const nested of ns.nestedArray) {
      if (nested instanceof protobuf.Type) types.push(nested);
      if (nested.nestedArray) collect(nested);
    }
  };
  collect(root);

  // Own rules per message.
  const own = new Map();
  for (const type of types) {
    const name = fullName(type);
    const disabled = (type.parsedOptions ?? []).some((o) => o['(validate.disabled)'] || o['(validate.ignored)']);
    const fields = [];
    const requiredOneofs = [];
    if (!disabled) {
      for (const field of type.fieldsArray) {
        const rules = fieldRules(field);
        if (rules) {
          assertKnownRules(rules, `${name}.${field.name}`);
          fields.push({ field, rules: normalise(rules) });
        }
      }
      for (const oneof of type.oneofsArray) {
        if ((oneof.parsedOptions ?? []).some((o) => o['(validate.required)']))
          requiredOneofs.push([oneof.name, oneof.fieldsArray.map((f) => f.name)]);
      }
    }
    own.set(name, { type, fields, requiredOneofs });
  }

  // Messages worth walking: own rules, an Any field, or a field leading to one (fixed point).
  const listed = new Set(['google.protobuf.Any']);
  for (const [name, m] of own) if (m.fields.length || m.requiredOneofs.length) listed.add(name);
  for (let grew = true; grew;) {
    grew = false;
    for (const [name, m] of own) {
      if (listed.has(name)) continue;
      if (
        m.type.fieldsArray.some((f) => f.resolvedType instanceof protobuf.Type && listed.has(fullName(f.resolvedType)))
      ) {
        listed.add(name);
        grew = true;
      }
    }
  }

  const messages = {};
  const enums = {};
  for (const name of [...listed].sort()) {
    if (name === 'google.protobuf.Any') continue; // walked by the checker itself
    const m = own.get(name);
    if (!m) continue;
    const rulesOf = new Map(m.fields.map((f) => [f.field.name, f.rules]));
    const fields = [];
    for (const field of m.type.fieldsArray) {
      const rules = rulesOf.get(field.name);
      const target = field.resolvedType;
      const message = target instanceof protobuf.Type ? fullName(target) : undefined;
      if (!rules && !(message && listed.has(message))) continue;
      const entry = { name: field.name, type: message ?? (target instanceof protobuf.Enum ? 'enum' : field.type) };
      if (target instanceof protobuf.Enum) {
        entry.enum = fullName(target);
        enums[entry.enum] = { ...target.values };
      }
      if (field.repeated) entry.repeated = true;
      if (field.map) entry.map = field.keyType;
      if (field.partOf) entry.oneof = true;
      if (rules) entry.rules = rules;
      fields.push(entry);
    }
    const out = { fields };
    if (m.requiredOneofs.length) out.oneofs = m.requiredOneofs;
    messages[name] = out;
  }
  return { messages, enums };
}
