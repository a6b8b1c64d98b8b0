/**
 * Stored inputs: the raw objects a snapshot was compiled from, kept next to it so any snapshot can
 * be recompiled later (`meshsnap compile` and `meshsnap watch` both store them). Their root digest
 * is THE inputs digest: the snapshot's `inputsDigest` and the version record's `inputs`.
 *
 * Each object is canonicalized first — the noise the API server adds and the compiler never reads
 * (status, managedFields, uid, resourceVersion, timestamps, kubectl's last-applied annotation) is
 * stripped — so an object that only changed in noise has the same digest, and two clusters holding
 * the same mesh store the same bytes. Pod status keeps what the compiler reads (IPs, phase, the
 * Ready condition): for a Pod those ARE inputs. Each object's canonical JSON is stored as a store
 * object named by its digest. Objects carry no origin (file, document index), so the same objects
 * in any file layout or document order are the same inputs.
 *
 * The inputs manifest (`meshsnap.inputs/v2`) is a Merkle tree of content-addressed documents,
 * stored with the store's `putDocuments`, built like the snapshot's tables (src/snapshot/tree.ts):
 *
 *   top     {"schema":"meshsnap.inputs/v2","layers":{"config":<table root>,"endpoints":<table root>}}
 *   table   `Kind/namespace/name` → object digest, as a fixed-depth hash trie
 *           (leaves {"entries":{key:digest,…}}, interior nodes {"children":{hexDigit:digest,…}})
 *
 * per layer — `config` (Istio config, Services, Namespaces, mesh config, anything else) and
 * `endpoints` (EndpointSlices, Endpoints, Pods, Nodes) — so a reader sees at once whether a
 * version changed config or only endpoints. The trie is a pure function of its entries, so the
 * root digest is the same whether built from scratch (`buildStoredInputs`, the CLI, the Worker,
 * a remote compile) or updated object by object (`StoredInputsTree`, the watcher: one change
 * rewrites one leaf, ≤ 3 interior nodes and the top).
 *
 * Invalid documents ARE stored inputs: they are what the user gave, and a recompile of the stored
 * inputs must reproduce the same diagnostics. An object that fails validation is stored under its
 * key like any other; a document without a kind or a name (it cannot be keyed) is stored under
 * `~//<its digest>` in the layer of its kind. What is not stored: text that is not YAML/JSON, and
 * documents that are not objects (a list, a scalar) — there is no object to keep; their
 * `parse-error` diagnostics stay in the version record. Two documents with one key (the same
 * object in two files) keep the one with the smaller digest, whatever the reading order.
 *
 * Pure (no node:*): the Worker computes the same digest.
 */
import { parseDocuments, type RawDocument } from '../inputs/parse.js';
import { canonicalJson } from '../snapshot/canonical-json.js';
import { parseTableNode } from '../snapshot/content.js';
import { digestOf, isDigest, nobleSha256Hex, utf8Bytes, type Hasher } from '../snapshot/digest.js';
import { putTree } from '../snapshot/store/put-tree.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { DocumentSink, MAX_DEPTH, TableTree, type TreeDocument } from '../snapshot/tree.js';

export const STORED_INPUTS_SCHEMA = 'meshsnap.inputs/v2';
/** The flat manifest of earlier versions (one store object); still readable. */
export const STORED_INPUTS_SCHEMA_V1 = 'meshsnap.inputs/v1';

export type InputLayer = 'config' | 'endpoints';
export const INPUT_LAYERS: readonly InputLayer[] = ['config', 'endpoints'];

type Raw = Readonly<Record<string, unknown>>;

export interface ObjectKey {
  readonly kind: string;
  /** "" for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
}

export interface StoredObject {
  readonly key: ObjectKey;
  readonly layer: InputLayer;
  /** The canonical object (noise stripped). */
  readonly object: Raw;
  /** Its canonical JSON bytes, and their digest. */
  readonly bytes: Uint8Array;
  readonly digest: string;
}

/** The top document of the inputs tree. */
export interface InputsTopDocument {
  readonly schema: typeof STORED_INPUTS_SCHEMA;
  /** Per layer: root digest of its key → object digest table. */
  readonly layers: Readonly<Record<InputLayer, string>>;
}

export interface BuiltInputs {
  /** The top document's digest: the inputs digest. */
  readonly digest: string;
  /** Documents to store, children before parents (ascending `layer`), the top last: every document, or after an update only the rewritten ones. */
  readonly documents: readonly TreeDocument[];
  /** Objects to store, digest → canonical JSON bytes: every object, or after an update only the ones set since the last commit. */
  readonly objects: ReadonlyMap<string, Uint8Array>;
  /** Objects in the tree. */
  readonly count: number;
}

