/**
 * Builds immutable snapshots from the compiler's output: every resource encoded to protobuf once,
 * objects named by their digest, and the Merkle tree of documents described in content.ts.
 * The pieces live in ./build/: the builder (full builds and deltas), the full build's diff, a
 * delta's table changes with their undo, the delta consistency check, the Merkle trees, object
 * refcounts and a delta's lazily expanded content.
 */
export { buildSnapshot, SnapshotBuilder } from './build/builder.js';
export { buildSnapshotOnce } from './build/one-shot.js';
export { snapshotCounts, snapshotFromContent } from './build/from-content.js';
export type {
  BuiltSnapshot,
  DeltaUpdate,
  GroupDelta,
  SnapshotBuildInfo,
  SnapshotBuildOptions,
  SnapshotCounts,
  SnapshotDelta,
  TypeDelta,
} from './build/types.js';
export { snapshotDigest, snapshotDocuments } from './content.js';
export type { ContentChange, ContentStep } from './build/lazy-content.js';
export type { TreeDocument } from './tree.js';
export { isSpooled, SpooledObjects, type ObjectSpool } from './build/object-spool.js';
