/**
 * The canonical form of a stored object: the raw object a snapshot was compiled from, without the
 * noise the API server adds and the compiler never reads (status, managedFields, uid,
 * resourceVersion, timestamps, kubectl's last-applied annotation; a Gateway API object keeps its
 * generation and creationTimestamp, and the kinds the compile orders by age their
 * creationTimestamp: canonicalMeta). An object that only changed in
 * noise has the same digest, and two clusters holding the same mesh store the same bytes. Pod
 * status keeps what the compiler reads (IPs, phase, the Ready condition), and so does a
 * WorkloadEntry's (its Healthy condition): for those, status IS input. Objects carry no origin (file, document index), so the same objects in any file layout
 * or document order are the same inputs.
 *
 * Each object's canonical JSON (src/canonical-json.ts, written straight to bytes) is stored as a store object named by its
 * digest. Only what the compiler reads is stored (src/inputs/retain.ts, called in `stored` below):
 * no Secret, no ConfigMap but the mesh config, no unknown field, no Pod spec beyond ports; an
 * object that fails validation is stored redacted (identity and first error, which a recompile
 * reports again); a document without a kind or a name is not stored. Pure (no node:*): the Worker
 * computes the same digest.
 */
import { canonicalJson, canonicalJsonBytes } from '../../canonical-json.js';
import { setMember } from '../../inputs/plain-object.js';
import type { ObjectRead } from '../../inputs/load.js';
import { RECORDED_KINDS } from '../../inputs/read-recorder.js';
import { keepReadAnnotations, withRetention, type Retention } from '../../inputs/retain.js';
import { digestOf, type Hasher } from '../digest.js';
import type { ByteSlab } from '../../xds/wire/slab.js';
import { isAgeOrdered } from './age-ordered.js';
import { recordedCanonicalBytes, SHARED_BYTES } from './recorded-bytes.js';

export { SHARED_BYTES };
import { keyString, layerOf, objectKeyOf, UNKEYED_KIND, type InputLayer, type ObjectKey } from './keys.js';
import { isRecord, own, type Raw } from './raw.js';

const decoder = new TextDecoder();

/** A stored object's identity and canonical bytes: all that building the inputs tree needs. */
export interface StoredEntry {
  readonly key: ObjectKey;
  readonly layer: InputLayer;
  /** Its canonical JSON bytes, and their digest. */
  readonly bytes: Uint8Array;
  readonly digest: string;
}