/** Document layers: table leaves at 0, their roots at ≤ MAX_DEPTH, the top above them. */
const TOP_LAYER = MAX_DEPTH + 1;

const ENDPOINT_KINDS = new Set(['EndpointSlice', 'Endpoints', 'Pod', 'Node']);

export const layerOf = (kind: string): InputLayer => (ENDPOINT_KINDS.has(kind) ? 'endpoints' : 'config');

/** `Kind/namespace/name` (namespace empty for cluster-scoped kinds). */
export const keyString = (k: ObjectKey): string => `${k.kind}/${k.namespace}/${k.name}`;

export function parseKeyString(s: string): ObjectKey | undefined {
  const m = /^([^/]+)\/([^/]*)\/([^/]+)$/.exec(s);
  return m ? { kind: m[1] as string, namespace: m[2] as string, name: m[3] as string } : undefined;
}

/** The kind of the key of a document that has no kind or name (`~//sha256:…`). */
export const UNKEYED_KIND = '~';

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const own = (o: Raw, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);

/** kind/namespace/name of a raw object, or undefined when it has no kind or name. */
export function objectKeyOf(raw: Raw): ObjectKey | undefined {
  const kind = own(raw, 'kind');
  const meta = own(raw, 'metadata');
  if (typeof kind !== 'string' || kind === '' || !isRecord(meta)) return undefined;
  const name = own(meta, 'name');
  const ns = own(meta, 'namespace');
  if (typeof name !== 'string' || name === '') return undefined;
  return { kind, namespace: typeof ns === 'string' ? ns : '', name };
}

/**
 * Annotations that change without the object meaning anything new: kubectl's copy of the whole
 * object, and the endpoints controller's trigger time (it changes on every endpoints update).
 */
const NOISY_ANNOTATIONS = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  'endpoints.kubernetes.io/last-change-trigger-time',
  'deployment.kubernetes.io/revision',
]);

/** A plain object without a prototype, so a `__proto__` key is kept as data. */
const dict = (): Record<string, unknown> => Object.create(null) as Record<string, unknown>;

/** Metadata the compiler reads; everything else in `metadata` is server bookkeeping. */
function canonicalMeta(meta: Raw): Record<string, unknown> {
  const out = dict();
  for (const k of ['name', 'namespace'] as const) {
    const v = own(meta, k);
    if (typeof v === 'string' && v !== '') out[k] = v;
  }
  const labels = own(meta, 'labels');
  if (isRecord(labels) && Object.keys(labels).length > 0) out.labels = labels;
  const annotations = own(meta, 'annotations');
  if (isRecord(annotations)) {
    const kept = dict();
    for (const [k, v] of Object.entries(annotations)) if (!NOISY_ANNOTATIONS.has(k)) kept[k] = v;
    if (Object.keys(kept).length > 0) out.annotations = kept;
  }
  return out;
}

