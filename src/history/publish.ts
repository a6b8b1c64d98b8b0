/**
 * Publishing a history-made snapshot: stored inputs first (a record never names missing inputs) or,
 * for a big one, in its pack; then publishSnapshot's crash-safe order, with the history fields on
 * the version record.
 */
import { putStoredInputs } from '../snapshot/stored-inputs/index.js';
import type { VersionDraft } from '../snapshot/manifest.js';
import type { PackCache } from '../snapshot/store/packs.js';
import { isBigPublish, publishSnapshot, type PublishingStore, type PublishResult } from '../snapshot/store/publish.js';
import type { Compiled } from './layers.js';
import { countedSnapshot } from './mesh-summary.js';
import { packInputs } from './packed-inputs.js';

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
  // A big publish (a full build) carries its stored inputs in its pack, as a watcher's round does
  // (packed-inputs.ts): one file instead of one per input (~60k at 10k services). A small one
  // writes them loose first: a record never names inputs that are not stored.
  const { snapshot, stored } = compiled;
  const big = isBigPublish(snapshot);
  if (!big) await putStoredInputs(store, stored);
  const counts = await countedSnapshot(snapshot, (d) => store.getObject(d));
  const extra: Partial<VersionDraft> = { inputs: stored.digest, counts, ...dropUndefined(fields) };
  return publishSnapshot(store, channel, snapshot, {
    createdAt,
    diagnostics: compiled.diagnostics,
    recordFields: extra,
    ...(big ? { packOnly: true, packedInputs: packInputs(store, { toWrite: stored, all: () => stored }) } : {}),
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
