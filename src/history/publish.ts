/**
 * Publishing a history-made snapshot: stored inputs first (a record never names missing inputs),
 * then publishSnapshot's crash-safe order, with the history fields on the version record.
 */
import { putStoredInputs } from '../snapshot/stored-inputs/index.js';
import type { VersionDraft } from '../snapshot/manifest.js';
import type { PackCache } from '../snapshot/store/packs.js';
import { publishSnapshot, type PublishingStore, type PublishResult } from '../snapshot/store/publish.js';
import type { Compiled } from './layers.js';
import { countedSnapshot } from './mesh-summary.js';

export type RecordFields = Pick<VersionDraft, 'provenance' | 'status' | 'origin' | 'actor' | 'reason' | 'source'>;

/** `packCache`: a long-lived publisher's decoded packs (pack-cache.ts), so the next delta pack is merged without reading the last one back. */
export async function publishCompiled(
  store: PublishingStore,
  channel: string,
  compiled: Compiled,
  fields: RecordFields,
  createdAt: string,
  packCache?: PackCache,
): Promise<PublishResult> {
  const head = await store.readChannel(channel);
  if (head?.digest === compiled.snapshot.digest) return { status: 'unchanged', head };
  await putStoredInputs(store, compiled.stored);
  const counts = await countedSnapshot(compiled.snapshot, (d) => store.getObject(d));
  const extra: Partial<VersionDraft> = { inputs: compiled.stored.digest, counts, ...dropUndefined(fields) };
  return publishSnapshot(store, channel, compiled.snapshot, {
    createdAt,
    diagnostics: compiled.diagnostics,
    recordFields: extra,
    ...(packCache ? { packCache } : {}),
  });
}

function dropUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The version a publish result stands on. */
export const resultVersion = (r: PublishResult): number =>
  r.status === 'published' ? r.record.version : r.head.version;
export const resultDigest = (r: PublishResult): string => (r.status === 'published' ? r.record.digest : r.head.digest);
