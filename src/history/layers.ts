/**
 * The two input layers of a version (src/snapshot/stored-inputs/): `config` (Istio config,
 * Services, Namespaces, mesh config) and `endpoints` (EndpointSlices, Endpoints, Pods, Nodes).
 * Rollbacks, promotions and pinned rounds compile one version's config layer with another's
 * (the current) endpoint layer, so going back in config never brings back dead pod IPs.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import type { RawDocument } from '../inputs/index.js';
import {
  InvalidStoredInputsError,
  readStoredInputsIndex,
  type BuiltInputs,
  type InputLayer,
} from '../snapshot/stored-inputs/index.js';
import { compileDocuments } from '../pipeline.js';
import type { BuiltSnapshot } from '../snapshot/build.js';
import type { Hasher } from '../snapshot/digest.js';
import type { VersionRecord } from '../snapshot/manifest.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { HistoryError } from './errors.js';

/** Per layer: `Kind/namespace/name` → object digest. */
export type LayerIndex = Readonly<Record<InputLayer, ReadonlyMap<string, string>>>;

type Reader = Pick<SnapshotStore, 'getObject' | 'getDocument'>;

const decoder = new TextDecoder();

/** The stored inputs index of a version; a version compiled before inputs were stored has none. */
export async function inputsOf(store: Reader, record: VersionRecord): Promise<LayerIndex> {
  if (record.inputs === undefined)
    throw new HistoryError(
      `version ${record.version} has no stored inputs (compiled by an older meshsnap): it cannot be recompiled`,
    );
  return readStoredInputsIndex(store, record.inputs);
}

/** A layer's objects as raw documents (file = the object's key), ready for the pipeline. */
export async function loadLayer(store: Reader, index: LayerIndex, layer: InputLayer): Promise<RawDocument[]> {
  const docs: RawDocument[] = [];
  for (const [key, digest] of [...index[layer]].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const bytes = await store.getObject(digest);
    if (!bytes) throw new InvalidStoredInputsError(`input object ${key} (${digest}) is missing from the store`);
    docs.push({ file: key, index: 0, object: JSON.parse(decoder.decode(bytes)) as Record<string, unknown> });
  }
  return docs;
}

export interface Compiled {
  readonly snapshot: BuiltSnapshot;
  readonly diagnostics: readonly Diagnostic[];
  readonly stored: BuiltInputs;
}

/** Compiles stored documents through the same pipeline as `meshsnap compile`. */
export function compileStored(docs: readonly RawDocument[], hasher?: Hasher): Compiled {
  const r = compileDocuments(docs, hasher ? { hasher } : {});
  return { snapshot: r.snapshot, diagnostics: r.diagnostics, stored: r.stored };
}

/** Config layer of `configFrom` + endpoint layer of `endpointsFrom`, compiled. */
export async function compileLayers(
  store: Reader,
  configFrom: LayerIndex,
  endpointsFrom: LayerIndex,
  hasher?: Hasher,
): Promise<Compiled> {
  return compileStored(
    [...(await loadLayer(store, configFrom, 'config')), ...(await loadLayer(store, endpointsFrom, 'endpoints'))],
    hasher,
  );
}

/** Same objects in a layer. */
export function sameLayer(a: LayerIndex, b: LayerIndex, layer: InputLayer): boolean {
  const x = a[layer];
  const y = b[layer];
  if (x.size !== y.size) return false;
  for (const [k, d] of x) if (y.get(k) !== d) return false;
  return true;
}

/** The index of freshly built inputs (not yet stored). */
export async function indexOfBuilt(stored: BuiltInputs): Promise<LayerIndex> {
  const docs = new Map(stored.documents.map((d) => [d.digest, d.bytes]));
  return readStoredInputsIndex(
    { getObject: async (d) => stored.objects.get(d) ?? null, getDocument: async (d) => docs.get(d) ?? null },
    stored.digest,
  );
}
