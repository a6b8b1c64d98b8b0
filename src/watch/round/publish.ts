/**
 * A round's publish: the compiled snapshot with its stored inputs to the channel, or, when the
 * channel is pinned, the pinned config with the current endpoints, and the config as a candidate.
 * Both go through the publish guard (src/history/guard.ts): a refused unpinned snapshot is
 * recorded as a candidate, a refused pinned one is audited; the head stays.
 */
import type { Diagnostic } from '../../model/diagnostics.js';
import { putStoredInputs, type BuiltInputs } from '../../snapshot/stored-inputs/index.js';
import { packInputs } from '../../history/packed-inputs.js';
import { pinnedRound, type PinnedRefused } from '../../history/pinned-round.js';
import { recordRefused, type PublishGuard, type Refused } from '../../history/guarded-publish.js';
import { withLbEndpoints } from '../../history/mesh-summary.js';
import type { BuiltSnapshot } from '../../snapshot/build.js';
import type { Hasher } from '../../snapshot/digest.js';
import type { ChannelHead, VersionProvenance } from '../../snapshot/manifest.js';
import type { PackCache } from '../../snapshot/store/packs.js';
import { publishSnapshot, type PublishResult } from '../../snapshot/store/publish.js';
import type { SnapshotStore } from '../../snapshot/store/store.js';
import type { CachedObject } from '../object-cache.js';

export interface PublishRoundInput {
  readonly store: SnapshotStore;
  readonly channel: string;
  readonly snapshot: BuiltSnapshot;
  readonly diagnostics: readonly Diagnostic[];
  /** The round's inputs: their digest goes in the version record. */
  readonly inputs: BuiltInputs;
  /** The inputs documents to write (all of them after a failed publish, else the round's new ones); read when not pinned. */
  readonly inputsToWrite: () => BuiltInputs;
  /**
   * Stored inputs whose tree, with `inputsToWrite()` and what earlier rounds wrote loose, holds
   * every entry of this round's inputs (the inputs this watcher last stored in a record).
   */
  readonly inputsBase?: string;
  /** Every entry of the round's inputs (a checkpoint pack carries them all). */
  readonly allInputs: () => BuiltInputs;
  /** Every object compiled; read (and sorted) only when the channel is pinned: an unpinned round stays O(change). */
  readonly objects: () => readonly CachedObject[];
  /** Called when needed, so that both read the state of that moment. */
  readonly provenance: () => VersionProvenance;
  readonly createdAt: () => string;
  /** Decoded packs kept between rounds (pack-cache.ts). */
  readonly packCache?: PackCache;
  readonly hasher?: Hasher;
  /** Kept across rounds: it remembers the served summary and decoded endpoint counts. */
  readonly guard: PublishGuard;
}

export interface PublishedRound {
  readonly published: PublishResult;
  /** The channel is pinned and its cluster config differs: other snapshots than this one were stored. */
  readonly pinned: boolean;
  /** The publish guard refused the snapshot (`published` is then the unchanged head); on a pinned channel, the pinned config with these endpoints. */
  readonly refused?: Refused | PinnedRefused;
  /** Object and document bytes written to the store (stored inputs and snapshot). */
  readonly bytesWritten: number;
  readonly documentsWritten: number;
  /** Reading the head and writing inputs, objects, documents, version record and head. */
  readonly publishMs: number;
  /** The served version's record names this round's inputs (written now, or already). */
  readonly inputsRecorded: boolean;
}

export async function publishRound(input: PublishRoundInput): Promise<PublishedRound> {
  const { store, channel, inputs, diagnostics } = input;
  let published: PublishResult;
  let bytesWritten = 0;
  let documentsWritten = 0;
  const tp = performance.now();
  // A pinned channel serves the pinned config with the current endpoints, and config changes
  // become candidates (src/history/pinned-round.ts); null when not pinned or nothing differs.
  const pinned = await pinnedRound({
    store,
    channel,
    get objects() {
      return input.objects();
    },
    snapshot: input.snapshot,
    diagnostics,
    provenance: input.provenance(),
    createdAt: input.createdAt(),
    ...(input.hasher ? { hasher: input.hasher } : {}),
    guard: input.guard,
  });
  const check = pinned ? undefined : await input.guard.check(store, channel, input.snapshot);
  let refused: Refused | PinnedRefused | undefined;
  let served: ChannelHead | undefined;
  if (pinned) {
    published = pinned.served;
    refused = pinned.refused;
  } else if (check?.served != null && !check.verdict.allowed) {
    const compiled = { snapshot: input.snapshot, diagnostics, stored: input.inputsToWrite() };
    refused = await recordRefused(store, channel, compiled, { provenance: input.provenance() }, input.createdAt(), {
      ...check,
      served: check.served,
    });
    published = { status: 'unchanged', head: { version: check.served, digest: input.snapshot.digest } };
  } else if (check === undefined && (served = await servedWith(store, channel, inputs.digest))) {
    // The channel already serves this snapshot, compiled from these very inputs (a restart over
    // the same state): its record names them, so they are stored; nothing is written or touched.
    published = { status: 'unchanged', head: served };
  } else {
    // The round's new stored inputs, objects and documents go into the version's pack only
    // (packed-inputs.ts, pack-index.ts), not as loose keys: one endpoint change is one pack, the
    // version record and the head, instead of tens of small files (or PUTs). The record comes
    // after the pack: a record never names entries that are not stored. The version's packs
    // carry every input at each checkpoint, so entries held only in an older pack stay reachable
    // from every record.
    const toWrite = input.inputsToWrite();
    const round = { toWrite, all: input.allInputs, ...(input.inputsBase ? { base: input.inputsBase } : {}) };
    // The record counts endpoints (LbEndpoints), from the summary the guard made anyway.
    published = await publishSnapshot(store, channel, input.snapshot, {
      ...(check ? { recordFields: { counts: withLbEndpoints(input.snapshot.counts, check.next) } } : {}),
      createdAt: input.createdAt(),
      diagnostics,
      record: { inputs: inputs.digest, provenance: input.provenance() },
      packOnly: true,
      packedInputs: packInputs(store, round),
      ...(input.packCache ? { packCache: input.packCache } : {}),
      ...(input.hasher ? { hasher: input.hasher } : {}),
    });
    // The channel already serves this snapshot, so no pack was written: the inputs go loose (the
    // next round's change builds on them).
    const wrote = published.status === 'unchanged' ? await putStoredInputs(store, toWrite) : NOTHING_WRITTEN;
    bytesWritten = wrote.bytesWritten + (published.status === 'published' ? published.bytesWritten : 0);
    documentsWritten = wrote.documentsWritten + (published.status === 'published' ? published.documentsWritten : 0);
  }
  return {
    published,
    pinned: pinned !== null,
    ...(refused ? { refused } : {}),
    bytesWritten,
    documentsWritten,
    publishMs: performance.now() - tp,
    inputsRecorded: !pinned && !refused && (served !== undefined || published.status === 'published'),
  };
}

const NOTHING_WRITTEN = { objectsWritten: 0, documentsWritten: 0, bytesWritten: 0 } as const;

/** The channel's head when its version record names exactly these stored inputs. */
async function servedWith(
  store: Pick<SnapshotStore, 'readChannel' | 'getVersion'>,
  channel: string,
  inputs: string,
): Promise<ChannelHead | undefined> {
  const head = await store.readChannel(channel);
  const record = head ? await store.getVersion(channel, head.version) : null;
  return head && record?.inputs === inputs ? head : undefined;
}
