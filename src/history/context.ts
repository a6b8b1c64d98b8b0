/**
 * What every history operation needs: the store and channel, who acts and why, and a clock
 * (the core has none: the CLI and the HTTP API pass `now`).
 */
import type { Hasher } from '../snapshot/digest.js';
import type { SnapshotStore } from '../snapshot/store/store.js';

export interface HistoryContext {
  readonly store: SnapshotStore;
  readonly channel: string;
  /** Who: `--actor`, else $MESHSNAP_ACTOR, else the OS user (resolved at the edge). */
  readonly actor: string;
  readonly reason?: string;
  readonly now: () => Date;
  readonly hasher?: Hasher;
}

/** Candidates (config changes recorded while pinned) live beside the channel, never under its head. */
export const candidatesChannel = (channel: string): string => `${channel}.candidates`;
export const isCandidatesChannel = (channel: string): boolean => channel.endsWith('.candidates');