/** The parts of a Pod's status the compiler reads (src/inputs/validate/k8s.ts readPod). */
function podStatus(status: Raw): Record<string, unknown> | undefined {
  const out = dict();
  const phase = own(status, 'phase');
  if (phase !== undefined) out.phase = phase;
  const podIP = own(status, 'podIP');
  if (podIP !== undefined) out.podIP = podIP;
  const podIPs = own(status, 'podIPs');
  if (Array.isArray(podIPs)) out.podIPs = podIPs.map((p) => (isRecord(p) ? { ip: own(p, 'ip') } : p));
  const conditions = own(status, 'conditions');
  if (Array.isArray(conditions)) {
    const ready = conditions.filter((c) => isRecord(c) && own(c, 'type') === 'Ready').map((c) => ({ type: 'Ready', status: own(c as Raw, 'status') }));
    if (ready.length > 0) out.conditions = ready;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * Canonical JSON (src/snapshot/canonical-json.ts: keys sorted, no whitespace, undefined members
 * left out) that never throws on user data: non-finite numbers (YAML `.nan`, `.inf`) become
 * null, as JSON.stringify makes them.
 */
function jsonText(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'object': {
      if (v === null) return 'null';
      if (Array.isArray(v)) return `[${v.map((x) => jsonText(x) ?? 'null').join(',')}]`;
      const o = v as Record<string, unknown>;
      const parts: string[] = [];
      for (const k of Object.keys(o).sort()) {
        const x = jsonText(o[k]);
        if (x !== undefined) parts.push(`${JSON.stringify(k)}:${x}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      return undefined;
  }
}

/** The canonical JSON of an object without server noise. Values the compiler reads are never touched. */
function canonicalText(raw: Raw): string {
  const out = dict();
  for (const k of Object.keys(raw)) {
    if (k === 'status') continue;
    const v = raw[k];
    out[k] = k === 'metadata' && isRecord(v) ? canonicalMeta(v) : v;
  }
  const status = own(raw, 'status');
  if (own(raw, 'kind') === 'Pod' && isRecord(status)) {
    const kept = podStatus(status);
    if (kept) out.status = kept;
  }
  return jsonText(out) as string;
}

/** A copy of the object without server noise: plain JSON values, ordinary objects. */
export function canonicalObject(raw: Raw): Record<string, unknown> {
  return JSON.parse(canonicalText(raw)) as Record<string, unknown>;
}

/**
 * A stored object whose canonical object is parsed from its bytes on first read (an own enumerable
 * getter, so a spread copy still carries the object): building the inputs tree (the inputs digest)
 * only needs the bytes, so a full compile does not keep a second parsed copy of every input.
 */
function parsedOnRead(key: ObjectKey, layer: InputLayer, bytes: Uint8Array, digest: string): StoredObject {
  let parsed: Raw | undefined;
  return {
    key,
    layer,
    get object(): Raw {
      return (parsed ??= JSON.parse(decoder.decode(bytes)) as Raw);
    },
    bytes,
    digest,
  };
}

function stored(raw: Raw, key: ObjectKey | undefined, hasher: Hasher | undefined): StoredObject {
  const bytes = utf8Bytes(canonicalText(raw));
  const digest = digestOf(bytes, hasher);
  if (key) return parsedOnRead(key, layerOf(key.kind), bytes, digest);
  const kind = own(raw, 'kind');
  return parsedOnRead({ kind: UNKEYED_KIND, namespace: '', name: digest }, layerOf(typeof kind === 'string' ? kind : ''), bytes, digest);
}

/** The stored form of a keyed object; undefined when it has no kind or name. */
export function storedObject(raw: Raw, hasher?: Hasher): StoredObject | undefined {
  const key = objectKeyOf(raw);
  return key ? stored(raw, key, hasher) : undefined;
}

/** The stored form of any document: keyed by kind/namespace/name, or by its digest when it has no kind or name. */
export function storedDocument(raw: Raw, hasher?: Hasher): StoredObject {
  return stored(raw, objectKeyOf(raw), hasher);
}

/**
 * The inputs tree, updatable object by object. `set`/`delete` edit it; `commit` returns the new
 * root and only what changed since the last commit (documents rewritten, objects set);
 * `complete` returns every document and object (for a store that may lack earlier commits).
 */
export class StoredInputsTree {
  private readonly tables: Record<InputLayer, TableTree> = { config: new TableTree(0), endpoints: new TableTree(0) };
  /** key → the object in the tree (its bytes, for `complete`). */
  private readonly objects = new Map<string, StoredObject>();
  /** Keys set since the last commit. */
  private pending = new Set<string>();
  private dirty = true;
  private top: TreeDocument | undefined;

  constructor(private readonly hasher: Hasher = nobleSha256Hex) {}

  get size(): number {
    return this.objects.size;
  }

  /** The digest of the last commit. */
  get digest(): string {
    if (!this.top || this.dirty) throw new Error('StoredInputsTree: commit() before reading the digest');
    return this.top.digest;
  }

  get(key: string): StoredObject | undefined {
    return this.objects.get(key);
  }

  /** Adds or replaces an object (under `keyString(o.key)`). */
  set(o: StoredObject): void {
    const key = keyString(o.key);
    const prev = this.objects.get(key);
    if (prev && prev.digest === o.digest && prev.layer === o.layer) return;
    if (prev && prev.layer !== o.layer) this.tables[prev.layer].delete(key);
    this.objects.set(key, o);
    this.tables[o.layer].set(key, o.digest);
    this.pending.add(key);
    this.dirty = true;
  }

  delete(key: string): boolean {
    const prev = this.objects.get(key);
    if (!prev) return false;
    this.objects.delete(key);
    this.tables[prev.layer].delete(key);
    this.dirty = true;
    return true;
  }

  /** Writes the changed documents; returns them, the objects set since the last commit, and the root. */
  commit(): BuiltInputs {
    const sink = new DocumentSink(this.hasher);
    const objects = new Map<string, Uint8Array>();
    for (const key of this.pending) {
      const o = this.objects.get(key);
      if (o) objects.set(o.digest, o.bytes);
    }
    this.pending = new Set();
    if (this.dirty || !this.top) {
      const layers = { config: this.tables.config.commit(sink).digest, endpoints: this.tables.endpoints.commit(sink).digest };
      const top: InputsTopDocument = { schema: STORED_INPUTS_SCHEMA, layers };
      this.top = sink.emit(canonicalJson(top), TOP_LAYER);
      this.dirty = false;
    }
    return { digest: this.top.digest, documents: sink.sorted(), objects: sortedByKey(objects), count: this.objects.size };
  }

  /** Every document and object of the current tree (commits first). */
  complete(): BuiltInputs {
    const { digest } = this.commit();
    const sink = new DocumentSink(this.hasher);
    for (const layer of INPUT_LAYERS) this.tables[layer].documents((d) => sink.add(d));
    sink.add(this.top as TreeDocument);
    const objects = new Map<string, Uint8Array>();
    for (const o of this.objects.values()) objects.set(o.digest, o.bytes);
    return { digest, documents: sink.sorted(), objects: sortedByKey(objects), count: this.objects.size };
  }
}

const sortedByKey = (m: ReadonlyMap<string, Uint8Array>): Map<string, Uint8Array> => new Map([...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** The inputs of a set of objects, built from scratch: every document and object. Two objects with one key keep the smaller digest. */
export function buildStoredInputs(objects: Iterable<StoredObject>, hasher?: Hasher): BuiltInputs {
  const chosen = new Map<string, StoredObject>();
  for (const o of objects) {
    const k = keyString(o.key);
    const prev = chosen.get(k);
    if (!prev || o.digest < prev.digest) chosen.set(k, o);
  }
  const tree = new StoredInputsTree(hasher);
  for (const o of chosen.values()) tree.set(o);
  return tree.complete();
}

/** Stored inputs of raw documents (as `meshsnap compile` reads them), invalid and unkeyed ones included. */
export function storedInputsOfDocuments(docs: readonly RawDocument[], hasher?: Hasher): BuiltInputs {
  return buildStoredInputs(
    docs.map((d) => storedDocument(d.object, hasher)),
    hasher,
  );
}

/** Stored inputs of input files (`meshsnap compile`): parsed as the compiler parses them. */
export function storedInputsOfTexts(files: readonly { readonly file: string; readonly text: string }[], hasher?: Hasher): BuiltInputs {
  const docs: RawDocument[] = [];
  for (const f of files) docs.push(...parseDocuments(f.text, f.file).docs);
  return storedInputsOfDocuments(docs, hasher);
}

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
export async function putStoredInputs(store: Pick<SnapshotStore, 'putObject' | 'hasObject' | 'putDocuments' | 'putLayered'>, inputs: BuiltInputs): Promise<PutInputsResult> {
  return putTree(store, inputs.objects, inputs.documents);
}

export class InvalidStoredInputsError extends Error {
  override readonly name = 'InvalidStoredInputsError';
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
export async function readStoredInputsIndex(store: Pick<SnapshotStore, 'getObject' | 'getDocument'>, digest: string): Promise<Record<InputLayer, Map<string, string>>> {
  const out: Record<InputLayer, Map<string, string>> = { config: new Map(), endpoints: new Map() };
  const topBytes = await store.getDocument(digest);
  if (!topBytes) {
    // Versions stored before the tree: one flat manifest object.
    const bytes = await store.getObject(digest);
    if (!bytes) throw new InvalidStoredInputsError(`inputs manifest ${digest} not found`);
    const manifest = parseJson(bytes, `inputs manifest ${digest}`);
    if (!isRecord(manifest) || manifest.schema !== STORED_INPUTS_SCHEMA_V1 || !isRecord(manifest.layers)) throw new InvalidStoredInputsError(`${digest} is not a ${STORED_INPUTS_SCHEMA_V1} manifest`);
    for (const layer of INPUT_LAYERS) {
      const entries = manifest.layers[layer];
      if (isRecord(entries)) for (const [k, d] of Object.entries(entries)) if (typeof d === 'string') out[layer].set(k, d);
    }
    return out;
  }
  const top = parseJson(topBytes, `inputs document ${digest}`);
  if (!isRecord(top) || top.schema !== STORED_INPUTS_SCHEMA || !isRecord(top.layers)) throw new InvalidStoredInputsError(`${digest} is not a ${STORED_INPUTS_SCHEMA} document`);
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
export async function loadStoredInputs(store: Pick<SnapshotStore, 'getObject' | 'getDocument'>, digest: string): Promise<RawDocument[]> {
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

