/**
 * What the SnapshotBuilder keeps of an encoded resource between builds: its digest and its parts'
 * digests (what the reference counts release), not its bytes. The bytes go to the store with the
 * snapshot that brought them; a later full build, which lists every object, encodes again those
 * whose message did not change from the messages its tables hold (the same message, the same bytes).
 */
import type { EncodedResource } from '../encoder.js';
import type { ObjectTarget } from './spooling-objects.js';

const NO_BYTES = new Uint8Array(0);

/** `encoded` without its bytes (nor its parts' bytes): what the reference counts hold. */
export function withoutBytes(encoded: EncodedResource): EncodedResource {
  const { type, digest, parts } = encoded;
  return parts
    ? { type, digest, bytes: NO_BYTES, parts: parts.map((p) => ({ digest: p.digest, bytes: NO_BYTES })) }
    : { type, digest, bytes: NO_BYTES };
}

/** Adds an encoded resource's object and its parts' objects, digest → bytes. */
export function addObjects(out: ObjectTarget, encoded: EncodedResource): void {
  out.set(encoded.digest, encoded.bytes);
  for (const part of encoded.parts ?? []) out.set(part.digest, part.bytes);
}

/** The bytes of `digest`, which is `encoded` itself or one of its parts. */
export function bytesIn(encoded: EncodedResource, digest: string): Uint8Array {
  if (encoded.digest === digest) return encoded.bytes;
  const part = encoded.parts?.find((p) => p.digest === digest);
  if (!part) throw new Error(`bytesIn: ${digest} is neither ${encoded.digest} nor one of its parts`);
  return part.bytes;
}
