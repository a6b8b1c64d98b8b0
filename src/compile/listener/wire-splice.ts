/**
 * Joins kept protobuf encodings into one message. A message's encoding is the concatenation of its
 * fields, so the fields that recur across resources can be encoded once and kept, and only the
 * few that differ written per resource (a length-delimited field: its tag, its length, its bytes).
 */

/** Node's Buffer, looked up (not imported): the compiler also runs where there is none. */
const NodeBuffer = (globalThis as { Buffer?: { allocUnsafe(size: number): Uint8Array } }).Buffer;

/** A length-delimited field's tag and length, written before its bytes. */
export interface FieldHeader {
  readonly tag: number;
  readonly length: number;
}

/** The header of length-delimited field `field` (1–15: a one-byte tag) holding `length` bytes. */
export function header(field: number, length: number): FieldHeader {
  if (field < 1 || field > 15) throw new RangeError(`field ${field}: only one-byte tags are spliced`);
  return { tag: (field << 3) | 2, length };
}

export function varintLength(n: number): number {
  let bytes = 1;
  for (; n >= 0x80; n >>>= 7) bytes++;
  return bytes;
}

/** The header's own size in bytes. */
export const headerLength = (h: FieldHeader): number => 1 + varintLength(h.length);

/** The pieces one after the other, in bytes of the class the encoder hands out (a Buffer in Node). */
export function joinFields(pieces: readonly (Uint8Array | FieldHeader)[]): Uint8Array {
  let size = 0;
  for (const p of pieces) size += p instanceof Uint8Array ? p.length : headerLength(p);
  const out = NodeBuffer?.allocUnsafe(size) ?? new Uint8Array(size);
  let at = 0;
  for (const p of pieces) {
    if (p instanceof Uint8Array) {
      out.set(p, at);
      at += p.length;
      continue;
    }
    at = writeHeader(out, at, p);
  }
  return out;
}

/** Writes `h` (its tag, then its length as a varint) into `out` at `at`; gives the position after it. */
export function writeHeader(out: Uint8Array, at: number, h: FieldHeader): number {
  out[at++] = h.tag;
  let n = h.length;
  for (; n >= 0x80; n >>>= 7) out[at++] = (n & 0x7f) | 0x80;
  out[at++] = n;
  return at;
}
