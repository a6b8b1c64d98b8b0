/**
 * proto3 JSON in, `$Properties` out: an EnvoyFilter patch value (or any JSON naming an Envoy
 * message) turned into the plain object shape the compiler builds and `encodeMessage` encodes.
 *
 * It reads JSON as istiod does (pkg/config/xds BuildXDSObjectFromStruct → golang/protobuf's
 * jsonpb): a field by its proto name (snake_case) or its JSON name (lowerCamelCase); enums by name
 * or number; integers as numbers or quoted; bytes as standard base64; `google.protobuf.Any` as
 * `{"@type": url, ...fields}` (`{"@type", "value"}` for a well-known inner type), its message
 * converted here and packed (`packAny`); Duration as a Go duration (`"1.5s"`, `"100ms"`, `"1m"`);
 * Timestamp as RFC 3339; Struct/Value/ListValue as plain JSON; the wrapper types as their bare
 * value; `null` as an absent field (a `null` Value where a Value is). Default scalar values are left
 * out, as the Go message holds them (so the bytes are istiod's).
 *
 * Walks the JSON descriptor (data): no generated code at runtime, so it runs in workerd.
 *
 * Problems (an unknown field, a wrong JSON type, an unknown enum name, a bad duration, an `@type`
 * that is not in meshsnap's descriptor set, two members of one oneof, a field given under both its
 * names, nesting deeper than MAX_JSON_DEPTH) are returned with their field path, never thrown.
 * Where jsonpb is silent (two members of a oneof: the later declared one wins; both names of a
 * field: the JSON name wins) meshsnap reports a problem instead.
 */
import { WRAPPER_SCALARS } from './wrappers.js';
import { compareMapKeys, enumValues, messageInfo, type FieldInfo, type MessageInfo } from './descriptor-index.js';
import { codecOf, encodeMessage, packAny, withPackedMessage, type Any } from './proto.js';
import { typeUrl } from './type-urls.js';

export interface JsonProblem {
  /** Field path, proto names: `typed_config.inline_code`, `http_filters[2].name`, map keys as `.key`. */
  readonly path: string;
  readonly message: string;
}

export type JsonMessageResult =
  | {
      readonly ok: true;
      readonly message: object;
      /** Unknown fields skipped (only with `allowUnknownFields`). */
      readonly ignored?: readonly JsonProblem[];
    }
  | { readonly ok: false; readonly problems: readonly JsonProblem[] };

export interface JsonMessageOptions {
  /**
   * Skip unknown fields (reported in `ignored`) instead of failing: istiod's non-strict reading,
   * the one it applies EnvoyFilters with (strict reading only warns, in its validation webhook).
   */
  readonly allowUnknownFields?: boolean;
}

/** How deeply messages (and Struct values, lists) may nest in one value. */
export const MAX_JSON_DEPTH = 64;
/** Problems collected before giving up on a value. */
const MAX_PROBLEMS = 50;

/** google.protobuf types jsonpb reads in their special form (an Any of one carries it under "value"). */
const WELL_KNOWN = new Set([
  'google.protobuf.Any',
  'google.protobuf.Duration',
  'google.protobuf.Timestamp',
  'google.protobuf.Struct',
  'google.protobuf.Value',
  'google.protobuf.ListValue',
  'google.protobuf.NullValue',
  'google.protobuf.Empty',
  ...Object.keys(WRAPPER_SCALARS),
]);

const FAIL: unique symbol = Symbol('fail');
/** A converted value, absent (a default or null: the field is left out), or FAIL (a problem was recorded). */
type Out = unknown;
const ABSENT: unique symbol = Symbol('absent');

class Conversion {
  readonly problems: JsonProblem[] = [];
  readonly ignored: JsonProblem[] = [];
  constructor(readonly allowUnknown: boolean) {}
  problem(path: string, message: string): typeof FAIL {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push({ path, message });
    return FAIL;
  }
  get full(): boolean {
    return this.problems.length >= MAX_PROBLEMS;
  }
}

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);
const describe = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'an array'
      : typeof v === 'object'
        ? 'an object'
        : `${typeof v} ${JSON.stringify(v)}`;
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/**
 * Converts `json` (proto3 JSON of message `typeName`, fully qualified) into the `$Properties` shape.
 * `path` prefixes every problem's path (e.g. `spec.configPatches[0].patch.value`).
 */
