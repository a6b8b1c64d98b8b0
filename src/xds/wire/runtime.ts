/**
 * What the generated per-type writers (src/xds/gen/wire-encoders.js, from
 * scripts/gen-wire-encoders.mjs) call: the guards that hand a value protobufjs would write its own way
 * back to it (UnsupportedValue), and the kept bytes of shared
 * sub-messages (a transport socket, a retry policy: one object reused by many resources).
 */
import { UnsupportedValue, type WireWriter } from './writer.js';

/** Writes a message object's set fields (not its tag or length); `depth` is protobufjs's nesting depth. */
export type MessageWriter = (w: WireWriter, message: object, depth: number) => void;

export interface WireRuntime {
  readonly hasOwn: (this: object, key: PropertyKey) => boolean;
  readonly tooDeep: () => never;
  readonly unknowns: () => never;
  readonly unsupported: (why: string) => never;
  /** A sub-message as a length-delimited field (tag, length, body). */
  readonly sub: (w: WireWriter, tag: number, v: unknown, depth: number, write: MessageWriter) => void;
  /** A sub-message of a shared type as a length-delimited field: written once per object, its bytes reused. */
  readonly shared: (w: WireWriter, tag: number, v: unknown, depth: number, write: MessageWriter) => void;
  /** `shared` for a frozen object (the compiler's mark of a shared one: src/compile/intern.ts), else `sub`. */
  readonly frozen: (w: WireWriter, tag: number, v: unknown, depth: number, write: MessageWriter) => void;
  /** Whether a 64-bit implicit-presence value is not its default (a value that is not a number is handed back). */
  readonly set64: (v: unknown) => boolean;
  readonly notString: () => never;
  readonly notBytes: () => never;
  readonly notNumber: () => never;
  /** Scalar fields: check the value, write the tag and the value. */
  readonly str: ScalarField;
  readonly byt: ScalarField;
  readonly bool: ScalarField;
  readonly i32: ScalarField;
  readonly u32: ScalarField;
  readonly s32: ScalarField;
  readonly f32: ScalarField;
  readonly dbl: ScalarField;
  readonly flt: ScalarField;
  readonly i64: ScalarField;
  readonly s64: ScalarField;
  readonly f64: ScalarField;
}

type ScalarField = (w: WireWriter, tag: number, v: unknown) => void;

const sharedBytes = new WeakMap<object, Uint8Array>();

export const wireRuntime: WireRuntime = {
  hasOwn: Object.prototype.hasOwnProperty,
  tooDeep: () => {
    throw new UnsupportedValue('max depth exceeded');
  },
  unknowns: () => {
    throw new UnsupportedValue('$unknowns');
  },
  unsupported: (why) => {
    throw new UnsupportedValue(why);
  },
  sub(w, tag, v, depth, write) {
    if (typeof v !== 'object' || v === null) throw new UnsupportedValue('sub-message: not an object');
    w.uint32(tag);
    const at = w.fork();
    write(w, v, depth + 1);
    w.ldelim(at);
  },
  shared: writeShared,
  frozen(w, tag, v, depth, write) {
    if (Object.isFrozen(v)) writeShared(w, tag, v, depth, write);
    else wireRuntime.sub(w, tag, v, depth, write);
  },
  set64(v) {
    if (typeof v !== 'number') throw new UnsupportedValue('64-bit value that is not a number');
    return v !== 0;
  },
  notString: () => {
    throw new UnsupportedValue('string field that is not a string');
  },
  notBytes: () => {
    throw new UnsupportedValue('bytes field that is not a Uint8Array');
  },
  notNumber: () => {
    throw new UnsupportedValue('number field that is not a number');
  },
  str(w, tag, v) {
    if (typeof v !== 'string') throw new UnsupportedValue('string field that is not a string');
    w.uint32(tag);
    w.string(v);
  },
  byt(w, tag, v) {
    if (!(v instanceof Uint8Array)) throw new UnsupportedValue('bytes field that is not a Uint8Array');
    w.uint32(tag);
    w.bytes(v);
  },
  bool(w, tag, v) {
    w.uint32(tag);
    w.bool(v);
  },
  i32: (w, tag, v) => (w.uint32(tag), w.int32(num(v))),
  u32: (w, tag, v) => (w.uint32(tag), w.uint32(num(v))),
  s32: (w, tag, v) => (w.uint32(tag), w.sint32(num(v))),
  f32: (w, tag, v) => (w.uint32(tag), w.fixed32(num(v))),
  dbl: (w, tag, v) => (w.uint32(tag), w.double(num(v))),
  flt: (w, tag, v) => (w.uint32(tag), w.float(num(v))),
  i64: (w, tag, v) => (w.uint32(tag), w.int64(num(v))),
  s64: (w, tag, v) => (w.uint32(tag), w.sint64(num(v))),
  f64: (w, tag, v) => (w.uint32(tag), w.fixed64(num(v))),
};

function writeShared(w: WireWriter, tag: number, v: unknown, depth: number, write: MessageWriter): void {
  if (typeof v !== 'object' || v === null) throw new UnsupportedValue('sub-message: not an object');
  w.uint32(tag);
  const hit = sharedBytes.get(v);
  if (hit) return void w.bytes(hit);
  const at = w.fork();
  write(w, v, depth + 1);
  const len = w.pos - at - 1;
  w.ldelim(at);
  sharedBytes.set(v, w.buf.slice(w.pos - len, w.pos));
}

function num(v: unknown): number {
  if (typeof v !== 'number') throw new UnsupportedValue('number field that is not a number');
  return v;
}
