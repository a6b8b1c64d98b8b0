/**
 * What the SnapshotBuilder keeps of an encoded resource between builds: its digest and its parts'
 * digests (what the reference counts release, refcounts.ts), not its bytes. The bytes go to the store with the
 * snapshot that brought them; a later full build, which lists every object, encodes again those
 * whose message did not change from the messages its tables hold (the same message, the same bytes).
 */
import type { EncodedResource } from '../encoder.js';
import type { ObjectTarget } from './spooling-objects.js';

/** Adds an encoded resource's object and its parts' objects, digest → bytes. */
export function addObjects(out: ObjectTarget, encoded: EncodedResource): void {
  out.set(encoded.digest, encoded.bytes);
  for (const part of encoded.parts ?? []) out.set(part.digest, part.bytes);
}
