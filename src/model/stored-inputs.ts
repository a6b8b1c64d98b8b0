/**
 * Stored inputs: the raw objects a snapshot was compiled from, kept next to it so any snapshot can
 * be recompiled later (`meshsnap compile` and `meshsnap watch` both store them).
 *
 * Each object is canonicalized first — the noise the API server adds and the compiler never reads
 * (status, managedFields, uid, resourceVersion, timestamps, kubectl's last-applied annotation) is
 * stripped — so an object that only changed in noise has the same digest, and two clusters holding
 * the same mesh store the same bytes. Pod status keeps what the compiler reads (IPs, phase, the
 * Ready condition): for a Pod those ARE inputs.
 *
 * An inputs manifest (`meshsnap.inputs/v1`) lists per layer — `config` (Istio config, Services,
 * Namespaces, mesh config) and `endpoints` (EndpointSlices, Endpoints, Pods, Nodes) — each object's
 * `Kind/namespace/name` → digest of its canonical JSON. The manifest is itself stored as an object;
 * its digest goes into the version record (`inputs`). Splitting by layer lets a reader see at once
 * whether a version changed config or only endpoints. Pure.
 */
import { parseDocuments, type RawDocument } from '../inputs/parse.js';
import { canonicalJson } from '../snapshot/canonical-json.js';
import { digestOf, utf8Bytes, type Hasher } from '../snapshot/digest.js';
import type { VersionDraft } from '../snapshot/manifest.js';
import type { SnapshotStore } from '../snapshot/store/store.js';

export const STORED_INPUTS_SCHEMA = 'meshsnap.inputs/v1';

export type InputLayer = 'config' | 'endpoints';

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

export interface InputsManifest {
  readonly schema: typeof STORED_INPUTS_SCHEMA;
  readonly layers: Readonly<Record<InputLayer, Readonly<Record<string, string>>>>;
}

export interface BuiltInputs {
  readonly manifest: InputsManifest;
  readonly bytes: Uint8Array;
  readonly digest: string;
  /** Every object the manifest names: digest → bytes. */
  readonly objects: ReadonlyMap<string, Uint8Array>;
}

const ENDPOINT_KINDS = new Set(['EndpointSlice', 'Endpoints', 'Pod', 'Node']);

export const layerOf = (kind: string): InputLayer => (ENDPOINT_KINDS.has(kind) ? 'endpoints' : 'config');

/** `Kind/namespace/name` (namespace empty for cluster-scoped kinds). */
export const keyString = (k: ObjectKey): string => `${k.kind}/${k.namespace}/${k.name}`;

export function parseKeyString(s: string): ObjectKey | undefined {
  const m = /^([^/]+)\/([^/]*)\/([^/]+)$/.exec(s);
  return m ? { kind: m[1] as string, namespace: m[2] as string, name: m[3] as string } : undefined;
}

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

/** Metadata the compiler reads; everything else in `metadata` is server bookkeeping. */
function canonicalMeta(meta: Raw): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['name', 'namespace'] as const) {
    const v = own(meta, k);
    if (typeof v === 'string' && v !== '') out[k] = v;
  }
  const labels = own(meta, 'labels');
  if (isRecord(labels) && Object.keys(labels).length > 0) out.labels = { ...labels };
  const annotations = own(meta, 'annotations');
  if (isRecord(annotations)) {
    const kept = Object.fromEntries(Object.entries(annotations).filter(([k]) => !NOISY_ANNOTATIONS.has(k)));
    if (Object.keys(kept).length > 0) out.annotations = kept;
  }
  return out;
}

/** The parts of a Pod's status the compiler reads (src/inputs/validate/k8s.ts readPod). */
function podStatus(status: Raw): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
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

/** A copy of the object without server noise. Values the compiler reads are never touched. */
export function canonicalObject(raw: Raw): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k === 'status') continue;
    out[k] = k === 'metadata' && isRecord(v) ? canonicalMeta(v) : v;
  }
  const status = own(raw, 'status');
  if (own(raw, 'kind') === 'Pod' && isRecord(status)) {
    const kept = podStatus(status);
    if (kept) out.status = kept;
  }
  // JSON round trip through canonical form: drops undefined members and any class instances.
  return JSON.parse(canonicalJson(out)) as Record<string, unknown>;
}

export function storedObject(raw: Raw, hasher?: Hasher): StoredObject | undefined {
  const key = objectKeyOf(raw);
  if (!key) return undefined;
  const object = canonicalObject(raw);
  const bytes = utf8Bytes(canonicalJson(object));
  return { key, layer: layerOf(key.kind), object, bytes, digest: digestOf(bytes, hasher) };
}

