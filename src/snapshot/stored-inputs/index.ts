/**
 * Stored inputs: the raw objects a snapshot was compiled from, kept next to it so any snapshot can
 * be recompiled later (`meshsnap compile` and `meshsnap watch` both store them). Parts: the
 * canonical object form (canonical-object.ts), the key scheme (keys.ts), the hash trie whose root
 * is the inputs digest (tree.ts), and store I/O (store-io.ts).
 */
export {
  canonicalObject,
  storedDocument,
  storedEntry,
  storedEntryRead,
  storedObject,
  storedRetainedDocument,
  storedEntryOfRetention,
  storedRetainedEntry,
  type StoredEntry,
  type StoredObject,
} from './canonical-object.js';
export {
  INPUT_LAYERS,
  keyString,
  KUBERNETES_GATEWAY_KIND,
  layerOf,
  objectKeyOf,
  parseKeyString,
  UNKEYED_KIND,
  type InputLayer,
  type ObjectKey,
} from './keys.js';
export type { Raw } from './raw.js';
export {
  InvalidStoredInputsError,
  loadStoredInputs,
  putStoredInputs,
  readStoredInputsIndex,
  type PutInputsResult,
} from './store-io.js';
export {
  buildStoredInputs,
  inputSetAndStoredInputs,
  STORED_INPUTS_SCHEMA,
  STORED_INPUTS_SCHEMA_V1,
  StoredInputsTree,
  storedInputsOfDocuments,
  storedInputsOfTexts,
  type BuiltInputs,
  type InputsTopDocument,
} from './tree.js';
export { PackedObjects } from './packed-objects.js';
