/**
 * Publishing a built snapshot to a channel, in crash-safe order: objects, then the tree's
 * documents bottom-up (table leaves and nodes → group documents → group index → classes → top),
 * then the version record and head. A head therefore never points at missing data, and a
 * document already in the store (shared with an earlier version) is not written again.
 */
import type { Diagnostic } from '../../inputs/diagnostics.js';
import type { BuiltSnapshot } from '../build.js';
import type { ChannelHead, VersionDraft, VersionRecord } from '../manifest.js';
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

  let objectsWritten = 0;
  let bytesWritten = 0;
  const pending = [...snapshot.objects];
  const worker = async (): Promise<void> => {
    for (let next = pending.pop(); next; next = pending.pop()) {
      const [digest, bytes] = next;
      if (await store.hasObject(digest)) continue;
      if ((await store.putObject(digest, bytes)) === 'created') {
        objectsWritten++;
        bytesWritten += bytes.byteLength;
      }
    }
  };
  const workers = Math.max(1, Math.min(info.concurrency ?? 16, pending.length));
  await Promise.all(Array.from({ length: workers }, worker));

  // Layer by layer: a document is written only after every document it names.
  let documentsWritten = 0;
  const docs = snapshot.documents;
  for (let i = 0; i < docs.length; ) {
    const layer = docs[i]?.layer;
    const batch = new Map<string, Uint8Array>();
    for (; i < docs.length && docs[i]?.layer === layer; i++) {
      const d = docs[i] as (typeof docs)[number];
      batch.set(d.digest, d.bytes);
    }
    for (const d of await store.putDocuments(batch)) {
      documentsWritten++;
      bytesWritten += (batch.get(d) as Uint8Array).byteLength;
    }
  }
  if (!(await store.hasDocument(snapshot.digest))) throw new Error(`snapshot document ${snapshot.digest} was not stored`);

  // Packs after the documents and before the record: a record never names a pack not yet stored.
  let packs: PackWriteResult | undefined;
  if (info.packs !== false) {
    const base = head ? await store.getVersion(channel, head.version) : null;
    // A base whose packs cannot be read (gc, corruption) is not fatal: start a new checkpoint.
    packs = await writePacks(store, snapshot, base, info.hasher).catch(() => writePacks(store, snapshot, null, info.hasher));
    bytesWritten += packs.bytesWritten;
  }

  const record = await store.publish(channel, {
    digest: snapshot.digest,
    createdAt: info.createdAt,
    inputsDigest: snapshot.inputsDigest,
    compiler: snapshot.compiler,
    counts: snapshot.counts,
    diagnostics: info.diagnostics ?? [],
    ...info.record,
    ...(packs ? { packs: packs.packs } : {}),
  });
  return { status: 'published', record, objectsWritten, documentsWritten, bytesWritten };
}
