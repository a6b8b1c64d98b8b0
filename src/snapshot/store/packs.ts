/**
 * Packs: a bounded relay cold start.
 *
 * A snapshot is thousands of small documents and objects; reading them one by one from S3 costs
 * one request each. So every published version also writes one **pack**: the documents and
 * objects that are new in this version (an index plus their bytes, concatenated), stored
 * content-addressed as an object. The version record lists the packs that together hold its whole
 * snapshot: a **checkpoint** (every document and object of some earlier version) and the **delta**
 * packs written since. A cold start reads the head, the version record and those ≤ MAX_PACKS
 * packs, and nothing else (loadSnapshotPacked).
 *
 * Why storage stays O(change): a delta pack holds only what the version added. Deltas are merged
 * like a binary counter (the newest is merged into the one before while it is at least half its
 * size, or when there are more than MAX_PACKS - 1), so a byte is rewritten O(log n) times and the
 * chain stays short; a new checkpoint is written only when the deltas since the last one reach
 * CHECKPOINT_RATIO of its size, i.e. after at least that many bytes changed (amortized O(change)).
 *
 * Correctness rests on one invariant: the union of a record's packs ⊇ its snapshot. A new delta
 * is "snapshot − base snapshot" (base: the head the publisher read), and a merged delta is the
 * union of what it merges, so the invariant carries over.
 *
 * Stored inputs may ride along (`PackInputs`, the watcher's big publishes): every entry of a
 * record's stored inputs is then loose or in one of its packs. A checkpoint holds all of them; a
 * delta holds those the base's inputs lack (`added`), which the publisher works out.
 *
 * The parts: pack-format.ts (encode/decode), pack-policy.ts (when to checkpoint and merge),
 * pack-contents.ts (what a snapshot holds), pack-load.ts (the cold start), pack-cache.ts (a bounded
 * cache a long-running publisher injects), and this file (writing a version's packs).
 */
import { digestOf, nobleSha256Hex, type Hasher } from '../digest.js';
import type { BuiltSnapshot } from '../build.js';
import { byteLengthIn, isSpooled, type SpooledObjects } from '../build/object-spool.js';
import type { TreeDocument } from '../tree.js';
import type { PackList, PackRef, VersionRecord } from '../manifest.js';
import { newSince, snapshotEntries } from './pack-contents.js';
import {
  decodePack,
  encodePackParts,
  InvalidPackError,
  joinParts,
  partsLength,
  streamPackPartsAt,
  type PackEntries,
  type PackParts,
} from './pack-format.js';
import { mergesInto, needsCheckpoint, packRefs } from './pack-policy.js';
import type { ContentReader, ContentWriter } from './store.js';

export { decodePack, encodePack, InvalidPackError, PACK_MAGIC, type PackEntries } from './pack-format.js';
export { CHECKPOINT_RATIO, MAX_PACKS, packDigests } from './pack-policy.js';
export { newSince, snapshotEntries } from './pack-contents.js';
export { loadSnapshotPacked, type PackedLoad } from './pack-load.js';

/**
 * Decoded packs a long-running publisher keeps between publishes (bounded: pack-cache.ts). Packs
 * are content-addressed, so an entry never goes stale.
 */
export interface PackCache {
  get(digest: string): PackEntries | undefined;
  remember(digest: string, entries: PackEntries, bytes: number): void;
}

/** Objects and documents (stored inputs' shape: BuiltInputs) to carry in packs. */
export interface PackedEntries {
  readonly objects: ReadonlyMap<string, Uint8Array>;
  readonly documents: readonly Pick<TreeDocument, 'digest' | 'bytes'>[];
}

/** Stored inputs a version's packs carry besides its snapshot. */
export interface PackInputs {
  /** In a delta pack over `base`'s packs: the entries of the inputs that `base`'s inputs lack (or more). */
  readonly added: (base: VersionRecord) => Promise<PackedEntries> | PackedEntries;
  /** Every entry of its inputs: a checkpoint holds them all. */
  readonly all: () => PackedEntries;
}

export interface PackWriteResult {
  readonly packs: PackList;
  /** Pack bytes newly stored. */
  readonly bytesWritten: number;
  /** The entries this version's pack adds (a checkpoint: all of them), objects and documents. */
  readonly added: { readonly objects: number; readonly documents: number };
}

/**
 * Writes the packs for a snapshot about to be published on top of `base` (the head's record,
 * or null for a first version) and returns the list for its record.
 */
