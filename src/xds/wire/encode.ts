/**
 * Encodes plain `$Properties` messages with the field tables of schema.ts into a WireWriter: the
 * same bytes protobufjs's generated `encode` writes (fields by id, the same presence and default
 * rules, packed numeric lists, map entries in key insertion order), without its per-write objects.
 * Whatever it does not write exactly as protobufjs would (a type missing from the tables, a group,
 * `$unknowns`, a 64-bit value that is not a number, bytes given as base64 text, a lone surrogate)
 * throws UnsupportedValue, and the caller encodes that message with protobufjs instead.
 *
 * Sub-messages of the shared types below (one object reused by many resources: a transport
 * socket, a retry policy, a packed filter) are written once per object and their bytes reused.
 */
import { FLAG, Kind, planOf, setSharedTypes, subPlan, type FieldPlan, type MessagePlan } from './schema.js';
import { UnsupportedValue, WireWriter } from './writer.js';

/** protobufjs's `util.recursionLimit`. */
const RECURSION_LIMIT = 100;

/**
 * Types whose objects the compiler shares between resources, so their bytes are kept per object
 * (measured on the synthetic mesh: each is reused 3-4 times per encoding). Types whose objects are
 * mostly one per resource (Metadata, Struct, OutlierDetection) are not: keeping their bytes would
 * cost memory for nothing. Nor is `google.protobuf.Any`: its `value` already holds the packed bytes,
 * so writing it again is a copy, and a kept copy per Any cost ~20 MB at 10k services.
 */
setSharedTypes(
  new Set([
    'envoy.config.core.v3.TransportSocket',
    'envoy.config.route.v3.RetryPolicy',
    'envoy.config.core.v3.ConfigSource',
  ]),
);
const shared = new WeakMap<object, Uint8Array>();

const hasOwn = Object.prototype.hasOwnProperty;

let writer = new WireWriter();
/** A writer that grew past this is dropped after use, so that one huge message does not stay pinned. */
const KEEP_BYTES = 4 << 20;

/**
 * The encoding of `message` as `typeName`, or undefined when the fast writer does not handle it
 * (the caller then uses protobufjs).
 */
export function encodeFast(typeName: string, message: object): Uint8Array | undefined {
  const plan = planOf(typeName);
  if (!plan || plan.unsupported) return undefined;
  const w = writer.reset();
  top = 0;
  try {
    writeMessage(w, plan, message as Record<string, unknown>, 0);
    return w.finish();
  } catch (e) {
    if (e instanceof UnsupportedValue) return undefined;
    throw e;
  } finally {
    if (w.buf.length > KEEP_BYTES) writer = new WireWriter();
  }
}

function writeMessage(w: WireWriter, plan: MessagePlan, m: Record<string, unknown>, depth: number): void {
  if (depth > RECURSION_LIMIT) throw new UnsupportedValue('max depth exceeded');
  if (m.$unknowns != null && hasOwn.call(m, '$unknowns')) throw new UnsupportedValue('$unknowns');
  const { fields } = plan;
  if (fields.length <= SPARSE_FROM_FIELDS) {
    for (let i = 0; i < fields.length; i++) writeField(w, fields[i] as FieldPlan, m, depth);
    return;
  }
  // A large type (a Cluster declares ~50 fields) usually has a few set: visit those, by field
  // number. Their positions go on a stack shared by the nested calls (no array per message);
  // `for…in` reads the object's enum cache where `Object.keys` would copy it (an inherited key is
  // skipped by writeField's own-property check).
  const base = top;
  for (const key in m) {
    const at = plan.position.get(key);
    if (at === undefined) continue;
    if (top === positions.length) positions = growPositions(positions);
    positions[top++] = at;
  }
  const end = top;
  sortPositions(positions, base, end);
  for (let i = base; i < end; i++) writeField(w, fields[positions[i] as number] as FieldPlan, m, depth);
  top = base;
}

/** Types with more fields than this are written by their own keys (message objects are plain data: every field an own enumerable property). */
const SPARSE_FROM_FIELDS = 10;

/** The field-position stack of the messages being written: `positions[0, top)`. */
let positions: Int32Array = new Int32Array(64);
let top = 0;

function growPositions(xs: Int32Array): Int32Array {
  const next = new Int32Array(xs.length * 2);
  next.set(xs);
  return next;
}

/** `xs[from, to)` ascending, in place (insertion sort: a message sets few fields). */
function sortPositions(xs: Int32Array, from: number, to: number): void {
  if (to - from > 32) {
    xs.subarray(from, to).sort();
    return;
  }
  for (let i = from + 1; i < to; i++) {
    const x = xs[i] as number;
    let j = i - 1;
    while (j >= from && (xs[j] as number) > x) {
      xs[j + 1] = xs[j] as number;
      j--;
    }
    xs[j + 1] = x;
  }
}

