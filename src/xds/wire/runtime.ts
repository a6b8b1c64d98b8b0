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
  readonly notObject: (typeName: string) => never;
  readonly unsupported: (why: string) => never;
  /** A sub-message of a shared type as a length-delimited field: written once per object, its bytes reused. */
  readonly shared: (w: WireWriter, tag: number, v: unknown, depth: number, write: MessageWriter) => void;
  /** Whether a 64-bit implicit-presence value is not its default (a value that is not a number is handed back). */
  readonly set64: (v: unknown) => boolean;
  readonly notString: () => never;
  readonly notBytes: () => never;
  readonly notNumber: () => never;
}

const sharedBytes = new WeakMap<object, Uint8Array>();

export const wireRuntime: WireRuntime = {
  hasOwn: Object.prototype.hasOwnProperty,
  tooDeep: () => {
    throw new UnsupportedValue('max depth exceeded');
  },
  unknowns: () => {
    throw new UnsupportedValue('$unknowns');
  },
  notObject: (typeName) => {
    throw new UnsupportedValue(`${typeName}: not an object`);
  },
  unsupported: (why) => {
    throw new UnsupportedValue(why);
  },
  shared(w, tag, v, depth, write) {
    if (typeof v !== 'object' || v === null) throw new UnsupportedValue('shared sub-message: not an object');
    w.uint32(tag);
    const hit = sharedBytes.get(v);
    if (hit) return w.bytes(hit);
    const at = w.fork();
    write(w, v, depth + 1);
    const len = w.pos - at - 1;
    w.ldelim(at);
    sharedBytes.set(v, w.buf.slice(w.pos - len, w.pos));
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
};
