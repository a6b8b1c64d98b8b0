/** The snapshot layer's pure API (no Node built-ins). The local store lives in ./store/local.js. */
export { buildSnapshot, snapshotCounts, type BuiltSnapshot, type SnapshotBuildInfo, type SnapshotBuildOptions, type SnapshotCounts } from './build.js';
export { canonicalJson } from './canonical-json.js';
export { classifyNode, resourcesForClass, type Classification, type NodeIdentity } from './classify.js';
export { assertConsistent, checkConsistency, InconsistentSnapshotError, type ConsistencyCode, type ConsistencyProblem } from './consistency.js';
export { parseSnapshotContent, SNAPSHOT_SCHEMA, snapshotContentBytes, snapshotDigest, InvalidSnapshotContentError, type CompilerInfo, type GroupDigests, type SnapshotContent } from './content.js';
export { digestHex, digestOf, isDigest, nobleSha256Hex, type Hasher } from './digest.js';
export { ResourceEncoder, type EncodedResource } from './encoder.js';
export * from './manifest.js';
export { publishSnapshot, type PublishInfo, type PublishResult } from './store/publish.js';
export { CorruptObjectError, DigestMismatchError, InvalidDigestError, type SnapshotStore } from './store/store.js';
