/**
 * The field tables the fast writer walks (generated from the descriptor by
 * scripts/gen-wire-schema.mjs, with protobufjs's own rules: fields by id, implicit presence,
 * packing), turned once per type into a plan of precomputed tags.
 */
import schema from '../gen/wire-schema.js';

/** `[name, id, scalar type ('' for a message), flags, message type | map key type, map value message type]` */
export type WireFieldRow = readonly [string, number, string, number, string?, string?];
export type WireSchema = Readonly<Record<string, readonly WireFieldRow[]>>;

export const FLAG = { repeated: 1, packed: 2, map: 4, implicit: 8, unsupported: 16 } as const;

/** protobufjs's `types.basic`: the wire type of each scalar. */
const WIRE_TYPE: Readonly<Record<string, number>> = {
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

/** How a scalar is written (integers, so the writer switches on small numbers). */
export const enum Kind {
  Message,
  String,
  Bytes,
  Bool,
  Int32,
  Uint32,
  Sint32,
  Fixed32,
  Double,
  Float,
  Int64,
  Sint64,
  Fixed64,
}

const KIND: Readonly<Record<string, Kind>> = {
  '': Kind.Message,
  string: Kind.String,
  bytes: Kind.Bytes,
  bool: Kind.Bool,
  int32: Kind.Int32,
  uint32: Kind.Uint32,
  sint32: Kind.Sint32,
  fixed32: Kind.Fixed32,
  sfixed32: Kind.Fixed32,
  double: Kind.Double,
  float: Kind.Float,
  int64: Kind.Int64,
  uint64: Kind.Int64,
  sint64: Kind.Sint64,
  fixed64: Kind.Fixed64,
  sfixed64: Kind.Fixed64,
};

export interface FieldPlan {
  readonly name: string;
  /** The scalar type, or '' for a message. */
  readonly scalar: string;
  /** How the scalar (or a map's value) is written. */
  readonly kind: Kind;
  readonly flags: number;
  /** Tag of one element (packed: the tag of the whole list, wire type 2). */
  readonly tag: number;
  /** A message field's (or map value's) type name; its plan is `subPlan(field)`. */
  readonly message: string;
  /** Set on first use by `subPlan`. */
  sub?: MessagePlan | null;
  /** Map fields: the key's scalar type and the entry's key/value tags. */
  readonly keyScalar: string;
  readonly keyTag: number;
  readonly valueTag: number;
}

export interface MessagePlan {
  readonly typeName: string;
  /** In field number order. */
  readonly fields: readonly FieldPlan[];
  /** Field name → its position in `fields`. */
  readonly position: ReadonlyMap<string, number>;
  /** A field the writer does not handle (a group, a required field): the message goes to protobufjs. */
  readonly unsupported: boolean;
  /** Objects of this type are shared between resources: their bytes are kept per object (encode.ts). */
  readonly shared: boolean;
}

/** Types whose bytes are kept per object (see encode.ts). */
let sharedTypes: ReadonlySet<string> = new Set();
export function setSharedTypes(types: ReadonlySet<string>): void {
  sharedTypes = types;
  plans.clear();
}

/** The plan of a message field's type (resolved once per field). */
export function subPlan(f: FieldPlan): MessagePlan | null {
  if (f.sub === undefined) f.sub = planOf(f.message) ?? null;
  return f.sub;
}

const plans = new Map<string, MessagePlan | null>();

/** The plan of a fully qualified message type, or undefined when the schema does not have it. */
export function planOf(typeName: string): MessagePlan | undefined {
  let plan = plans.get(typeName);
  if (plan === undefined) {
    const rows = (schema as WireSchema)[typeName];
    plan = rows
      ? {
          typeName,
          fields: rows.map(fieldPlan),
          position: new Map(rows.map((r, i) => [r[0], i])),
          unsupported: rows.some((r) => r[3] & FLAG.unsupported),
          shared: sharedTypes.has(typeName),
        }
      : null;
    plans.set(typeName, plan);
  }
  return plan ?? undefined;
}

function fieldPlan([name, id, scalar, flags, ref = '', value = '']: WireFieldRow): FieldPlan {
  const wire = scalar === '' ? 2 : (WIRE_TYPE[scalar] as number);
  if (flags & FLAG.map) {
    const keyScalar = ref;
    return {
      name,
      scalar,
      kind: KIND[scalar] as Kind,
      flags,
      tag: ((id << 3) | 2) >>> 0,
      message: value,
      keyScalar,
      keyTag: 8 | (WIRE_TYPE[keyScalar] as number),
      valueTag: 16 | wire,
    };
  }
  const tag = ((id << 3) | (flags & FLAG.packed ? 2 : wire)) >>> 0;
  return { name, scalar, kind: KIND[scalar] as Kind, flags, tag, message: ref, keyScalar: '', keyTag: 0, valueTag: 0 };
}