export function messageFromJson(
  typeName: string,
  json: unknown,
  path = '',
  options: JsonMessageOptions = {},
): JsonMessageResult {
  const c = new Conversion(options.allowUnknownFields === true);
  if (!WELL_KNOWN.has(typeName) && typeName !== 'google.protobuf.FieldMask' && !messageInfo(typeName))
    return { ok: false, problems: [{ path, message: `${typeName} is not a message type meshsnap knows` }] };
  const out = convertMessage(c, typeName, json, path, 0);
  if (c.problems.length > 0 || out === FAIL) return { ok: false, problems: c.problems };
  const message = out === ABSENT ? {} : (out as object);
  return c.ignored.length > 0 ? { ok: true, message, ignored: c.ignored } : { ok: true, message };
}

function convertMessage(c: Conversion, typeName: string, json: unknown, path: string, depth: number): Out {
  if (depth >= MAX_JSON_DEPTH) return c.problem(path, `nested deeper than ${MAX_JSON_DEPTH} levels`);
  // jsonpb: null is an empty message (a null Value where a Value is); fields and list items handle null before.
  if (json === null && typeName !== 'google.protobuf.Value') return {};
  switch (typeName) {
    case 'google.protobuf.Any':
      return convertAny(c, json, path, depth);
    case 'google.protobuf.Duration':
      return convertDuration(c, json, path);
    case 'google.protobuf.Timestamp':
      return convertTimestamp(c, json, path);
    case 'google.protobuf.Struct':
      return convertStruct(c, json, path, depth);
    case 'google.protobuf.Value':
      return convertValue(c, json, path, depth);
    case 'google.protobuf.ListValue':
      return convertList(c, json, path, depth);
    case 'google.protobuf.FieldMask':
      return convertFieldMask(c, json, path);
  }
  const wrapped = WRAPPER_SCALARS[typeName];
  if (wrapped !== undefined) {
    const v = convertScalar(c, wrapped, json, path);
    return v === FAIL ? FAIL : isDefault(wrapped, v) ? {} : { value: v };
  }
  const info = messageInfo(typeName);
  if (!info) return c.problem(path, `${typeName} is not a message type meshsnap knows`);
  if (!isObject(json)) return c.problem(path, `expected an object (${typeName}), got ${describe(json)}`);
  return convertFields(c, info, json, path, depth);
}

function convertFields(
  c: Conversion,
  info: MessageInfo,
  json: Record<string, unknown>,
  path: string,
  depth: number,
): Out {
  const out: Record<string, unknown> = {};
  const seen = new Map<FieldInfo, string>();
  const oneofs = new Map<string, string>();
  let failed = false;
  for (const key of Object.keys(json)) {
    if (c.full) return FAIL;
    const field = info.byName.get(key);
    if (!field || (key !== field.protoName && key !== field.jsonName)) {
      const p = { path: join(path, key), message: `unknown field "${key}" in ${info.name}` };
      if (c.allowUnknown) c.ignored.push(p);
      else failed = c.problem(p.path, p.message) === FAIL;
      continue;
    }
    const at = join(path, field.protoName);
    const earlier = seen.get(field);
    if (earlier !== undefined) {
      failed = c.problem(at, `given twice, as "${earlier}" and "${key}"`) === FAIL;
      continue;
    }
    seen.set(field, key);
    const raw = json[key];
    // jsonpb: null leaves a field unset, except a (singular) google.protobuf.Value.
    if (raw === null && !(field.type === 'google.protobuf.Value' && !field.repeated && !field.mapKey)) continue;
    if (field.oneof !== undefined) {
      const other = oneofs.get(field.oneof);
      if (other !== undefined) {
        failed = c.problem(at, `oneof ${field.oneof}: ${other} is set too (set one of them)`) === FAIL;
        continue;
      }
      oneofs.set(field.oneof, field.protoName);
    }
    const v = field.mapKey
      ? convertMap(c, field, raw, at, depth)
      : field.repeated
        ? convertRepeated(c, field, raw, at, depth)
        : convertSingle(c, field, raw, at, depth, field.oneof !== undefined);
    if (v === FAIL) failed = true;
    else if (v !== ABSENT) out[field.key] = v;
  }
  return failed ? FAIL : sortedByFieldOrder(info, out);
}

