/**
 * Stored inputs in a store: writing a built tree (objects first, then documents children before
 * parents, the top last, so a stored top never names anything missing) and reading one back, as
 * an index (key → object digest per layer) or as raw documents ready for `buildInputSet`. Also
 * reads the flat `meshsnap.inputs/v1` manifest object of versions stored before the tree.
 */
import { MeshsnapError } from '../../errors.js';
import type { RawDocument } from '../../inputs/parse.js';
import { parseTableNode } from '../content.js';
import { isDigest } from '../digest.js';
import { putTree } from '../store/put-tree.js';
import type { SnapshotStore } from '../store/store.js';
import { INPUT_LAYERS, type InputLayer } from './keys.js';
import { isRecord } from './raw.js';
import { STORED_INPUTS_SCHEMA, STORED_INPUTS_SCHEMA_V1, type BuiltInputs } from './tree.js';

export interface PutInputsResult {
  readonly objectsWritten: number;
  readonly documentsWritten: number;
  /** Object and document bytes newly stored. */
  readonly bytesWritten: number;
}

/**
 * Writes the objects, then the documents layer by layer (children before parents, the top last),
 * so a stored top document never names anything missing.
 */
export async function putStoredInputs(
  store: Pick<SnapshotStore, 'putObject' | 'hasObject' | 'putDocuments' | 'putLayered'>,
  inputs: BuiltInputs,
): Promise<PutInputsResult> {
  return putTree(store, inputs.objects, inputs.documents);
}

/** Stored inputs that are missing or malformed: damage to the store (500), never bad input. */
export class InvalidStoredInputsError extends MeshsnapError {
  override readonly name = 'InvalidStoredInputsError';
  constructor(message: string) {
    super('internal', message);
  }
}

const decoder = new TextDecoder();

function parseJson(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(decoder.decode(bytes)) as unknown;
  } catch {
    throw new InvalidStoredInputsError(`${what} is not JSON`);
  }
}

/** key → object digest of stored inputs, per layer (v2 tree, or a v1 manifest object). */
export async function readStoredInputsIndex(
  store: Pick<SnapshotStore, 'getObject' | 'getDocument'>,
  digest: string,
): Promise<Record<InputLayer, Map<string, string>>> {
  const out: Record<InputLayer, Map<string, string>> = { config: new Map(), endpoints: new Map() };
  const topBytes = await store.getDocument(digest);
  if (!topBytes) {
    // Versions stored before the tree: one flat manifest object.
    const bytes = await store.getObject(digest);
    if (!bytes) throw new InvalidStoredInputsError(`inputs manifest ${digest} not found`);
    const manifest = parseJson(bytes, `inputs manifest ${digest}`);
    if (!isRecord(manifest) || manifest.schema !== STORED_INPUTS_SCHEMA_V1 || !isRecord(manifest.layers))
      throw new InvalidStoredInputsError(`${digest} is not a ${STORED_INPUTS_SCHEMA_V1} manifest`);
    for (const layer of INPUT_LAYERS) {
      const entries = manifest.layers[layer];
      if (isRecord(entries))
        for (const [k, d] of Object.entries(entries)) if (typeof d === 'string') out[layer].set(k, d);
    }
    return out;
  }
  const top = parseJson(topBytes, `inputs document ${digest}`);
  if (!isRecord(top) || top.schema !== STORED_INPUTS_SCHEMA || !isRecord(top.layers))
    throw new InvalidStoredInputsError(`${digest} is not a ${STORED_INPUTS_SCHEMA} document`);
  const walk = async (layer: InputLayer, d: string): Promise<void> => {
    const bytes = await store.getDocument(d);
    if (!bytes) throw new InvalidStoredInputsError(`inputs table document ${d} not found`);
    const node = parseTableNode(parseJson(bytes, `inputs table document ${d}`));
    if ('entries' in node) for (const [k, v] of Object.entries(node.entries)) out[layer].set(k, v);
    else await Promise.all(Object.values(node.children).map((c) => walk(layer, c)));
  };
  for (const layer of INPUT_LAYERS) {
    const root = top.layers[layer];
    if (!isDigest(root)) throw new InvalidStoredInputsError(`${digest}: bad ${layer} root`);
    await walk(layer, root);
  }
  return out;
}

/** Reads stored inputs back as raw documents (file = the object's key, in key order), ready for buildInputSet. */
export async function loadStoredInputs(
  store: Pick<SnapshotStore, 'getObject' | 'getDocument'>,
  digest: string,
): Promise<RawDocument[]> {
  const index = await readStoredInputsIndex(store, digest);
  const docs: RawDocument[] = [];
  for (const layer of INPUT_LAYERS) {
    for (const key of [...index[layer].keys()].sort()) {
      const objectDigest = index[layer].get(key) as string;
      const objBytes = await store.getObject(objectDigest);
      if (!objBytes) throw new InvalidStoredInputsError(`object ${objectDigest} of ${key} not found`);
      const object = parseJson(objBytes, `object ${objectDigest} of ${key}`);
      if (!isRecord(object)) throw new InvalidStoredInputsError(`object ${objectDigest} of ${key} is not an object`);
      docs.push({ file: key, index: 0, object });
    }
  }
  return docs;
}
