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

/** Why a user cannot name this channel (`<channel>.candidates` belongs to the history), or undefined. */
export const reservedChannelProblem = (channel: string): string | undefined =>
  isCandidatesChannel(channel)
    ? `channel name ${JSON.stringify(channel)} is reserved: "<channel>.candidates" holds a channel's candidates (select them with candidate:N)`
    : undefined;
