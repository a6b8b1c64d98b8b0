/**
 * When packs are checkpointed and merged (see packs.ts). Deltas are merged like a binary counter:
 * the newest is merged into the one before while it is at least half its size, or while the chain
 * is too long, so a byte is rewritten O(log n) times and a cold start reads ≤ MAX_PACKS packs. A
 * new checkpoint is written only when the deltas since the last one reach CHECKPOINT_RATIO of its
 * size, i.e. after at least that many bytes changed (amortized O(change)). Pure.
 */
import type { PackList, PackRef, VersionRecord } from '../manifest.js';

/** Packs a cold start reads at most: one checkpoint and MAX_PACKS - 1 deltas. */
export const MAX_PACKS = 8;
/** A new checkpoint once the deltas since the last one add up to this share of it. */
export const CHECKPOINT_RATIO = 0.5;

/** Whether a new delta of `deltaBytes` on top of `chain` calls for a new checkpoint instead. */
export const needsCheckpoint = (chain: PackList, deltaBytes: number): boolean =>
  chain.deltas.reduce((n, p) => n + p.bytes, 0) + deltaBytes > CHECKPOINT_RATIO * chain.checkpoint.bytes;

/** Whether the newest delta (`lastBytes`) is folded into `previous`, the last of the chain's `deltas` packs. */
export const mergesInto = (lastBytes: number, previous: PackRef, deltas: number): boolean =>
  lastBytes * 2 >= previous.bytes || deltas + 1 > MAX_PACKS - 1;

export const packRefs = (packs: PackList): PackRef[] => [packs.checkpoint, ...packs.deltas];

/** Every pack a record names (for gc: they are objects, referenced by the record). */
export const packDigests = (record: Pick<VersionRecord, 'packs'>): string[] =>
  record.packs ? packRefs(record.packs).map((p) => p.digest) : [];