/** The fields in descriptor order (as the compiler writes them; encoding is by field number anyway). */
function sortedByFieldOrder(info: MessageInfo, out: Record<string, unknown>): Record<string, unknown> {
  const sorted: Record<string, unknown> = {};
  for (const f of info.fields) if (Object.prototype.hasOwnProperty.call(out, f.key)) sorted[f.key] = out[f.key];
  return sorted;
}

function convertSingle(c: Conversion, field: FieldInfo, raw: unknown, path: string, depth: number, keep: boolean): Out {
  if (field.kind === 'message') return convertMessage(c, field.type, raw, path, depth + 1);
  const v = field.kind === 'enum' ? convertEnum(c, field.type, raw, path) : convertScalar(c, field.type, raw, path);
  if (v === FAIL) return FAIL;
  // proto3: a default scalar is not set (and not encoded), unless it is a oneof member (present).
  return !keep && isDefault(field.kind === 'enum' ? 'int32' : field.type, v) ? ABSENT : v;
}

function convertRepeated(c: Conversion, field: FieldInfo, raw: unknown, path: string, depth: number): Out {
  if (!Array.isArray(raw)) return c.problem(path, `expected an array, got ${describe(raw)}`);
  const out: unknown[] = [];
  let failed = false;
  for (let i = 0; i < raw.length; i++) {
    if (c.full) return FAIL;
    const at = `${path}[${i}]`;
    const item: unknown = raw[i];
    if (item === null && field.type !== 'google.protobuf.Value') {
      failed = c.problem(at, 'null is not a list item') === FAIL;
      continue;
    }
    const v =
      field.kind === 'message'
        ? convertMessage(c, field.type, item, at, depth + 1)
        : field.kind === 'enum'
          ? convertEnum(c, field.type, item, at)
          : convertScalar(c, field.type, item, at);
    if (v === FAIL) failed = true;
    else out.push(v === ABSENT ? {} : v);
  }
  return failed ? FAIL : out.length === 0 ? ABSENT : out;
}

function convertMap(c: Conversion, field: FieldInfo, raw: unknown, path: string, depth: number): Out {
  if (!isObject(raw)) return c.problem(path, `expected an object (a map), got ${describe(raw)}`);
  const keyType = field.mapKey as string;
  const entries: [string, unknown][] = [];
  let failed = false;
  for (const key of Object.keys(raw)) {
    if (c.full) return FAIL;
    const at = join(path, key);
    const k = mapKey(c, keyType, key, at);
    const item = raw[key];
    const v =
      item === null && field.type !== 'google.protobuf.Value'
        ? c.problem(at, 'null is not a map value')
        : field.kind === 'message'
          ? convertMessage(c, field.type, item, at, depth + 1)
          : field.kind === 'enum'
            ? convertEnum(c, field.type, item, at)
            : convertScalar(c, field.type, item, at);
    if (k === FAIL || v === FAIL) failed = true;
    else entries.push([k as string, v === ABSENT ? {} : v]);
  }
  if (failed) return FAIL;
  if (entries.length === 0) return ABSENT;
  // Map entries are encoded in key insertion order: sorted, as the compiler builds them.
  entries.sort((a, b) => compareMapKeys(keyType, a[0], b[0]));
  const out: Record<string, unknown> = {};
  for (const [key, v] of entries) out[key] = v;
  return out;
}

/** A map key as the shape holds it (an object key): integers in canonical decimal. */
function mapKey(c: Conversion, keyType: string, key: string, path: string): Out {
  if (keyType === 'string') return key;
  if (keyType === 'bool')
    return key === 'true' || key === 'false' ? key : c.problem(path, `map key "${key}" is not a bool`);
  const v = convertScalar(c, keyType, key, path);
  return v === FAIL ? FAIL : String(BigInt(key));
}

// ---- scalars ----

