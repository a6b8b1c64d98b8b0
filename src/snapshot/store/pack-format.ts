/**
 * The pack format (see packs.ts for what packs are for): a deterministic concatenation of entries
 * (documents and objects) behind a JSON index. Pure.
 *
 *   "meshsnap.pack/v1\n" {"entries":[[digest, length], …]} "\n" <bytes of each entry, in order>
 */
import { MeshsnapError } from '../../errors.js';
import { digestOf, nobleSha256Hex, type Hasher } from '../digest.js';
import { ByteWriter } from '../../canonical-json.js';
import { digestOrder } from '../sorted-digests.js';
import { CorruptObjectError, type PackParts, type StreamedParts } from './store.js';

export type { PackParts, StreamedParts } from './store.js';

export const PACK_MAGIC = 'meshsnap.pack/v1\n';

const utf8 = new TextEncoder();
const decoder = new TextDecoder();

export type PackEntries = ReadonlyMap<string, Uint8Array>;

export class InvalidPackError extends MeshsnapError {
  override readonly name = 'InvalidPackError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('internal', message, options);
  }
}

/** Deterministic: entries sorted by digest, so the same content is the same pack. */
export function encodePack(entries: PackEntries): Uint8Array {
  return joinParts(encodePackParts(entries));
}

/** The pack's bytes as parts (its index, then each entry's bytes, shared, not copied): encodePack without the join. */
export function encodePackParts(entries: PackEntries): Uint8Array[] {
  const digests = [...entries.keys()];
  const order = digestOrder(digests);
  const sizes = new Array<number>(digests.length);
  const parts = new Array<Uint8Array>(order.length + 1);
  for (let k = 0; k < order.length; k++) {
    const i = order[k] as number;
    const bytes = entries.get(digests[i] as string) as Uint8Array;
    sizes[i] = bytes.byteLength;
    parts[k + 1] = bytes;
  }
  parts[0] = packHead(order, digests, sizes);
  return parts;
}

/**
 * encodePackParts of `digests` (distinct) without holding their bytes: `sizes[i]` is the length of
 * `digests[i]`, and `read(i)` gives its bytes when the parts are iterated (in digest order).
 */
export function streamPackPartsAt(
  digests: readonly string[],
  sizes: readonly number[],
  read: (position: number) => Uint8Array,
): StreamedParts {
  const order = digestOrder(digests);
  let byteLength = 0;
  for (const i of order) byteLength += sizes[i] as number;
  const head = headLength(order, digests, sizes);
  // Digests are plain (`sha256:<hex>`): the index is written as it is read, a chunk at a time (at
  // 10k services it is ~20 MB, which one buffer added to the CLI's peak in its publish).
  const whole = head.plain ? undefined : packHead(order, digests, sizes, head.length);
  return {
    byteLength: byteLength + (whole?.byteLength ?? head.length),
    *[Symbol.iterator]() {
      if (whole) yield whole;
      else yield* headChunks(order, digests, sizes, new ByteWriter(new Uint8Array(HEAD_CHUNK + 1024)), HEAD_CHUNK);
      for (const i of order) yield read(i);
    },
  };
}

