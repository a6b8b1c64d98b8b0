/**
 * A watcher round on a pinned channel (called by src/watch/watcher.ts):
 * - the served version is the pinned config layer + the cluster's current endpoint layer;
 * - a cluster config that differs from the pinned one is published as a candidate to
 *   `<channel>.candidates` (once per distinct config layer), diffable but never served.
 * - the served version goes through the publish guard (guard.ts): pinned config + endpoints that
 *   collapsed is refused, audited (kind `guard`, with `pinned`), and the head stays. It is not
 *   recorded as a candidate: candidates are config changes, and this is the pinned config.
 * Returns null when the channel is not pinned, or when the cluster's config IS the pinned one
 * (then the watcher's own compile is exactly what should be served, through the guard).
 */
import type { Diagnostic } from '../model/diagnostics.js';
import {
  buildStoredInputs,
  putStoredInputs,
  type BuiltInputs,
  type StoredObject,
} from '../snapshot/stored-inputs/index.js';
import type { BuiltSnapshot } from '../snapshot/build.js';
import type { Hasher } from '../snapshot/digest.js';
import type { VersionProvenance, VersionSource } from '../snapshot/manifest.js';
import type { PublishResult } from '../snapshot/store/publish.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { recordEvent } from './audit.js';
import { readChannelState } from './channel-state.js';
import { candidatesChannel } from './context.js';
import { HistoryError } from './errors.js';
import type { GuardVerdict } from './guard.js';
import { PublishGuard } from './guarded-publish.js';
import { compileLayers, indexOfBuilt, inputsOf, sameLayer } from './layers.js';
import { publishCompiled, resultVersion } from './publish.js';

export interface PinnedRoundInput {
  readonly store: SnapshotStore;
  readonly channel: string;
  /** What the cluster holds now (after last-known-good substitutions)… */
  readonly objects?: readonly StoredObject[];
  /** …or those objects' stored inputs, already built (a CLI compile has them). */
  readonly stored?: BuiltInputs;
  /** The watcher's compile of those objects. */
  readonly snapshot: BuiltSnapshot;
  readonly diagnostics: readonly Diagnostic[];
  readonly provenance?: VersionProvenance;
  /** Who caused the round and why (an API or CLI compile), recorded on the candidate and the served version. */
  readonly actor?: string;
  readonly reason?: string;
  /** The GitOps revision of the inputs, recorded on the candidate and the served version. */
  readonly source?: VersionSource;
  readonly createdAt: string;
  readonly hasher?: Hasher;
  /** The watcher keeps one across rounds (it remembers the served summary). */
  readonly guard?: PublishGuard;
  /** `compile --allow-shrink` / `allowShrink: true`: serve even what the guard refuses. */
  readonly allowShrink?: boolean;
}

/** The guard refused the served version of a pinned round: the head (`served`) did not move. */
export interface PinnedRefused {
  readonly status: 'refused';
  readonly verdict: GuardVerdict;
  readonly served: number;
  readonly pinned: number;
}

export interface PinnedRoundResult {
  /** The unchanged head when `refused`. */
  readonly served: PublishResult;
  readonly refused?: PinnedRefused;
  /** The candidate written by this round, absent when this config already was the newest candidate… */
  readonly candidate?: PublishResult;
  /** …whose number this is either way (`candidate:N`). */
  readonly candidateVersion: number;
  readonly pinnedVersion: number;
}

export async function pinnedRound(input: PinnedRoundInput): Promise<PinnedRoundResult | null> {
  const { store, channel } = input;
  const { state } = await readChannelState(store, channel);
  if (!state.pin) return null;
  const pinned = await store.getVersion(channel, state.pin.version);
  if (!pinned) return null; // pinned version gone (should not happen: gc keeps it); serve the cluster
  const pinnedIndex = await inputsOf(store, pinned);
  const current = input.stored ?? buildStoredInputs(input.objects ?? [], input.hasher);
  const currentIndex = await indexOfBuilt(current);
  if (sameLayer(currentIndex, pinnedIndex, 'config')) return null;

  const who = {
    ...(input.actor !== undefined ? { actor: input.actor } : {}),
    ...(input.reason !== undefined ? { reason: input.reason } : {}),
    ...(input.source !== undefined ? { source: input.source } : {}),
  };
  let candidate: PublishResult | undefined;
  const candChannel = candidatesChannel(channel);
  const lastHead = await store.readChannel(candChannel);
  const last = lastHead ? await store.getVersion(candChannel, lastHead.version) : null;
  const lastIndex = last?.inputs !== undefined ? await inputsOf(store, last) : undefined;
  if (!lastIndex || !sameLayer(currentIndex, lastIndex, 'config')) {
    candidate = await publishCompiled(
      store,
      candChannel,
      { snapshot: input.snapshot, diagnostics: input.diagnostics, stored: current },
      { status: 'candidate', ...who, ...(input.provenance ? { provenance: input.provenance } : {}) },
      input.createdAt,
    );
  }
  await putStoredInputs(store, current); // its endpoint objects are read back below
  const candidateVersion = candidate ? resultVersion(candidate) : (lastHead?.version as number);
  const compiled = await compileLayers(store, pinnedIndex, currentIndex, input.hasher);
  const head = await store.readChannel(channel);
  if (!input.allowShrink && head) {
    const check = await (input.guard ?? new PublishGuard()).check(store, channel, compiled.snapshot);
    if (check && !check.verdict.allowed) {
      const refused: PinnedRefused = {
        status: 'refused',
        verdict: check.verdict,
        served: head.version,
        pinned: pinned.version,
      };
      const ctx = {
        store,
        channel,
        actor: input.actor ?? '',
        now: () => new Date(input.createdAt),
        ...(input.reason !== undefined ? { reason: input.reason } : {}),
      };
      const { problems, lostServices, lostNamespaces } = check.verdict;
      await recordEvent(ctx, {
        kind: 'guard',
        version: head.version,
        detail: {
          pinned: pinned.version,
          candidate: `candidate:${candidateVersion}`,
          problems,
          lostServices,
          lostNamespaces,
        },
      });
      return {
        served: { status: 'unchanged', head },
        refused,
        pinnedVersion: pinned.version,
        candidateVersion,
        ...(candidate ? { candidate } : {}),
      };
    }
  }
  const served = await publishCompiled(
    store,
    channel,
    compiled,
    {
      origin: { kind: 'pinned', from: pinned.version },
      ...who,
      ...(input.provenance ? { provenance: input.provenance } : {}),
    },
    input.createdAt,
  );
  return { served, pinnedVersion: pinned.version, candidateVersion, ...(candidate ? { candidate } : {}) };
}

export function pinnedRefusalMessage(channel: string, r: PinnedRefused): string {
  return `publish guard: channel ${channel} is pinned to version ${r.pinned} and keeps serving version ${r.served}, because the pinned config with the current endpoints was refused: ${r.verdict.problems.join('; ')}. Serve it on purpose with compile --allow-shrink (API: allowShrink: true), or unpin`;
}

/** The API's 409 `publish_guard` for a pinned round. */
export class PinnedRefusedError extends HistoryError {
  override readonly name = 'PinnedRefusedError';
  constructor(
    channel: string,
    readonly refused: PinnedRefused,
  ) {
    super(pinnedRefusalMessage(channel, refused), 'publish_guard');
  }
}