/**
 * The manifest of a set of objects. Two objects with one key (the same object in two files) keep
 * the one with the smaller digest, so the choice does not depend on reading order.
 */
export function buildStoredInputs(objects: Iterable<StoredObject>, hasher?: Hasher): BuiltInputs {
  const chosen = new Map<string, StoredObject>();
  for (const o of objects) {
    const k = keyString(o.key);
    const prev = chosen.get(k);
    if (!prev || o.digest < prev.digest) chosen.set(k, o);
  }
  const layers: Record<InputLayer, Record<string, string>> = { config: {}, endpoints: {} };
  const stored = new Map<string, Uint8Array>();
  for (const k of [...chosen.keys()].sort()) {
    const o = chosen.get(k) as StoredObject;
    layers[o.layer][k] = o.digest;
    stored.set(o.digest, o.bytes);
  }
  const manifest: InputsManifest = { schema: STORED_INPUTS_SCHEMA, layers };
  const bytes = utf8Bytes(canonicalJson(manifest));
  return { manifest, bytes, digest: digestOf(bytes, hasher), objects: stored };
}

/** Stored inputs of raw documents (as `meshsnap compile` reads them); documents without kind or name are left out. */
export function storedInputsOfDocuments(docs: readonly RawDocument[], hasher?: Hasher): BuiltInputs {
  const objects: StoredObject[] = [];
  for (const d of docs) {
    const o = storedObject(d.object, hasher);
    if (o) objects.push(o);
  }
  return buildStoredInputs(objects, hasher);
}

/** Writes the objects, then the manifest (so a stored manifest never names a missing object). */
export async function putStoredInputs(store: Pick<SnapshotStore, 'putObject' | 'hasObject'>, inputs: BuiltInputs): Promise<number> {
  let written = 0;
  for (const [digest, bytes] of inputs.objects) {
    if (await store.hasObject(digest)) continue;
    if ((await store.putObject(digest, bytes)) === 'created') written++;
  }
  if ((await store.putObject(inputs.digest, inputs.bytes)) === 'created') written++;
  return written;
}

export class InvalidStoredInputsError extends Error {
  override readonly name = 'InvalidStoredInputsError';
}

const decoder = new TextDecoder();

/** Reads stored inputs back as raw documents (file = the object's key), ready for buildInputSet. */
export async function loadStoredInputs(store: Pick<SnapshotStore, 'getObject'>, digest: string): Promise<RawDocument[]> {
  const bytes = await store.getObject(digest);
  if (!bytes) throw new InvalidStoredInputsError(`inputs manifest ${digest} not found`);
  const manifest = JSON.parse(decoder.decode(bytes)) as unknown;
  if (!isRecord(manifest) || manifest.schema !== STORED_INPUTS_SCHEMA || !isRecord(manifest.layers)) {
    throw new InvalidStoredInputsError(`${digest} is not a ${STORED_INPUTS_SCHEMA} manifest`);
  }
  const docs: RawDocument[] = [];
  for (const layer of ['config', 'endpoints'] as const) {
    const entries = manifest.layers[layer];
    if (!isRecord(entries)) continue;
    for (const [key, objectDigest] of Object.entries(entries)) {
      const objBytes = typeof objectDigest === 'string' ? await store.getObject(objectDigest) : null;
      if (!objBytes) throw new InvalidStoredInputsError(`object ${String(objectDigest)} of ${key} not found`);
      docs.push({ file: key, index: 0, object: JSON.parse(decoder.decode(objBytes)) as Raw });
    }
  }
  return docs;
}

/** Stored inputs of input files (`meshsnap compile`): parsed as the compiler parses them. */
export function storedInputsOfTexts(files: readonly { readonly file: string; readonly text: string }[], hasher?: Hasher): BuiltInputs {
  const docs: RawDocument[] = [];
  for (const f of files) docs.push(...parseDocuments(f.text, f.file).docs);
  return storedInputsOfDocuments(docs, hasher);
}

/**
 * The store, with extra fields (`inputs`, `provenance`) added to the version record its next
 * `publish` writes. publishSnapshot builds the draft itself; this carries the optional record
 * fields through it without widening its signature.
 */
export function withRecordFields(store: SnapshotStore, fields: Pick<VersionDraft, 'inputs' | 'provenance'>): SnapshotStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'publish') return (channel: string, draft: VersionDraft) => target.publish(channel, { ...draft, ...fields });
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
