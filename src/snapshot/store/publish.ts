/**
 * Publishing a built snapshot to a channel, in crash-safe order: objects, then the snapshot
 * document, then the version record and head. A head therefore never points at missing data.
 */
import type { Diagnostic } from '../../inputs/diagnostics.js';
import { snapshotCounts, type BuiltSnapshot } from '../build.js';
import type { ChannelHead, VersionDraft, VersionRecord } from '../manifest.js';
import type { SnapshotStore } from './store.js';

export interface PublishInfo {
  /** ISO 8601 time of the publish (the caller's clock). */
  readonly createdAt: string;
  readonly diagnostics?: readonly Diagnostic[];
  /** Optional version-record fields: the stored inputs manifest digest and the provenance (see manifest.ts). */
  readonly record?: Pick<VersionDraft, 'inputs' | 'provenance'>;
  /** Parallel object writes (default 16). */
  readonly concurrency?: number;
}

export type PublishResult =
  | { readonly status: 'published'; readonly record: VersionRecord; readonly objectsWritten: number }
  | { readonly status: 'unchanged'; readonly head: ChannelHead };

export async function publishSnapshot(store: SnapshotStore, channel: string, snapshot: BuiltSnapshot, info: PublishInfo): Promise<PublishResult> {
  const head = await store.readChannel(channel);
  if (head && head.digest === snapshot.digest) return { status: 'unchanged', head };

  let objectsWritten = 0;
  const pending = [...snapshot.objects];
  const worker = async (): Promise<void> => {
    for (let next = pending.pop(); next; next = pending.pop()) {
      const [digest, bytes] = next;
      if (await store.hasObject(digest)) continue;
      if ((await store.putObject(digest, bytes)) === 'created') objectsWritten++;
    }
  };
  const workers = Math.max(1, Math.min(info.concurrency ?? 16, pending.length));
  await Promise.all(Array.from({ length: workers }, worker));

  const stored = await store.putSnapshot(snapshot.content);
  if (stored !== snapshot.digest) throw new Error(`store computed snapshot digest ${stored}, expected ${snapshot.digest}`);

  const record = await store.publish(channel, {
    digest: snapshot.digest,
    createdAt: info.createdAt,
    inputsDigest: snapshot.content.inputsDigest,
    compiler: snapshot.content.compiler,
    counts: snapshotCounts(snapshot.content),
    diagnostics: info.diagnostics ?? [],
    ...info.record,
  });
  return { status: 'published', record, objectsWritten };
}
