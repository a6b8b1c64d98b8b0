/**
 * Publishing a built snapshot to a channel, in crash-safe order: objects, then the tree's
 * documents bottom-up (table leaves and nodes → group documents → group index → classes → top),
 * then the version record and head. A head therefore never points at missing data, and a
 * document already in the store (shared with an earlier version) is not written again.
 */
import type { Diagnostic } from '../../inputs/diagnostics.js';
import type { BuiltSnapshot } from '../build.js';
import { diagnosticsDocument, type ChannelHead, type DiagnosticsDocument, type VersionDraft, type VersionRecord } from '../manifest.js';
import type { Hasher } from '../digest.js';
import { writePacks, type PackWriteResult } from './packs.js';
import type { SnapshotStore } from './store.js';

export interface PublishInfo {
  /** ISO 8601 time of the publish (the caller's clock). */
  readonly createdAt: string;
  readonly diagnostics?: readonly Diagnostic[];
  /** Optional version-record fields: the stored inputs manifest digest and the provenance (see manifest.ts). */
  readonly record?: Pick<VersionDraft, 'inputs' | 'provenance'>;
  /** Parallel object writes (default 16). */
  readonly concurrency?: number;
  /** Write packs for a bounded cold start (packs.ts); default true. */
  readonly packs?: boolean;
  /** Hashes pack bytes (default @noble/hashes; Node edges pass node:crypto's). */
  readonly hasher?: Hasher;
}

export type PublishResult =
  | { readonly status: 'published'; readonly record: VersionRecord; readonly objectsWritten: number; readonly documentsWritten: number; /** Object and document bytes newly stored. */ readonly bytesWritten: number }
  | { readonly status: 'unchanged'; readonly head: ChannelHead };

/** A delta-built snapshot whose base is not in the store: its unchanged documents would be missing. */
export class MissingBaseError extends Error {
  override readonly name = 'MissingBaseError';
  constructor(readonly base: string) {
    super(`snapshot built as a delta of ${base}, which is not in the store: publish a full build`);
  }
}

export async function publishSnapshot(store: SnapshotStore, channel: string, snapshot: BuiltSnapshot, info: PublishInfo): Promise<PublishResult> {
  const head = await store.readChannel(channel);
  if (head && head.digest === snapshot.digest) return { status: 'unchanged', head };
  if (snapshot.base !== undefined && !(await store.hasDocument(snapshot.base))) throw new MissingBaseError(snapshot.base);

  // Beside the snapshot, awaited before the record: the diagnostics document (the same list as an
  // earlier version's is the same document, already stored) and the head's record, the packs' base.
  const diagnostics = diagnosticsDocument(info.diagnostics ?? [], info.hasher);
  const writingDiagnostics = putDiagnostics(store, diagnostics);
  const readingBase = info.packs !== false && head ? store.getVersion(channel, head.version) : Promise.resolve(null);
  writingDiagnostics.catch(() => undefined);
  readingBase.catch(() => undefined);

  let objectsWritten = 0;
  let bytesWritten = 0;
  let documentsWritten = 0;
  const docs = snapshot.documents;
  // Packs before the record (a record never names a pack not yet stored). A base whose packs
  // cannot be read (gc, corruption) is not fatal: start a new checkpoint.
  const packsFor = (base: VersionRecord | null): Promise<PackWriteResult> => writePacks(store, snapshot, base, info.hasher).catch(() => writePacks(store, snapshot, null, info.hasher));
  let packing: Promise<PackWriteResult> | undefined;

  if (store.putLayered && snapshot.objects.size + docs.length <= LAYERED_MAX) {
    // A delta: objects and documents in one call, and the packs meanwhile (they only name what
    // this snapshot holds, and are read only through the record written after both).
    if (info.packs !== false) packing = readingBase.then(packsFor);
    packing?.catch(() => undefined);
    const objects = new Map<string, Uint8Array>();
    for (const digest of snapshot.objects.keys()) objects.set(digest, snapshot.objects.get(digest) as Uint8Array);
    const layers = byLayer(docs);
    const written = await store.putLayered(objects, layers);
    for (const d of written.objects) {
      objectsWritten++;
      bytesWritten += (objects.get(d) as Uint8Array).byteLength;
    }
    const sizes = new Map(docs.map((d) => [d.digest, d.bytes.byteLength]));
    for (const d of written.documents) {
      documentsWritten++;
      bytesWritten += sizes.get(d) ?? 0;
    }
  } else {
    // Digests only: an object's bytes are read when it is written (large route configs are spliced
    // from shared parts on read, so holding them all at once would cost services × namespaces bytes).
    const pending = [...snapshot.objects.keys()];
    const worker = async (): Promise<void> => {
      for (let digest = pending.pop(); digest !== undefined; digest = pending.pop()) {
        if (await store.hasObject(digest)) continue;
        const bytes = snapshot.objects.get(digest) as Uint8Array;
        if ((await store.putObject(digest, bytes)) === 'created') {
          objectsWritten++;
          bytesWritten += bytes.byteLength;
        }
      }
    };
    const workers = Math.max(1, Math.min(info.concurrency ?? 16, pending.length));
    await Promise.all(Array.from({ length: workers }, worker));

    // Layer by layer: a document is written only after every document it names.
    for (const batch of byLayer(docs)) {
      for (const d of await store.putDocuments(batch)) {
        documentsWritten++;
        bytesWritten += (batch.get(d) as Uint8Array).byteLength;
      }
    }
    if (info.packs !== false) packing = readingBase.then(packsFor);
  }
  if (!(await store.hasDocument(snapshot.digest))) throw new Error(`snapshot document ${snapshot.digest} was not stored`);

  let packs: PackWriteResult | undefined;
  if (packing) {
    packs = await packing;
    bytesWritten += packs.bytesWritten;
  }

  const diagnosticsWritten = await writingDiagnostics;
  if (diagnosticsWritten > 0) {
    documentsWritten++;
    bytesWritten += diagnosticsWritten;
  }

  const record = await store.publish(channel, {
    digest: snapshot.digest,
    createdAt: info.createdAt,
    inputsDigest: snapshot.inputsDigest,
    compiler: snapshot.compiler,
    counts: snapshot.counts,
    diagnosticsDigest: diagnostics.digest,
    diagnosticCounts: diagnostics.counts,
    ...info.record,
    ...(packs ? { packs: packs.packs } : {}),
  });
  return { status: 'published', record, objectsWritten, documentsWritten, bytesWritten };
}

/** Objects plus documents up to this many go through `putLayered` (a delta's are tens). */
const LAYERED_MAX = 512;

/** The documents (children before parents) as one map per layer, in order. */
function byLayer(docs: BuiltSnapshot['documents']): Map<string, Uint8Array>[] {
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

/** Stores the diagnostics document unless it is there (found: its time is refreshed, for gc); the bytes written. */
async function putDiagnostics(store: SnapshotStore, doc: DiagnosticsDocument): Promise<number> {
  if (await store.hasDocument(doc.digest)) return 0;
  const written = await store.putDocuments(new Map([[doc.digest, doc.bytes]]));
  return written.length > 0 ? doc.bytes.byteLength : 0;
}
