/**
 * A protobuf byte writer that writes straight into one growing buffer: no operation list, no
 * per-field objects (protobufjs's Writer queues an object per write and per sub-message).
 * A sub-message's length prefix is reserved as one byte and, for a body of 128 bytes or more,
 * the body is moved right to make room: the varint stays minimal, as protobufjs writes it.
 */
import type { ByteSlab } from './slab.js';

const utf8 = new TextEncoder();
/** Strings at least this long are encoded natively (measured: the JS loop wins below ~30 characters). */
const NATIVE_STRING_FROM = 32;
const LONE_SURROGATE = /\p{Cs}/u;

/** A value the writer does not write as protobufjs would (the caller falls back to protobufjs). */
/** Node's Buffer, looked up (not imported): this module also runs where there is none. */
const NodeBuffer = (globalThis as { Buffer?: { allocUnsafe(size: number): Uint8Array } }).Buffer;

/** Where `finish` puts the bytes for a caller that copies them at once: nowhere, a view of the writer's buffer. */
export const VIEW = 'view';

export class UnsupportedValue extends Error {
  override readonly name = 'UnsupportedValue';
}

export class WireWriter {
  buf: Uint8Array;
  pos = 0;
  private view: DataView;

  constructor(initialBytes = 64 * 1024) {
    this.buf = new Uint8Array(initialBytes);
    this.view = new DataView(this.buf.buffer);
  }

  reset(): this {
    this.pos = 0;
    return this;
  }

  /**
   * The bytes written, in an exactly sized array of their own: a Node Buffer where there is one,
   * as protobufjs hands out (a plain Uint8Array elsewhere, e.g. workerd), so callers see one type
   * whichever encoder wrote the bytes; or a copy in `slab` (slab.ts); or, `into` VIEW, no copy:
   * a view of the writer's buffer, valid until it writes again.
   */
  finish(into?: ByteSlab | typeof VIEW): Uint8Array {
    if (into === VIEW) return this.buf.subarray(0, this.pos);
    if (into) return into.copy(this.buf, 0, this.pos);
    if (NodeBuffer === undefined) return this.buf.slice(0, this.pos);
    const out = NodeBuffer.allocUnsafe(this.pos);
    out.set(this.buf.subarray(0, this.pos));
    return out;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** A one-byte tag (field number < 16), precomputed by the generated writers. */
  t1(b: number): void {
    this.ensure(1);
    this.buf[this.pos++] = b;
  }

  /** A two-byte tag's varint bytes, precomputed by the generated writers. */
  t2(b0: number, b1: number): void {
    this.ensure(2);
    this.buf[this.pos++] = b0;
    this.buf[this.pos++] = b1;
  }

  /** protobufjs `uint32`: the value as an unsigned 32-bit varint. */
  uint32(value: number): void {
    let v = value >>> 0;
    this.ensure(5);
    const { buf } = this;
    while (v > 127) {
      buf[this.pos++] = (v & 127) | 128;
      v >>>= 7;
    }
    buf[this.pos++] = v;
  }

  /** protobufjs `int32`: a negative value is sign-extended to ten bytes. */
  int32(value: number): void {
    if (value < 0) this.int64(value);
    else this.uint32(value);
  }

  sint32(value: number): void {
    this.uint32(((value << 1) ^ (value >> 31)) >>> 0);
  }

  /** protobufjs `int64`/`uint64` of a JS number (LongBits.fromNumber). */
  int64(value: number): void {
    if (value >= 0 && value < 0x80000000) return this.uint32(value);
    const [lo, hi] = longBits(value);
    this.varint64(lo, hi);
  }

  sint64(value: number): void {
    const [lo, hi] = longBits(value);
    const mask = hi >> 31;
    this.varint64(((lo << 1) ^ mask) >>> 0, (((hi << 1) | (lo >>> 31)) ^ mask) >>> 0);
  }

  private varint64(lo: number, hi: number): void {
    this.ensure(10);
    const { buf } = this;
    while (hi) {
      buf[this.pos++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 127) {
      buf[this.pos++] = (lo & 127) | 128;
      lo >>>= 7;
    }
    buf[this.pos++] = lo;
  }

  fixed32(value: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, value >>> 0, true);
    this.pos += 4;
  }

  fixed64(value: number): void {
    const [lo, hi] = longBits(value);
    this.fixed32(lo);
    this.fixed32(hi);
  }

  double(value: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, value, true);
    this.pos += 8;
  }

  float(value: number): void {
    this.ensure(4);
    this.view.setFloat32(this.pos, value, true);
    this.pos += 4;
  }

  bool(value: unknown): void {
    this.ensure(1);
    this.buf[this.pos++] = value ? 1 : 0;
  }

  string(value: string): void {
    const n = value.length;
    if (n >= NATIVE_STRING_FROM) return this.longString(value);
    this.ensure(n + 5);
    // ASCII, the common case: its length is known before the bytes, so they are written in the
    // same pass that checks them; a non-ASCII character rewinds to the UTF-8 path.
    const start = this.pos;
    this.uint32(n);
    const { buf } = this;
    let p = this.pos;
    for (let i = 0; i < n; i++) {
      const c = value.charCodeAt(i);
      if (c > 127) {
        this.pos = start;
        return this.utf8String(value);
      }
      buf[p++] = c;
    }
    this.pos = p;
  }

  /**
   * A longer string through the platform's UTF-8 encoder (several times faster per character than
   * the loop above), written where an ASCII string's bytes go; anything else rewinds to utf8String.
   */
  private longString(value: string): void {
    const n = value.length;
    this.ensure(3 * n + 5);
    const start = this.pos;
    const body = start + varintSize(n);
    if (utf8.encodeInto(value, this.buf.subarray(body)).written !== n) return this.utf8String(value);
    this.uint32(n);
    this.pos = body + n;
  }

  private utf8String(value: string): void {
    // protobufjs writes a lone surrogate differently in Node and elsewhere: left to it.
    if (LONE_SURROGATE.test(value)) throw new UnsupportedValue('lone surrogate');
    const bytes = utf8.encode(value);
    this.uint32(bytes.length);
    this.raw(bytes);
  }

  bytes(value: Uint8Array): void {
    this.uint32(value.length);
    this.raw(value);
  }

  raw(value: Uint8Array): void {
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /** Starts a length-delimited body; returns where its length goes (pass it to `ldelim`). */
  fork(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Ends the body started by `fork`, writing its length (minimal varint) before it. */
  ldelim(at: number): void {
    const len = this.pos - at - 1;
    if (len < 128) {
      this.buf[at] = len;
      return;
    }
    const size = varintSize(len);
    this.ensure(size - 1);
    this.buf.copyWithin(at + size, at + 1, this.pos);
    this.pos += size - 1;
    let v = len;
    let p = at;
    while (v > 127) {
      this.buf[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.buf[p] = v;
  }
}

function varintSize(v: number): number {
  return v < 1 << 7 ? 1 : v < 1 << 14 ? 2 : v < 1 << 21 ? 3 : v < 1 << 28 ? 4 : 5;
}

/** protobufjs LongBits.fromNumber: two's complement low and high 32 bits of an integer number. */
function longBits(value: number): [number, number] {
  if (value === 0) return [0, 0];
  const negative = value < 0;
  const abs = negative ? -value : value;
  let lo = abs >>> 0;
  let hi = ((abs - lo) / 4294967296) >>> 0;
  if (negative) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
    if (++lo > 4294967295) {
      lo = 0;
      if (++hi > 4294967295) hi = 0;
    }
  }
  return [lo, hi];
}
