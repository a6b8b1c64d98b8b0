/**
 * Composite objects: one resource stored as an ordered list of content-addressed parts.
 *
 * A sidecar route config holds a virtual host per service of its port and exists once per client
 * namespace, so storing each whole costs services × namespaces bytes, nearly all of them the same
 * from one namespace to the next. A large one is stored instead as a composite object
 *
 *   MAGIC ‖ digest(part 1) ‖ … ‖ digest(part n)        (each digest the 32 raw bytes of its SHA-256)
 *
 * whose parts are plain objects; the resource's protobuf bytes are the parts' bytes concatenated.
 * Its digest is the SHA-256 of those composite bytes, i.e. a hash over its parts' digests, and the
 * store checks it like any object's. MAGIC keeps the two kinds apart: it begins with 0x07, a tag
 * with field number 0 and wire type 7, which no protobuf encoding (every plain object) begins with,
 * nor canonical JSON (`{`). A composite digest therefore never equals the digest of plain bytes
 * that some reader would take for the resource itself.
 *
 * Parts are plain objects, never composites (one level), so a reader needs at most one more round
 * of reads. Readers that serve or decode a resource go through `resourceBytes` /
 * `materializeResources`, which return exactly the protobuf bytes the whole object would have held.
 */
import { MeshsnapError } from '../errors.js';
import { DIGEST_PREFIX, type Hasher } from './digest.js';

/** 0x07 then `MSC1` ("meshsnap composite", version 1). */
export const COMPOSITE_MAGIC: Uint8Array = Uint8Array.of(0x07, 0x4d, 0x53, 0x43, 0x31);
const DIGEST_BYTES = 32;
const HEX64 = /^[0-9a-f]{64}$/;

/** A lowercase hex digit's value (the digest was checked to be lowercase hex). */
const nibble = (c: number): number => (c <= 57 ? c - 48 : c - 87);

/** The stored form of a composite whose parts have these digests (`sha256:<hex>`). */
export function compositeBytes(partDigests: readonly string[]): Uint8Array {
  return compositeOfRawDigests(partDigests.map(rawDigest));
}

/** The stored form of a composite whose parts have these digests, each given as its 32 raw bytes (`rawDigest`). */
export function compositeOfRawDigests(partDigests: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(COMPOSITE_MAGIC.length + partDigests.length * DIGEST_BYTES);
  out.set(COMPOSITE_MAGIC, 0);
  let at = COMPOSITE_MAGIC.length;
  for (const raw of partDigests) {
    if (raw.length !== DIGEST_BYTES) throw new Error(`composite part: a raw digest of ${raw.length} bytes`);
    out.set(raw, at);
    at += DIGEST_BYTES;
  }
  return out;
}

/** The 32 bytes a `sha256:<hex>` digest stands for. */
export function rawDigest(digest: string): Uint8Array {
  const hex = digest.startsWith(DIGEST_PREFIX) ? digest.slice(DIGEST_PREFIX.length) : '';
  if (!HEX64.test(hex)) throw new Error(`composite part: not a sha256 digest: ${JSON.stringify(digest)}`);
  const out = new Uint8Array(DIGEST_BYTES);
  for (let i = 0; i < DIGEST_BYTES; i++)
    out[i] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1));
  return out;
}

/** Whether stored bytes are a composite (they start with MAGIC). */
export function isComposite(bytes: Uint8Array): boolean {
  if (bytes.length < COMPOSITE_MAGIC.length) return false;
  for (let i = 0; i < COMPOSITE_MAGIC.length; i++) if (bytes[i] !== COMPOSITE_MAGIC[i]) return false;
  return true;
}

/** Thrown when bytes start like a composite but are not a well-formed one, or a part is bad. */
export class InvalidCompositeError extends MeshsnapError {
  override readonly name = 'InvalidCompositeError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('internal', message, options);
  }
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** The part digests of a composite; null when the bytes are a plain object. */
export function compositeParts(bytes: Uint8Array): string[] | null {
  if (!isComposite(bytes)) return null;
  const body = bytes.length - COMPOSITE_MAGIC.length;
  if (body % DIGEST_BYTES !== 0)
    throw new InvalidCompositeError(`composite of ${bytes.length} bytes: not a whole number of part digests`);
  const parts: string[] = [];
  for (let at = COMPOSITE_MAGIC.length; at < bytes.length; at += DIGEST_BYTES) {
    let hex = '';
    for (let i = 0; i < DIGEST_BYTES; i++) hex += HEX[bytes[at + i] as number];
    parts.push(DIGEST_PREFIX + hex);
  }
  return parts;
}

/** The digest a composite of these parts is stored under. */
export function compositeDigest(partDigests: readonly string[], hasher: Hasher): string {
  return DIGEST_PREFIX + hasher(compositeBytes(partDigests));
}

/** Reads one stored object's verified bytes, or null when absent (a store's getObject). */
export type ObjectReader = (digest: string) => Promise<Uint8Array | null>;

/** Concatenates parts (in order) into one array. */
export function concatParts(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The resource bytes of stored bytes: plain bytes as they are, a composite's parts read (each
 * verified by the reader, e.g. the store) and concatenated. `digest` names the object in errors.
 */
export async function materialize(read: ObjectReader, digest: string, bytes: Uint8Array): Promise<Uint8Array> {
  const parts = compositeParts(bytes);
  if (!parts) return bytes;
  const chunks = await Promise.all(
    parts.map(async (p) => {
      const b = await read(p);
      if (!b) throw new InvalidCompositeError(`composite ${digest}: part ${p} is missing`);
      if (isComposite(b)) throw new InvalidCompositeError(`composite ${digest}: part ${p} is itself a composite`);
      return b;
    }),
  );
  return concatParts(chunks);
}

/** A resource's protobuf bytes by digest (a composite materialized), or null when the object is absent. */
export async function resourceBytes(read: ObjectReader, digest: string): Promise<Uint8Array | null> {
  const bytes = await read(digest);
  return bytes === null ? null : materialize(read, digest, bytes);
}

/** `read` with composites materialized: what readers that decode or serve resources use. */
export const resourceReader =
  (read: ObjectReader): ObjectReader =>
  (digest) =>
    resourceBytes(read, digest);