const INT_RANGE: Readonly<Record<string, readonly [bigint, bigint]>> = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  sint32: [-(2n ** 31n), 2n ** 31n - 1n],
  sfixed32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  fixed32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  sint64: [-(2n ** 63n), 2n ** 63n - 1n],
  sfixed64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  fixed64: [0n, 2n ** 64n - 1n],
};
const FLOAT32_MAX = 3.4028234663852886e38;

/** A JSON scalar as the shape holds it: numbers, booleans, strings, Uint8Array, and 64-bit values beyond 2^53 as `{low, high, unsigned}`. */
function convertScalar(c: Conversion, type: string, raw: unknown, path: string): Out {
  switch (type) {
    case 'string':
      return typeof raw === 'string' ? raw : c.problem(path, `expected a string, got ${describe(raw)}`);
    case 'bool':
      return typeof raw === 'boolean' ? raw : c.problem(path, `expected true or false, got ${describe(raw)}`);
    case 'bytes':
      return convertBytes(c, raw, path);
    case 'double':
    case 'float':
      return convertFloat(c, type, raw, path);
  }
  const range = INT_RANGE[type];
  if (!range) return c.problem(path, `unsupported scalar type ${type}`);
  // jsonpb reads an integer as a JSON number or a quoted one (an integer literal, no fraction or exponent).
  let big: bigint;
  if (typeof raw === 'number') {
    if (!Number.isInteger(raw)) return c.problem(path, `expected an integer (${type}), got ${raw}`);
    big = BigInt(raw);
  } else if (typeof raw === 'string' && /^-?\d+$/.test(raw)) {
    big = BigInt(raw);
  } else return c.problem(path, `expected an integer (${type}), got ${describe(raw)}`);
  if (big < range[0] || big > range[1]) return c.problem(path, `${big} is out of range for ${type}`);
  if (big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(big);
  const unsigned = type === 'uint64' || type === 'fixed64';
  const bits = BigInt.asUintN(64, big);
  return { low: Number(bits & 0xffffffffn) | 0, high: Number(bits >> 32n) | 0, unsigned };
}

function convertFloat(c: Conversion, type: string, raw: unknown, path: string): Out {
  let v: number;
  if (typeof raw === 'number') v = raw;
  else if (raw === 'NaN') v = NaN;
  else if (raw === 'Infinity') v = Infinity;
  else if (raw === '-Infinity') v = -Infinity;
  else if (typeof raw === 'string' && /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw)) v = Number(raw);
  else return c.problem(path, `expected a number (${type}), got ${describe(raw)}`);
  if (type === 'float' && Number.isFinite(v) && Math.abs(v) > FLOAT32_MAX)
    return c.problem(path, `${v} is out of range for float`);
  return v;
}

function convertBytes(c: Conversion, raw: unknown, path: string): Out {
  // encoding/json: standard base64 with padding (line breaks ignored).
  if (typeof raw !== 'string') return c.problem(path, `expected base64 text, got ${describe(raw)}`);
  const s = raw.replace(/[\r\n]/g, '');
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return c.problem(path, 'not valid base64');
  let bin: string;
  try {
    bin = atob(s);
  } catch {
    return c.problem(path, 'not valid base64');
  }
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

function convertEnum(c: Conversion, type: string, raw: unknown, path: string): Out {
  if (type === 'google.protobuf.NullValue' && raw === null) return 0;
  const values = enumValues(type) ?? {};
  if (typeof raw === 'string') {
    const n = Object.prototype.hasOwnProperty.call(values, raw) ? values[raw] : undefined;
    return n === undefined ? c.problem(path, `unknown value "${raw}" for enum ${type}`) : n;
  }
  // A number: any int32 (proto3 enums are open).
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= -(2 ** 31) && raw < 2 ** 31) return raw;
  return c.problem(path, `expected an enum name or number (${type}), got ${describe(raw)}`);
}

/** Whether a converted scalar is proto3's default (not set, not encoded). */
function isDefault(type: string, v: unknown): boolean {
  if (type === 'string') return v === '';
  if (type === 'bool') return v === false;
  if (type === 'bytes') return (v as Uint8Array).length === 0;
  // -0 is set (its bits are not zero), as in Go.
  if (typeof v === 'number') return Object.is(v, 0);
  return false;
}

