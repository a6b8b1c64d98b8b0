/** The snapshot builder's public types: what it is given and what it returns. */
import type { ClassSelector, GroupId, ProxyClass, ResourceMessages } from '../../compile/types.js';
import type { XdsType } from '../../xds/type-urls.js';
import type { CompilerInfo, SnapshotContent } from '../content.js';
import type { Hasher } from '../digest.js';
import type { ResourceEncoder } from '../encoder.js';
import type { TreeDocument } from '../tree.js';
import type { ObjectSpool } from './object-spool.js';

export interface SnapshotBuildInfo {
  readonly inputsDigest: string;
  readonly compiler: CompilerInfo;
}

export interface SnapshotBuildOptions {
  /** Hash for object and document digests (default: the encoder's, else @noble/hashes). */
  readonly hasher?: Hasher;
  /** Reuse across builds so unchanged message objects are not encoded again. */
  readonly encoder?: ResourceEncoder;
  /**
   * Whether `SnapshotBuilder.snapshot` keeps the last snapshot's objects and documents (default
   * true). False for a caller that stores each snapshot it is given and keeps none (the watcher):
   * a full build's bytes are then garbage once stored, not held until the next round.
   */
  readonly keepObjects?: boolean;
  /**
   * The one-shot build (buildSnapshotOnce) only: where the objects' bytes go as they are made
   * (object-spool.ts); `objects` then reads them back from it. Default: kept in memory.
   */
  readonly spool?: ObjectSpool;
  /**
   * A full garbage collection (src/full-gc.ts), run by `SnapshotBuilder.build` only, where much of
   * its data has just died (after the consistency check); never by a delta or a rebuild.
   */
  readonly collect?: () => void;
}

export interface SnapshotCounts {
  readonly clusters: number;
  readonly endpoints: number;
  readonly listeners: number;
  readonly routes: number;
  readonly classes: number;
  /** Distinct stored objects. */
  readonly objects: number;
  /**
   * Endpoints served: LbEndpoints summed over the ClusterLoadAssignments (`endpoints` counts the
   * assignments). Set on version records at publish (src/history/mesh-summary.ts); older records lack it.
   */
  readonly lbEndpoints?: number;
}

export interface BuiltSnapshot {
  /** The top document's digest. */
  readonly digest: string;
  readonly inputsDigest: string;
  readonly compiler: CompilerInfo;
  /** The expanded view (computed on first use). */
  readonly content: SnapshotContent;
  readonly counts: SnapshotCounts;
  /** Objects to store, digest → protobuf bytes, sorted by digest: every object, or for a delta only the new ones. */
  readonly objects: ReadonlyMap<string, Uint8Array>;
  /** Documents to store, children before parents (ascending `layer`), the top document last: all of them, or for a delta only the rewritten ones. */
  readonly documents: readonly TreeDocument[];
  /** For a delta: the digest of the snapshot it applies to, whose objects and documents must already be stored. */
  readonly base?: string;
  /** For a delta: what it did to the base's content (names and digests per group and type), for consumers that follow deltas. */
  readonly changes?: ContentStep;
}

/** Changes to one type of one group. Deletes are applied before upserts. */
export interface TypeDelta<M> {
  readonly upserts?: ReadonlyMap<string, M>;
  readonly deletes?: Iterable<string>;
}

export type GroupDelta = { readonly [T in XdsType]?: TypeDelta<ResourceMessages[T]> };

/** Per group: its changes, or null to remove the group altogether. A group not yet there is created. */
export type SnapshotDelta = Readonly<Record<GroupId, GroupDelta | null>>;

export interface DeltaUpdate {
  readonly inputsDigest?: string;
  /** New classes (and/or selectors): consistency is then checked in full. */
  readonly classes?: readonly ProxyClass[];
  readonly selectors?: readonly ClassSelector[];
}

/** One resource's new digest in a group, or undefined for a deleted one. */
export interface ContentChange {
  readonly group: GroupId;
  readonly type: XdsType;
  readonly name: string;
  readonly digest: string | undefined;
}

/** What a delta did to the expanded content (applied when the content is first read). */
export interface ContentStep {
  readonly info: SnapshotBuildInfo;
  readonly changes: readonly ContentChange[];
  readonly removed: readonly GroupId[];
  readonly added: readonly GroupId[];
  readonly classes:
    { readonly classes: readonly ProxyClass[]; readonly selectors: readonly ClassSelector[] } | undefined;
}
