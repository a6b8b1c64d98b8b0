export { loadServedSnapshot, SnapshotLoadError, type LoadOptions } from './load.js';
export { LoadedSnapshot, MissingObjectError } from './served-snapshot.js';
export { typeVersionOf } from './type-version.js';