export async function writePacks(
  store: ContentReader & ContentWriter,
  snapshot: BuiltSnapshot,
  base: VersionRecord | null,
  hasher: Hasher = nobleSha256Hex,
  cache?: PackCache,
  inputs?: PackInputs,
): Promise<PackWriteResult> {
  let bytesWritten = 0;
  let inputObjects: ReadonlyMap<string, Uint8Array> | undefined;
  const count = (entries: Pick<PackEntries, 'keys' | 'size'>): PackWriteResult['added'] => {
    let objects = 0;
    for (const d of entries.keys()) if (snapshot.objects.has(d) || inputObjects?.has(d)) objects++;
    return { objects, documents: entries.size - objects };
  };
  const withInputs = (entries: Map<string, Uint8Array>, carried: PackedEntries | undefined): void => {
    if (!carried) return;
    inputObjects = carried.objects;
    for (const d of carried.documents) entries.set(d.digest, d.bytes);
    for (const [d, b] of carried.objects) entries.set(d, b);
  };
  /** `entries` undefined: streamed parts, which a cache cannot keep. */
  const put = async (entries: PackEntries | undefined, parts: PackParts): Promise<PackRef> => {
    const size = partsLength(parts);
    let digest: string;
    let created: boolean;
    if (store.putObjectParts && size > SMALL_PACK) {
      // A big pack (a checkpoint) is written from its parts: never joined into one buffer.
      const put = await store.putObjectParts(parts);
      ({ digest } = put);
      created = put.status === 'created';
    } else {
      const bytes = joinParts(parts);
      digest = digestOf(bytes, hasher);
      // A small pack goes through the store's small-batch path when it has one (one object, no layers).
      created =
        store.putLayered && size <= SMALL_PACK
          ? (await store.putLayered(new Map([[digest, bytes]]), [])).objects.length > 0
          : (await store.putObject(digest, bytes)) === 'created';
    }
    if (created) bytesWritten += size;
    if (entries) cache?.remember(digest, entries, size);
    return { digest, bytes: size };
  };
  const loaded = new Map<string, ReadonlyMap<string, Uint8Array>>();
  const readPack = async (ref: PackRef): Promise<ReadonlyMap<string, Uint8Array>> => {
    let m = loaded.get(ref.digest) ?? cache?.get(ref.digest);
    if (!m) {
      const bytes = await store.getObject(ref.digest);
      if (!bytes) throw new InvalidPackError(`pack ${ref.digest} is missing`);
      m = decodePack(bytes, hasher);
    }
    loaded.set(ref.digest, m);
    return m;
  };
  const checkpoint = async (): Promise<PackWriteResult> => {
    if (snapshot.base === undefined && isSpooled(snapshot.objects)) return spooledCheckpoint();
    let entries: Map<string, Uint8Array>;
    if (snapshot.base === undefined) {
      entries = new Map(snapshot.documents.map((d) => [d.digest, d.bytes]));
      for (const [d, b] of snapshot.objects) entries.set(d, b);
    } else {
      // A delta build holds only what changed: the rest comes from the base's packs, else the store.
      const have = new Map<string, Uint8Array>(snapshot.documents.map((d) => [d.digest, d.bytes]));
      for (const [d, b] of snapshot.objects) have.set(d, b);
      const basePacks = base?.packs
        ? await Promise.all(packRefs(base.packs).map((r) => readPack(r).catch(() => new Map<string, Uint8Array>())))
        : [];
      for (const m of basePacks) for (const [d, b] of m) if (!have.has(d)) have.set(d, b);
      entries = await snapshotEntries(
        snapshot.digest,
        (d) => have.get(d) ?? store.getDocument(d),
        (d) => have.get(d) ?? store.getObject(d),
      );
    }
    withInputs(entries, inputs?.all());
    const ref = await put(entries, encodePackParts(entries));
    return { packs: { checkpoint: ref, deltas: [] }, bytesWritten, added: count(entries) };
  };
  /**
   * A full build's checkpoint whose objects are spooled: streamed from the spool into the store,
   * never all held. Its documents are read from memory; the stored inputs' objects (spooled too,
   * in the CLI) are read one at a time as the pack is written, like the snapshot's.
   */
  const spooledCheckpoint = async (): Promise<PackWriteResult> => {
    const objects = snapshot.objects as SpooledObjects;
    const carried = inputs?.all();
    inputObjects = carried?.objects;
    const entries = spooledEntries(objects, [...snapshot.documents, ...(carried?.documents ?? [])], inputObjects);
    const { digests, handles, held } = entries;
    // The parts are read in digest order: the spool gives its objects a group at a time.
    const spooled = objects.inDigestOrder();
    const read = (i: number): Uint8Array => {
      const d = digests[i] as string;
      const handle = handles[i] as number;
      return held[i] ?? (handle >= 0 ? spooled(d, handle) : inputObjects?.get(d)) ?? notHeld(d);
    };
    const ref = await put(undefined, streamPackPartsAt(digests, entries.sizes, read));
    return {
      packs: { checkpoint: ref, deltas: [] },
      bytesWritten,
      added: { objects: digests.length - entries.documentsOnly, documents: entries.documentsOnly },
    };
  };

  const chain = base?.packs;
  if (!chain || !base) return checkpoint();
  let delta: Map<string, Uint8Array>;
  if (snapshot.base === base.digest) {
    delta = new Map(snapshot.documents.map((d) => [d.digest, d.bytes]));
    for (const [d, b] of snapshot.objects) delta.set(d, b);
  } else if (snapshot.base === undefined) {
    delta = await newSince(store, snapshot, base.digest);
  } else {
    return checkpoint(); // a delta of something other than the head: rare (a racing publisher)
  }
  if (inputs) withInputs(delta, await inputs.added(base));
  if (delta.size === 0) return { packs: chain, bytesWritten, added: { objects: 0, documents: 0 } };
  let last = encodePackParts(delta);
  if (needsCheckpoint(chain, partsLength(last))) return checkpoint();

  // Binary-counter merging (pack-policy.ts).
  const deltas = [...chain.deltas];
  let lastEntries: PackEntries = delta;
  for (;;) {
    const prev = deltas[deltas.length - 1];
    if (!prev || !mergesInto(partsLength(last), prev, deltas.length)) break;
    const merged = new Map(await readPack(prev));
    for (const [d, b] of lastEntries) merged.set(d, b);
    deltas.pop();
    lastEntries = merged;
    last = encodePackParts(merged);
  }
  deltas.push(await put(lastEntries, last));
  return { packs: { checkpoint: chain.checkpoint, deltas }, bytesWritten, added: count(delta) };
}