// ---- well-known types ----

function convertAny(c: Conversion, json: unknown, path: string, depth: number): Out {
  if (!isObject(json)) return c.problem(path, `expected an object (google.protobuf.Any), got ${describe(json)}`);
  const url = json['@type'];
  if (url === undefined) return c.problem(path, 'an Any needs "@type"');
  if (typeof url !== 'string') return c.problem(join(path, '@type'), `expected a type URL, got ${describe(url)}`);
  // Go's FindMessageByURL: the name is what follows the last '/' (the URL itself is kept as written).
  const name = url.slice(url.lastIndexOf('/') + 1);
  if (!codecOf(name) || (!WELL_KNOWN.has(name) && !messageInfo(name)))
    return c.problem(join(path, '@type'), `unknown type ${url} (not in meshsnap's Envoy API set)`);
  let inner: Out;
  if (WELL_KNOWN.has(name)) {
    if (!('value' in json)) return c.problem(path, `an Any of ${name} carries it under "value"`);
    for (const k of Object.keys(json))
      if (k !== '@type' && k !== 'value') {
        const p = { path: join(path, k), message: `unknown field "${k}" in an Any of ${name}` };
        if (c.allowUnknown) c.ignored.push(p);
        else c.problem(p.path, p.message);
      }
    inner = convertMessage(c, name, json.value, join(path, 'value'), depth + 1);
  } else {
    const rest: Record<string, unknown> = {};
    for (const k of Object.keys(json)) if (k !== '@type') rest[k] = json[k];
    // The inner message's fields continue the Any's path (as Envoy's config_dump nests them).
    inner = convertMessage(c, name, rest, path, depth + 1);
  }
  if (inner === FAIL) return FAIL;
  const message = inner === ABSENT ? {} : (inner as object);
  try {
    if (url === typeUrl(name)) return packAny(name, message);
    const any: Any = { type_url: url, value: encodeMessage(name, message) };
    return withPackedMessage(any, message);
  } catch (e) {
    return c.problem(path, `cannot encode ${name}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function convertStruct(c: Conversion, json: unknown, path: string, depth: number): Out {
  if (!isObject(json)) return c.problem(path, `expected an object (google.protobuf.Struct), got ${describe(json)}`);
  const fields: Record<string, unknown> = {};
  let failed = false;
  for (const key of Object.keys(json).sort()) {
    if (c.full) return FAIL;
    const v = convertValue(c, json[key], join(path, key), depth + 1);
    if (v === FAIL) failed = true;
    else fields[key] = v;
  }
  return failed ? FAIL : { fields };
}

function convertValue(c: Conversion, json: unknown, path: string, depth: number): Out {
  if (depth >= MAX_JSON_DEPTH) return c.problem(path, `nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (json === null) return { nullValue: 0 };
  if (typeof json === 'string') return { stringValue: json };
  if (typeof json === 'number') return { numberValue: json };
  if (typeof json === 'boolean') return { boolValue: json };
  if (Array.isArray(json)) {
    const list = convertList(c, json, path, depth);
    return list === FAIL ? FAIL : { listValue: list };
  }
  if (isObject(json)) {
    const struct = convertStruct(c, json, path, depth);
    return struct === FAIL ? FAIL : { structValue: struct };
  }
  return c.problem(path, `not a JSON value: ${describe(json)}`);
}

function convertList(c: Conversion, json: unknown, path: string, depth: number): Out {
  if (!Array.isArray(json))
    return c.problem(path, `expected an array (google.protobuf.ListValue), got ${describe(json)}`);
  const values: unknown[] = [];
  let failed = false;
  for (let i = 0; i < json.length; i++) {
    if (c.full) return FAIL;
    const v = convertValue(c, json[i], `${path}[${i}]`, depth + 1);
    if (v === FAIL) failed = true;
    else values.push(v);
  }
  return failed ? FAIL : values.length > 0 ? { values } : {};
}

function convertFieldMask(c: Conversion, json: unknown, path: string): Out {
  // protojson's form ("a.b,c", JSON names) and jsonpb's (an ordinary message: {"paths": [...]}).
  let paths: unknown[];
  if (typeof json === 'string') paths = json === '' ? [] : json.split(',').map(snakeCase);
  else if (isObject(json) && Object.keys(json).every((k) => k === 'paths') && (json.paths ?? []) instanceof Array)
    paths = (json.paths ?? []) as unknown[];
  else return c.problem(path, `expected "path,path" (google.protobuf.FieldMask), got ${describe(json)}`);
  if (!paths.every((p) => typeof p === 'string'))
    return c.problem(path, 'expected the paths of a google.protobuf.FieldMask as strings');
  return paths.length > 0 ? { paths } : {};
}

const snakeCase = (s: string): string => s.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`);

const MAX_DURATION_NS = 2n ** 63n - 1n;
const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1000n,
  µs: 1000n, // U+00B5
  μs: 1000n, // U+03BC
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/**
 * Go's time.ParseDuration (jsonpb reads a Duration with it): `[-+]` then one or more
 * `<decimal><unit>`, units ns us µs ms s m h; `"0"` alone. Null when it does not parse or overflows.
 */
export function parseGoDuration(text: string): bigint | null {
  let s = text;
  let neg = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') return null;
  let total = 0n;
  const re = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
  while (s !== '') {
    const m = re.exec(s);
    if (!m) return null;
    const whole = m[1] as string;
    const frac = m[2];
    if (whole === '' && (frac === undefined || frac === '')) return null;
    const unit = UNIT_NS[m[3] as string] as bigint;
    const v = whole === '' ? 0n : BigInt(whole);
    if (v > MAX_DURATION_NS / unit) return null;
    let ns = v * unit;
    if (frac) {
      // leadingFraction: digits past int64's precision are consumed, not added; the scaled fraction
      // is float arithmetic in Go, and here.
      let f = 0n;
      let scale = 1;
      let overflow = false;
      for (const d of frac) {
        if (overflow) continue;
        if (f > MAX_DURATION_NS / 10n) {
          overflow = true;
          continue;
        }
        const y = f * 10n + BigInt(d);
        if (y > MAX_DURATION_NS) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      ns += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (ns > MAX_DURATION_NS) return null;
    }
    total += ns;
    if (total > MAX_DURATION_NS) return null;
    s = s.slice(m[0].length);
  }
  return neg ? -total : total;
}

function convertDuration(c: Conversion, json: unknown, path: string): Out {
  if (typeof json !== 'string') return c.problem(path, `expected a duration such as "1.5s", got ${describe(json)}`);
  const ns = parseGoDuration(json);
  if (ns === null) return c.problem(path, `bad duration "${json}" (a Go duration such as "1.5s", "100ms", "1m")`);
  return secondsNanos(ns / 1_000_000_000n, ns % 1_000_000_000n);
}

function secondsNanos(seconds: bigint, nanos: bigint): Record<string, number> {
  const out: Record<string, number> = {};
  if (seconds !== 0n) out.seconds = Number(seconds);
  if (nanos !== 0n) out.nanos = Number(nanos);
  return out;
}

/** Go's time.Parse(time.RFC3339Nano, …), which jsonpb reads a Timestamp with. */
function convertTimestamp(c: Conversion, json: unknown, path: string): Out {
  if (typeof json !== 'string') return c.problem(path, `expected an RFC 3339 timestamp, got ${describe(json)}`);
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:(Z)|([+-])(\d{2}):(\d{2}))$/.exec(json);
  const bad = (): typeof FAIL => c.problem(path, `bad timestamp "${json}" (RFC 3339, e.g. "2024-01-02T03:04:05Z")`);
  if (!m) return bad();
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (month < 1 || month > 12 || day < 1 || day > (days[month - 1] as number)) return bad();
  if (hour > 23 || minute > 59 || second > 59) return bad();
  let offset = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return bad();
    offset = (oh * 60 + om) * 60 * (m[9] === '-' ? -1 : 1);
  }
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
  const nanos = m[7] ? Number(m[7].padEnd(9, '0')) : 0;
  return secondsNanos(BigInt(seconds), BigInt(nanos));
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y0: number, m: number, d: number): number {
  const y = m <= 2 ? y0 - 1 : y0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}
