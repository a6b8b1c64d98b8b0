/** A version's stored inputs as the API shows them: per object its layer, digest and canonical JSON. Pure. */
import { INPUT_LAYERS, readStoredInputsIndex, type InputLayer } from '../snapshot/stored-inputs/index.js';
import type { SnapshotStore } from '../snapshot/store/store.js';

const decoder = new TextDecoder();

export interface InputsView {
  /** The stored inputs' root digest (the version record's `inputs`). */
  readonly inputs: string;
  /** Kind/namespace/name → { layer, digest, object }, in key order. */
  readonly objects: Record<string, { layer: InputLayer; digest: string; object: unknown }>;
  readonly counts: Record<InputLayer, number>;
}

export async function loadInputsView(
  store: Pick<SnapshotStore, 'getObject' | 'getDocument'>,
  digest: string,
): Promise<InputsView> {
  const index = await readStoredInputsIndex(store, digest);
  const objects: InputsView['objects'] = {};
  const counts = { config: 0, endpoints: 0 };
  for (const layer of INPUT_LAYERS) {
    counts[layer] = index[layer].size;
    for (const key of [...index[layer].keys()].sort()) {
      const d = index[layer].get(key) as string;
      const bytes = await store.getObject(d);
      let object: unknown = null;
      if (bytes) {
        try {
          object = JSON.parse(decoder.decode(bytes)) as unknown;
        } catch {
          object = null; // a stored object is canonical JSON; a broken one shows as null, not a 500
        }
      }
      objects[key] = { layer, digest: d, object };
    }
  }
  return { inputs: digest, objects, counts };
}