export interface StoredObject extends StoredEntry {
  /** The canonical object (noise stripped). */
  readonly object: Raw;
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

/** An ordinary object; keys from the data are set with `setMember`, so a `__proto__` key is kept as data. */
const dict = (): Record<string, unknown> => ({});

/**
 * Metadata the compiler reads; everything else in `metadata` is server bookkeeping. The Gateway
 * API's objects also keep `generation` (their status's observedGeneration) and `creationTimestamp`
 * (route precedence: the oldest route wins), an Ingress and the age-ordered kinds their
 * `creationTimestamp` (rule order, the oldest wins; age-ordered.ts), so a recompile of stored inputs gives the same result.
 */
function canonicalMeta(meta: Raw, gatewayApi: boolean, aged: boolean): Record<string, unknown> {
  const out = dict();
  for (const k of ['name', 'namespace'] as const) {
    const v = own(meta, k);
    if (typeof v === 'string' && v !== '') out[k] = v;
  }
  if (gatewayApi || aged) {
    const generation = own(meta, 'generation');
    if (gatewayApi && typeof generation === 'number') out.generation = generation;
    const created = own(meta, 'creationTimestamp');
    if (typeof created === 'string' && created !== '') out.creationTimestamp = created;
  }
  const labels = own(meta, 'labels');
  if (isRecord(labels) && Object.keys(labels).length > 0) out.labels = labels;
  const annotations = own(meta, 'annotations');
  if (isRecord(annotations)) {
    const kept = dict();
    for (const [k, v] of Object.entries(annotations)) if (!NOISY_ANNOTATIONS.has(k)) setMember(kept, k, v);
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
    const ready = conditions
      .filter((c) => isRecord(c) && own(c, 'type') === 'Ready')
      .map((c) => ({ type: 'Ready', status: own(c as Raw, 'status') }));
    if (ready.length > 0) out.conditions = ready;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The `Healthy` condition of a WorkloadEntry's status: its health (src/inputs/validate/workload-entry.ts). */
function workloadEntryStatus(status: Raw): Record<string, unknown> | undefined {
  const conditions = own(status, 'conditions');
  if (!Array.isArray(conditions)) return undefined;
  const healthy = conditions
    .filter((c) => isRecord(c) && own(c, 'type') === 'Healthy')
    .map((c) => ({ type: 'Healthy', status: own(c as Raw, 'status') }));
  return healthy.length > 0 ? { conditions: healthy } : undefined;
}

/** The canonical form of an object: without server noise. Values the compiler reads are never touched. */
function canonicalForm(raw: Raw): Record<string, unknown> {
  const out = dict();
  const apiVersion = own(raw, 'apiVersion');
  const gatewayApi = typeof apiVersion === 'string' && apiVersion.startsWith('gateway.networking.k8s.io/');
  const kind = own(raw, 'kind');
  // An Ingress's creationTimestamp orders the rules of one host (src/compile/ingress/).
  const ingress = kind === 'Ingress' && apiVersion === 'networking.k8s.io/v1';
  const aged = ingress || isAgeOrdered(kind, apiVersion);
  for (const k of Object.keys(raw)) {
    if (k === 'status') continue;
    const v = raw[k];
    setMember(out, k, k === 'metadata' && isRecord(v) ? canonicalMeta(v, gatewayApi, aged) : v);
  }
  const status = own(raw, 'status');
  if ((kind === 'Pod' || kind === 'WorkloadEntry') && isRecord(status)) {
    const kept = kind === 'Pod' ? podStatus(status) : workloadEntryStatus(status);
    if (kept) out.status = kept;
  }
  return out;
}

/** A copy of the object without server noise: plain JSON values, ordinary objects. */
export function canonicalObject(raw: Raw): Record<string, unknown> {
  return JSON.parse(canonicalJson(canonicalForm(raw))) as Record<string, unknown>;
}

/**
 * A stored object whose canonical object is parsed from its bytes on first read (an own enumerable
 * getter: a spread copy still carries the object, but parses it to copy it, so add fields with
 * Object.assign instead): building the inputs tree (the inputs digest) only needs the bytes, so a
 * full compile does not keep a second parsed copy of every input.
 */
function parsedOnRead({ key, layer, bytes, digest }: StoredEntry): StoredObject {
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

function stored(raw: Raw, key: ObjectKey | undefined, hasher: Hasher | undefined): StoredObject | undefined {
  const entry = withRetention(raw, (retention) => entryOfRetention(raw, retention, key, hasher));
  return entry ? parsedOnRead(entry) : undefined;
}

/**
 * The entry of a document after its reading: its bytes written straight from the recorded reads
 * where they suffice (recorded-bytes.ts), else from its projection.
 */
function entryOfRetention(
  raw: Raw,
  retention: Retention,
  key: ObjectKey | undefined,
  hasher: Hasher | undefined,
  into?: ByteSlab | typeof SHARED_BYTES,
): StoredEntry | undefined {
  const reads = key ? retention.reads : undefined;
  const bytes = reads ? recordedCanonicalBytes(raw, reads, into) : undefined;
  if (key && bytes) return { key, layer: layerOf(key.kind), bytes, digest: digestOf(bytes, hasher) };
  const kept = retention.retained();
  return kept ? entryOfRetained(raw, kept, key, hasher) : undefined;
}

/**
 * The stored entry of a document read in one pass (src/inputs/retain.ts buildInputSetRetention), or
 * undefined when none of it is stored. Its bytes are written into `into` when it is a slab; with
 * SHARED_BYTES they may be a view of a reused buffer, valid until the next call (copy them at once).
 */
export function storedEntryOfRetention(
  raw: Raw,
  retention: Retention,
  hasher?: Hasher,
  into?: ByteSlab | typeof SHARED_BYTES,
): StoredEntry | undefined {
  return entryOfRetention(raw, retention, objectKeyOf(raw), hasher, into);
}

function entryOfRetained(raw: Raw, kept: Raw, key: ObjectKey | undefined, hasher: Hasher | undefined): StoredEntry {
  const bytes = canonicalJsonBytes(canonicalForm(kept));
  const digest = digestOf(bytes, hasher);
  if (key) return { key, layer: layerOf(key.kind), bytes, digest };
  const kind = own(raw, 'kind');
  return {
    key: { kind: UNKEYED_KIND, namespace: '', name: digest },
    layer: layerOf(typeof kind === 'string' ? kind : ''),
    bytes,
    digest,
  };
}

/** The stored form of a keyed object; undefined when it has no kind or name. */
export function storedObject(raw: Raw, hasher?: Hasher): StoredObject | undefined {
  const key = objectKeyOf(raw);
  return key ? stored(raw, key, hasher) : undefined;
}

/** `storedObject` without the parsed object: the identity, canonical bytes and digest the watcher's cache keeps. */
export function storedEntry(raw: Raw, hasher?: Hasher): StoredEntry | undefined {
  return storedEntryRead(raw, hasher)?.entry;
}

/**
 * `storedEntry`, and the value its one reading gave when the InputSet can take it as it is
 * (src/inputs/load.ts ObjectRead; its origin's file is the key string). An object of a
 * RECORDED_KINDS kind is read in its canonical form less the annotations the compiler does not read
 * (what its stored bytes hold), so the value equals what reading the stored bytes gives; the bytes
 * are the same.
 */
export function storedEntryRead(
  raw: Raw,
  hasher?: Hasher,
): { readonly entry: StoredEntry; readonly read: ObjectRead | undefined } | undefined {
  const key = objectKeyOf(raw);
  if (!key) return undefined;
  const view = storedView(raw, key.kind);
  const read = view ?? raw;
  return withRetention(
    read,
    (retention) => {
      const entry = entryOfRetention(read, retention, key, hasher);
      return entry ? { entry, read: view ? retention.read : undefined } : undefined;
    },
    keyString(key),
  );
}

/**
 * The canonical form less annotations (what the stored form of a recorded kind keeps), or undefined
 * when the copy would be stored differently: the recorder keeps a member of a frozen or sealed
 * object whole (read-recorder.ts), and the copy is extensible. Parsed JSON always is.
 */
function storedView(raw: Raw, kind: string): Raw | undefined {
  if (!RECORDED_KINDS.has(kind) || ![raw, own(raw, 'metadata'), own(raw, 'status')].every(extensible)) return undefined;
  const view = canonicalForm(raw);
  const meta = view.metadata;
  // The annotations the compiler reads stay (a Service's exportTo): the view is what is read.
  if (isRecord(meta)) keepReadAnnotations(meta as Record<string, unknown>, kind);
  return view;
}

const extensible = (v: unknown): boolean => v === null || typeof v !== 'object' || Object.isExtensible(v);

/** The stored form of any document (src/inputs/retain.ts: only what the compiler reads), or undefined when none of it is stored. */
export function storedDocument(raw: Raw, hasher?: Hasher): StoredObject | undefined {
  return stored(raw, objectKeyOf(raw), hasher);
}

/** `storedDocument` of a document whose `retainedForStorage` is already known (src/inputs/retain.ts buildInputSetRetaining). */
export function storedRetainedDocument(raw: Raw, kept: Raw | null, hasher?: Hasher): StoredObject | undefined {
  return kept ? parsedOnRead(entryOfRetained(raw, kept, objectKeyOf(raw), hasher)) : undefined;
}

/** `storedRetainedDocument` without the parsed object: what a from-scratch build of the inputs tree keeps per object. */
export function storedRetainedEntry(raw: Raw, kept: Raw | null, hasher?: Hasher): StoredEntry | undefined {
  return kept ? entryOfRetained(raw, kept, objectKeyOf(raw), hasher) : undefined;
}