const HEAD_OPEN = `${PACK_MAGIC}{"entries":[`;
const HEAD_CLOSE = ']}\n';
/** Printable ASCII but the quote and the backslash: JSON writes it as it is. */
const PLAIN_DIGEST = /^[ !#-[\]-~]*$/;
/** About how many bytes of a streamed index each of its parts holds. */
const HEAD_CHUNK = 1 << 18;

/**
 * The index's byte length (`["<digest>",<size>]` per entry, a comma between), exact when no digest
 * needs escaping (`plain`).
 */
function headLength(
  order: ArrayLike<number>,
  digests: readonly string[],
  sizes: ArrayLike<number>,
): { readonly length: number; readonly plain: boolean } {
  let length = HEAD_OPEN.length + HEAD_CLOSE.length + Math.max(0, order.length - 1);
  let plain = true;
  for (let k = 0; k < order.length; k++) {
    const i = order[k] as number;
    const digest = digests[i] as string;
    if (plain && !PLAIN_DIGEST.test(digest)) plain = false;
    length += digest.length + 5 + String(sizes[i]).length;
  }
  return { length, plain };
}

/**
 * The pack's magic and JSON index (`{"entries":[[digest, length], …]}`) for the entries at `order`,
 * written straight into bytes: the same bytes as encoding JSON.stringify of the entries, without the
 * ~230k pairs and the ~20 MB string a 10k-service checkpoint made of them besides the bytes. Written
 * into `w`, a part each time it holds `chunk` bytes or more (a view of its buffer, written again for
 * the next: StreamedParts' readers copy or write a part before they read the next), and the rest.
 */
function* headChunks(
  order: ArrayLike<number>,
  digests: readonly string[],
  sizes: ArrayLike<number>,
  w: ByteWriter,
  chunk: number,
): Generator<Uint8Array> {
  w.ascii(HEAD_OPEN);
  for (let k = 0; k < order.length; k++) {
    const i = order[k] as number;
    if (k > 0) w.byte(COMMA);
    w.byte(OPEN_BRACKET);
    w.string(digests[i] as string);
    w.byte(COMMA);
    w.ascii(JSON.stringify(sizes[i]));
    w.byte(CLOSE_BRACKET);
    if (w.pos >= chunk) {
      yield w.buf.subarray(0, w.pos);
      w.pos = 0;
    }
  }
  w.ascii(HEAD_CLOSE);
  yield w.buf.subarray(0, w.pos);
}

/** The whole index in one buffer (headChunks, one part); `length`: headLength's. */
function packHead(
  order: ArrayLike<number>,
  digests: readonly string[],
  sizes: ArrayLike<number>,
  length = headLength(order, digests, sizes).length,
): Uint8Array {
  const w = new ByteWriter(new Uint8Array(length));
  // The buffer grows where a digest needed escaping; with no chunk size, the one part is the index.
  const whole = headChunks(order, digests, sizes, w, Infinity).next().value as Uint8Array;
  return whole.byteLength === whole.buffer.byteLength ? w.buf : whole.slice();
}

const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

export const partsLength = (parts: PackParts): number =>
  Array.isArray(parts)
    ? parts.reduce((n: number, b: Uint8Array) => n + b.byteLength, 0)
    : (parts as StreamedParts).byteLength;

export function joinParts(parts: PackParts): Uint8Array {
  const out = new Uint8Array(partsLength(parts));
  let at = 0;
  for (const b of parts) {
    out.set(b, at);
    at += b.byteLength;
  }
  return out;
}

/** The entries, each verified against its digest (CorruptObjectError) unless `verify` is false. */
export function decodePack(bytes: Uint8Array, hasher: Hasher = nobleSha256Hex, verify = true): Map<string, Uint8Array> {
  const magic = utf8.encode(PACK_MAGIC);
  if (bytes.byteLength < magic.byteLength || decoder.decode(bytes.subarray(0, magic.byteLength)) !== PACK_MAGIC)
    throw new InvalidPackError('not a meshsnap pack');
  const nl = bytes.indexOf(10, magic.byteLength);
  if (nl < 0) throw new InvalidPackError('pack index is not terminated');
  let index: unknown;
  try {
    index = JSON.parse(decoder.decode(bytes.subarray(magic.byteLength, nl)));
  } catch {
    throw new InvalidPackError('pack index is not JSON');
  }
  const list = (index as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(list)) throw new InvalidPackError('pack index has no entries');
  const out = new Map<string, Uint8Array>();
  let at = nl + 1;
  for (const e of list as unknown[]) {
    if (!Array.isArray(e) || typeof e[0] !== 'string' || !Number.isInteger(e[1]) || (e[1] as number) < 0)
      throw new InvalidPackError('bad pack index entry');
    const [digest, length] = e as [string, number];
    if (at + length > bytes.byteLength) throw new InvalidPackError('pack is truncated');
    const entry = bytes.subarray(at, at + length);
    at += length;
    if (verify) {
      const actual = digestOf(entry, hasher);
      if (actual !== digest) throw new CorruptObjectError(digest, actual, 'pack entry');
    }
    out.set(digest, entry);
  }
  if (at !== bytes.byteLength) throw new InvalidPackError('pack has trailing bytes');
  return out;
}
