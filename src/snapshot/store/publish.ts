/**
 * Publishing a built snapshot to a channel, in crash-safe order: objects, then the tree's
 * documents bottom-up (table leaves and nodes → group documents → group index → classes → top),
 * then the version record and head. A head therefore never points at missing data, and a
 * document already in the store (shared with an earlier version) is not written again.
 */
import { MeshsnapError } from '../../errors.js';
import type { Diagnostic } from '../../model/diagnostics.js';
import type { BuiltSnapshot } from '../build.js';
import {
  diagnosticsDocument,
  type ChannelHead,
  type DiagnosticsDocument,
  type VersionDraft,
  type VersionRecord,
} from '../manifest.js';
import type { Hasher } from '../digest.js';
import { writePacks, type PackCache, type PackInputs, type PackWriteResult } from './packs.js';
import { LAYERED_MAX, putTree } from './put-tree.js';
import type { ChannelReader, ChannelWriter, ContentReader, ContentWriter } from './store.js';

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
  /**
   * Write the new objects and documents only into the version's pack, not as loose keys (readers
   * find them through the record: pack-index.ts). Default: when the snapshot holds more than
   * LAYERED_MAX objects and documents (a full build, a large delta). Ignored without packs.
   */
  readonly packOnly?: boolean;
  /** Hashes pack bytes (default @noble/hashes; Node edges pass node:crypto's). */
  readonly hasher?: Hasher;
  /** Decoded packs kept between publishes by a long-running publisher (pack-cache.ts); none by default. */
  readonly packCache?: PackCache;
  /** More version-record fields (history's status, origin, actor…), merged over everything else. */
  readonly recordFields?: Partial<VersionDraft>;
  /**
   * Stored inputs the version's packs carry (packs.ts): `added` goes into its new pack, which the
   * record names, and a checkpoint holds `all()`. Needs packs (not `packs: false`).
   */
  readonly packedInputs?: PackInputs;
  /** Awaited before the version record is written (writes the record must not name before they finish, e.g. stored inputs). */
  readonly waitBefore?: Promise<unknown>;
}

export type PublishResult =
  | {
      readonly status: 'published';
      readonly record: VersionRecord;
      readonly objectsWritten: number;
      readonly documentsWritten: number;
      /** Object and document bytes newly stored. */ readonly bytesWritten: number;
    }
  | { readonly status: 'unchanged'; readonly head: ChannelHead };

/** A delta-built snapshot whose base is not in the store: its unchanged documents would be missing. */
export class MissingBaseError extends MeshsnapError {
  override readonly name = 'MissingBaseError';
  constructor(readonly base: string) {
    super('conflict', `snapshot built as a delta of ${base}, which is not in the store: publish a full build`);
  }
}

/**
 * Whether a snapshot is published pack-only by default (PublishInfo.packOnly): more than
 * LAYERED_MAX objects and documents (a full build, a large delta).
 */
export const isBigPublish = (snapshot: Pick<BuiltSnapshot, 'objects' | 'documents'>): boolean =>
  snapshot.objects.size + snapshot.documents.length > LAYERED_MAX;

/** What publishing needs of a store. */
export type PublishingStore = ContentReader &
  ContentWriter &
  Pick<ChannelReader, 'readChannel' | 'getVersion'> &
  Pick<ChannelWriter, 'publish'>;

export async function publishSnapshot(
  store: PublishingStore,
  channel: string,
  snapshot: BuiltSnapshot,
  info: PublishInfo,
): Promise<PublishResult> {
  if (info.packs === false && info.packedInputs) throw new Error('publishSnapshot: packedInputs needs packs');
  const head = await store.readChannel(channel);
  if (head && head.digest === snapshot.digest) return { status: 'unchanged', head };
  // The head's snapshot is stored whole (a head never names missing data): no need to look.
  if (snapshot.base !== undefined && snapshot.base !== head?.digest && !(await hasStoredDocument(store, snapshot.base)))
    throw new MissingBaseError(snapshot.base);

  // Beside the snapshot, awaited before the record: the diagnostics document (the same list as an
  // earlier version's is the same document, already stored) and the head's record, the packs' base.
  const diagnostics = diagnosticsDocument(info.diagnostics ?? [], info.hasher);
  const writingDiagnostics = putDiagnostics(store, diagnostics);
  const readingBase = info.packs !== false && head ? store.getVersion(channel, head.version) : Promise.resolve(null);
  writingDiagnostics.catch(() => undefined);
  readingBase.catch(() => undefined);

  // Packs before the record (a record never names a pack not yet stored). A base whose packs
  // cannot be read (gc, corruption) is not fatal: start a new checkpoint.
  const writingPacks = (): Promise<PackWriteResult> =>
    readingBase.then((base) =>
      writePacks(store, snapshot, base, info.hasher, info.packCache, info.packedInputs).catch(() =>
        // A new checkpoint holds every input: what `added` left out for the base is in it too.
        writePacks(store, snapshot, null, info.hasher, info.packCache, info.packedInputs),
      ),
    );
  let objectsWritten = 0;
  let documentsWritten = 0;
  let bytesWritten = 0;
  let packs: PackWriteResult | undefined;
  if (info.packs !== false && (info.packOnly ?? isBigPublish(snapshot))) {
    // A big publish (a full build, a large delta): its new entries go into its pack only, which
    // the record names (readers find them through it: pack-index.ts): one file, not thousands.
    packs = await writingPacks();
    if (packs.bytesWritten > 0) {
      objectsWritten = packs.added.objects;
      documentsWritten = packs.added.documents;
    }
  } else {
    // A delta's packs are written meanwhile (they name only what this snapshot holds, and are
    // read only through the record written after both).
    const packing = info.packs === false ? undefined : writingPacks();
    packing?.catch(() => undefined);
    const tree = await putTree(store, snapshot.objects, snapshot.documents, info.concurrency);
    ({ objectsWritten, documentsWritten, bytesWritten } = tree);
    const [stored, packed] = await Promise.all([store.hasDocument(snapshot.digest), packing]);
    if (!stored) throw new Error(`snapshot document ${snapshot.digest} was not stored`);
    packs = packed;
  }
  if (packs) bytesWritten += packs.bytesWritten;

  const diagnosticsWritten = await writingDiagnostics;
  if (diagnosticsWritten > 0) {
    documentsWritten++;
    bytesWritten += diagnosticsWritten;
  }

  await info.waitBefore;
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
    ...info.recordFields,
  });
  return { status: 'published', record, objectsWritten, documentsWritten, bytesWritten };
}

/** Whether a document is stored, loose or in a pack a record names (a pack-only publish's). */
async function hasStoredDocument(store: ContentReader, digest: string): Promise<boolean> {
  return (await store.hasDocument(digest)) || (await store.getDocument(digest)) !== null;
}

/** Stores the diagnostics document unless it is there (found: its time is refreshed, for gc); the bytes written. */
async function putDiagnostics(
  store: Pick<ContentReader, 'hasDocument'> & Pick<ContentWriter, 'putDocuments'>,
  doc: DiagnosticsDocument,
): Promise<number> {
  if (await store.hasDocument(doc.digest)) return 0;
  const written = await store.putDocuments(new Map([[doc.digest, doc.bytes]]));
  return written.length > 0 ? doc.bytes.byteLength : 0;
}