/**
 * A spooled checkpoint's entries, each digest once, by position (streaming them then looks nothing
 * up by digest): the spooled objects (`handles[i]`), the stored inputs' objects (`handles[i]` -1,
 * nothing held: read from `inputObjects` when written), then the documents not among them (`held`).
 */
function spooledEntries(
  objects: SpooledObjects,
  documents: readonly Pick<TreeDocument, 'digest' | 'bytes'>[],
  inputObjects: ReadonlyMap<string, Uint8Array> | undefined,
): {
  readonly digests: string[];
  readonly sizes: number[];
  readonly handles: number[];
  readonly held: (Uint8Array | undefined)[];
  readonly documentsOnly: number;
} {
  const digests: string[] = [];
  const sizes: number[] = [];
  const handles: number[] = [];
  const held: (Uint8Array | undefined)[] = [];
  const add = (digest: string, size: number, handle: number, bytes: Uint8Array | undefined): void => {
    digests.push(digest);
    sizes.push(size);
    handles.push(handle);
    held.push(bytes);
  };
  // Each digest once: the spool's and the inputs' keys are distinct within each (maps), so only
  // what follows them is looked up in what came before (no set of all ~230k digests at 10k).
  for (const [d, handle] of objects.handleEntries()) add(d, objects.byteLengthAt(handle), handle, undefined);
  if (inputObjects)
    for (const d of inputObjects.keys())
      if (!objects.has(d)) add(d, byteLengthIn(inputObjects, d) ?? notHeld(d), -1, undefined);
  const objectCount = digests.length;
  const seenDocuments = new Set<string>();
  for (const d of documents) {
    if (objects.has(d.digest) || inputObjects?.has(d.digest) || seenDocuments.has(d.digest)) continue;
    seenDocuments.add(d.digest);
    add(d.digest, d.bytes.byteLength, -1, d.bytes);
  }
  return { digests, sizes, handles, held, documentsOnly: digests.length - objectCount };
}

function notHeld(digest: string): never {
  throw new Error(`pack entry ${digest} is not held`);
}

/** Packs up to this size are written with the store's putLayered when it has one. */
const SMALL_PACK = 1 << 20;
