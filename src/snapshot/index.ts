/** The snapshot layer's pure API (no Node built-ins). Stores live in ./store/ (publishSnapshot: ./store/publish.js). */
export {
  buildSnapshot,
  snapshotCounts,
  snapshotDigest,
  snapshotDocuments,
  snapshotFromContent,
  SnapshotBuilder,
  type BuiltSnapshot,
  type DeltaUpdate,
  type GroupDelta,
  type SnapshotBuildInfo,
  type SnapshotBuildOptions,
  type SnapshotCounts,
  type SnapshotDelta,
  type TreeDocument,
  type TypeDelta,
} from './build.js';
export { canonicalJson } from '../canonical-json.js';
export { classifyNode, resourcesForClass, type Classification, type NodeIdentity } from './classify.js';
export {
  assertConsistent,
  checkConsistency,
  ConsistencyIndex,
  InconsistentSnapshotError,
  type ConsistencyCode,
  type ConsistencyProblem,
  type ResourceChange,
} from './consistency.js';
export {
  InvalidSnapshotContentError,
  MissingDocumentError,
  parseSnapshotContent,
  readSnapshotContent,
  SNAPSHOT_SCHEMA,
  type CompilerInfo,
  type DocumentReader,
  type GroupDigests,
  type SnapshotContent,
} from './content.js';
export { digestHex, digestOf, isDigest, nobleSha256Hex, type Hasher } from './digest.js';
export { ResourceEncoder, type EncodedResource } from './encoder.js';
export * from './manifest.js';