function writeField(w: WireWriter, f: FieldPlan, m: Record<string, unknown>, depth: number): void {
  const v = m[f.name];
  if (v == null || !hasOwn.call(m, f.name)) return;
  if (f.flags & FLAG.map) writeMap(w, f, v, depth);
  else if (f.flags & FLAG.repeated) writeList(w, f, v as readonly unknown[], depth);
  else if (f.kind === Kind.Message) writeSub(w, f.tag, f, v, depth);
  else if (!(f.flags & FLAG.implicit) || !isDefault(f.kind, v)) {
    w.uint32(f.tag);
    writeScalar(w, f.kind, v);
  }
}

function writeList(w: WireWriter, f: FieldPlan, list: readonly unknown[], depth: number): void {
  if (!list.length) return;
  if (f.flags & FLAG.packed) {
    w.uint32(f.tag);
    const at = w.fork();
    for (let i = 0; i < list.length; i++) writeScalar(w, f.kind, list[i]);
    w.ldelim(at);
  } else if (f.kind === Kind.Message) {
    for (let i = 0; i < list.length; i++) writeSub(w, f.tag, f, list[i], depth);
  } else {
    for (let i = 0; i < list.length; i++) {
      w.uint32(f.tag);
      writeScalar(w, f.kind, list[i]);
    }
  }
}

function writeMap(w: WireWriter, f: FieldPlan, map: unknown, depth: number): void {
  if (f.keyScalar !== 'string') throw new UnsupportedValue('map key type');
  const entries = map as Record<string, unknown>;
  // Own keys in Object.keys order (protobufjs's), without copying them into an array.
  for (const key in entries) {
    if (!hasOwn.call(entries, key)) continue;
    w.uint32(f.tag);
    const at = w.fork();
    w.uint32(f.keyTag);
    w.string(key);
    if (f.kind === Kind.Message) writeSub(w, f.valueTag, f, entries[key], depth);
    else {
      w.uint32(f.valueTag);
      writeScalar(w, f.kind, entries[key]);
    }
    w.ldelim(at);
  }
}

/** A sub-message (of field `f`'s type) as a length-delimited field (`tag`, length, body). */
function writeSub(w: WireWriter, tag: number, f: FieldPlan, v: unknown, depth: number): void {
  if (typeof v !== 'object' || v === null) throw new UnsupportedValue(`${f.message}: not an object`);
  const plan = subPlan(f);
  if (!plan || plan.unsupported) throw new UnsupportedValue(`${f.message}: not in the schema`);
  w.uint32(tag);
  if (plan.shared) {
    const hit = shared.get(v);
    if (hit) return w.bytes(hit);
  }
  const at = w.fork();
  writeMessage(w, plan, v as Record<string, unknown>, depth + 1);
  const len = w.pos - at - 1;
  w.ldelim(at);
  if (plan.shared) shared.set(v, w.buf.slice(w.pos - len, w.pos));
}

function isDefault(kind: Kind, v: unknown): boolean {
  switch (kind) {
    case Kind.Bool:
      return v === false;
    case Kind.String:
      return v === '';
    case Kind.Bytes:
      return !(v as { length?: number }).length;
    case Kind.Double:
    case Kind.Float:
      return Object.is(v, 0);
    case Kind.Int64:
    case Kind.Sint64:
    case Kind.Fixed64:
      if (typeof v !== 'number') throw new UnsupportedValue('64-bit value that is not a number');
      return v === 0;
    default:
      return v === 0;
  }
}

function writeScalar(w: WireWriter, kind: Kind, v: unknown): void {
  switch (kind) {
    case Kind.String:
      if (typeof v !== 'string') throw new UnsupportedValue('string field that is not a string');
      return w.string(v);
    case Kind.Bytes:
      if (!(v instanceof Uint8Array)) throw new UnsupportedValue('bytes field that is not a Uint8Array');
      return w.bytes(v);
    case Kind.Bool:
      return w.bool(v);
  }
  if (typeof v !== 'number') throw new UnsupportedValue('number field that is not a number');
  switch (kind) {
    case Kind.Int32:
      return w.int32(v);
    case Kind.Uint32:
      return w.uint32(v);
    case Kind.Sint32:
      return w.sint32(v);
    case Kind.Fixed32:
      return w.fixed32(v);
    case Kind.Double:
      return w.double(v);
    case Kind.Float:
      return w.float(v);
    case Kind.Int64:
      return w.int64(v);
    case Kind.Sint64:
      return w.sint64(v);
    case Kind.Fixed64:
      return w.fixed64(v);
    default:
      throw new UnsupportedValue(`scalar kind ${kind}`);
  }
}
