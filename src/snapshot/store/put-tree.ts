/**
 * Writing a Merkle tree's objects and documents in crash-safe order: the objects, then the
 * documents layer by layer (children before parents), so a stored document always has every
 * document and object under it. Used for snapshots (publish.ts) and stored inputs.
 */
import type { TreeDocument } from '../tree.js';
import type { SnapshotStore } from './store.js';
import { forEachLimited } from './concurrent.js';

/** Objects by digest; `get` may build the bytes on demand (see BuiltSnapshot.objects). */
export interface ObjectSource {
  readonly size: number;
  keys(): Iterable<string>;
  get(digest: string): Uint8Array | undefined;
}

export interface PutTreeResult {
  readonly objectsWritten: number;
  readonly documentsWritten: number;
  /** Object and document bytes newly stored. */
  readonly bytesWritten: number;
}

/** Objects plus documents up to this many go through the store's `putLayered` (an update's are tens). */
export const LAYERED_MAX = 512;

export async function putTree(
  store: Pick<SnapshotStore, 'hasObject' | 'putObject' | 'putDocuments' | 'putLayered'>,
  objects: ObjectSource,
  documents: readonly TreeDocument[],
  concurrency = 16,
): Promise<PutTreeResult> {
  let objectsWritten = 0;
  let documentsWritten = 0;
  let bytesWritten = 0;
  const layers = byLayer(documents);

  if (store.putLayered && objects.size + documents.length <= LAYERED_MAX) {
    // Small: one call, which a store may stage at once and only place in order.
    const all = new Map<string, Uint8Array>();
    for (const digest of objects.keys()) all.set(digest, objects.get(digest) as Uint8Array);
    const written = await store.putLayered(all, layers);
    for (const d of written.objects) {
      objectsWritten++;
      bytesWritten += (all.get(d) as Uint8Array).byteLength;
    }
    const sizes = new Map(documents.map((d) => [d.digest, d.bytes.byteLength]));
    for (const d of written.documents) {
      documentsWritten++;
      bytesWritten += sizes.get(d) ?? 0;
    }
    return { objectsWritten, documentsWritten, bytesWritten };
  }

  // Digests only: an object's bytes are read when it is written (large route configs are spliced
  // from shared parts on read, so holding them all at once would cost services × namespaces bytes).
  await forEachLimited([...objects.keys()], concurrency, async (digest) => {
    if (await store.hasObject(digest)) return;
    const bytes = objects.get(digest) as Uint8Array;
    if ((await store.putObject(digest, bytes)) === 'created') {
      objectsWritten++;
      bytesWritten += bytes.byteLength;
    }
  });

  // Layer by layer: a document is written only after every document it names.
  for (const batch of layers) {
    for (const d of await store.putDocuments(batch)) {
      documentsWritten++;
      bytesWritten += (batch.get(d) as Uint8Array).byteLength;
    }
  }
  return { objectsWritten, documentsWritten, bytesWritten };
}

/** The documents (children before parents) as one map per layer, in order. */
function byLayer(docs: readonly TreeDocument[]): Map<string, Uint8Array>[] {
  const out: Map<string, Uint8Array>[] = [];
  let layer: number | undefined;
  for (const d of docs) {
    if (out.length === 0 || d.layer !== layer) {
      out.push(new Map());
      layer = d.layer;
    }
    (out[out.length - 1] as Map<string, Uint8Array>).set(d.digest, d.bytes);
  }
  return out;
}
