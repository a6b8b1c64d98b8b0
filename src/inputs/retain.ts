/**
 * What of an input object is stored (stored inputs are served by `GET …/inputs`, kept in every
 * store, and must never hold a secret): only what the compiler reads.
 *
 * - An object of a kind the compiler does not read (Secret, a ConfigMap other than the mesh
 *   config, anything unknown), or without a kind or a name: nothing.
 * - An object that fails validation: its identity and first error, redacted (src/inputs/rejected.ts).
 * - Any other object: the members its validator reads (src/inputs/read-tracker.ts) — so unknown
 *   fields, a Pod's containers beyond their ports, a ConfigMap's keys other than `mesh` are left
 *   out, and the mesh ConfigMap's `mesh` text is the JSON of what is read of it — less metadata annotations, but those the compiler reads (READ_ANNOTATIONS: an
 *   AuthorizationPolicy's `istio.io/dry-run`: it decides whether the policy is enforced, a
 *   WorkloadEntry's `proxy.istio.io/health-checks-enabled`: it decides whether its health counts, an
 *   Ingress's `kubernetes.io/ingress.class`: it decides whether istiod serves it, a Service's
 *   `networking.istio.io/exportTo`, and `networking.istio.io/traffic-distribution` of a Service,
 *   ServiceEntry or Namespace: they decide who sees it and how its endpoints are prioritised, and
 *   a Pod's `proxy.istio.io/config`: its gateway's proxy headers and topology).
 *
 * The projection of a projection is itself: storing stored inputs again gives the same digest. Pure.
 */
import { DRY_RUN_ANNOTATION } from '../model/authorization-policy.js';
import { HEALTH_CHECKS_ANNOTATION } from '../model/service-entry.js';
import { INGRESS_CLASS_ANNOTATION } from '../model/ingress.js';
import { SERVICE_EXPORT_TO_ANNOTATION } from '../model/k8s.js';
import { TRAFFIC_DISTRIBUTION_ANNOTATION } from '../model/traffic-distribution.js';
import { PROXY_CONFIG_ANNOTATION } from './validate/pod-proxy-config.js';
import { isIstioMeshConfigMap, meshTextForStorage } from './validate/mesh-config.js';
import type { InputSet } from '../model/inputs.js';
import { buildInputSet, readOneDocument, type DocumentReading, type ObjectRead, type ReadObserver } from './load.js';
import type { RawDocument } from './parse.js';
import { ReadRecorder, RECORDED_KINDS, type RecordedReads } from './read-recorder.js';
import { ReadTracker } from './read-tracker.js';
import { redactRejected } from './rejected.js';
import type { Raw } from './validate/reader.js';

/** Reused from one object to the next (`during` forgets the previous reads). */
const objectRecorder = new ReadRecorder();

/** The stored projection of a raw object, or null when nothing of it is stored (the watcher: one object at a time). */
export function retainedForStorage(raw: Raw): Raw | null {
  return withRetention(raw, (retention) => retention.retained());
}

/** `retainedForStorage` read through a tracking view whatever the kind: the reference the recorded projections are tested against. */
export function retainedByTracking(raw: Raw): Raw | null {
  if (!hasKindAndName(raw)) return null;
  return trackedRetained(raw, (view) => readOneDocument({ file: '', index: 0, object: view }));
}

/**
 * `buildInputSet` and `retainedForStorage` of every document from one validation pass: each
 * document is read once, its reads recorded (src/inputs/read-recorder.ts for the kinds whose
 * validators read through the reader helpers, a tracking view for the others), and `keep` is given
 * its projection (null: nothing stored) right after its reading, in document order, so no
 * projection outlives its use.
 */
export function buildInputSetRetaining(
  docs: readonly RawDocument[],
  keep: (retained: Raw | null, doc: RawDocument) => void,
): InputSet {
  return buildInputSetRetention(docs, (doc, retention) => keep(retention.retained(), doc));
}

/**
 * What is stored of one document, right after its one reading (valid during the callback only: the
 * next document's reading replaces it).
 */
export interface Retention {
  /** The stored projection (as `retainedForStorage` gives it), or null when nothing is stored. */
  retained(): Raw | null;
  /**
   * The recorded reads of a valid object of a RECORDED_KINDS kind that the compiler uses, whose
   * stored form is the projection of its reads less its metadata annotations: a writer may write
   * that form straight from them (else undefined: use `retained()`).
   */
  readonly reads: RecordedReads | undefined;
  /**
   * The value read, for a valid object of a RECORDED_KINDS kind read without any diagnostic (read
   * from the object itself, not through a tracking view), else undefined.
   */
  readonly read: ObjectRead | undefined;
}

/** `buildInputSetRetaining`, giving each document's Retention: its stored form written from its reads where they suffice. */
export function buildInputSetRetention(
  docs: readonly RawDocument[],
  keep: (doc: RawDocument, retention: Retention) => void,
): InputSet {
  const retention = new DocumentRetention(new ReadRecorder());
  const observer: ReadObserver = {
    observe(doc, read) {
      retention.readBy(doc.object, read);
      keep(doc, retention);
    },
  };
  return buildInputSet(docs, observer);
}

/**
 * `retainedForStorage` of one object as a Retention (the watcher: one object at a time), given to `f`
 * during its reading; `file` is the origin of the value read.
 */
export function withRetention<T>(raw: Raw, f: (retention: Retention) => T, file = ''): T {
  const retention = new DocumentRetention(objectRecorder);
  retention.readBy(raw, (view) => readOneDocument({ file, index: 0, object: view }));
  return f(retention);
}

/** One document's reading and what it keeps: reused from one document to the next. */
class DocumentRetention implements Retention {
  private raw: Raw = {};
  private reading: DocumentReading | undefined;
  /** Known at once for a document not read under the recorder. */
  private kept: Raw | null = null;
  private recorded = false;

  constructor(private readonly recorder: ReadRecorder) {}

  readBy(raw: Raw, read: (view: Raw) => DocumentReading): void {
    this.raw = raw;
    this.recorded = false;
    this.reading = undefined;
    if (!hasKindAndName(raw)) {
      read(raw);
      this.kept = null;
    } else if (RECORDED_KINDS.has(raw.kind as string)) {
      this.reading = this.recorder.during(() => read(raw));
      this.recorded = true;
    } else this.kept = trackedRetained(raw, read);
  }

  retained(): Raw | null {
    if (!this.recorded) return this.kept;
    const { raw, recorder } = this;
    return retainedOf(raw, this.reading as DocumentReading, () => recorder.projection(raw) ?? trackedProjection(raw));
  }

  get reads(): RecordedReads | undefined {
    const reading = this.reading;
    if (!this.recorded || !reading?.used || reading.diagnostics.some((d) => d.severity === 'error')) return undefined;
    // The recorded writer drops annotations: an object holding one the compiler reads is projected.
    return holdsReadAnnotation(this.raw) ? undefined : this.recorder;
  }

  get read(): ObjectRead | undefined {
    return this.recorded ? this.reading?.read : undefined;
  }
}

/** What is kept of an object read through a tracking view. */
function trackedRetained(raw: Raw, read: (view: Raw) => DocumentReading): Raw | null {
  const tracker = new ReadTracker(raw as Record<string, unknown>);
  const reading = read(tracker.tracked() as Raw);
  return retainedOf(raw, reading, () => withStoredMeshText(tracker.projection() as Record<string, unknown>));
}

/** The mesh ConfigMap's `data.mesh` as what is read of it (meshTextForStorage), not its whole text. */
function withStoredMeshText(kept: Record<string, unknown>): Record<string, unknown> {
  if (kept.kind !== 'ConfigMap' || !isIstioMeshConfigMap(kept)) return kept;
  const data = kept.data as Record<string, unknown> | undefined;
  if (typeof data?.mesh !== 'string') return kept;
  return { ...kept, data: { ...data, mesh: meshTextForStorage(data.mesh) } };
}

/** The projection of a second reading through a tracking view (an object whose recorded reads cannot be told apart by path). */
function trackedProjection(raw: Raw): Raw {
  const tracker = new ReadTracker(raw as Record<string, unknown>);
  readOneDocument({ file: '', index: 0, object: tracker.tracked() as Raw });
  return tracker.projection() as Raw;
}

/**
 * What is kept of an object after its reading: its redacted form when it failed, nothing when it
 * is not used, else the projection of what was read, less the annotations the compiler never reads.
 */
function retainedOf(raw: Raw, { diagnostics, used }: DocumentReading, projection: () => Raw): Raw | null {
  const error = diagnostics.find((d) => d.severity === 'error');
  if (error) return redactRejected(raw, error);
  if (!used) return null;
  const kept = projection() as Record<string, unknown>;
  const meta = kept.metadata;
  if (meta !== null && typeof meta === 'object') keepReadAnnotations(meta as Record<string, unknown>, raw.kind);
  return kept;
}

/** Annotations the compiler reads, per kind. */
const READ_ANNOTATIONS: Readonly<Record<string, readonly string[]>> = {
  AuthorizationPolicy: [DRY_RUN_ANNOTATION],
  WorkloadEntry: [HEALTH_CHECKS_ANNOTATION],
  Ingress: [INGRESS_CLASS_ANNOTATION],
  Service: [SERVICE_EXPORT_TO_ANNOTATION, TRAFFIC_DISTRIBUTION_ANNOTATION],
  ServiceEntry: [TRAFFIC_DISTRIBUTION_ANNOTATION],
  Namespace: [TRAFFIC_DISTRIBUTION_ANNOTATION],
  Pod: [PROXY_CONFIG_ANNOTATION],
};

/** Whether the object holds an annotation the compiler reads of its kind. */
function holdsReadAnnotation(raw: Raw): boolean {
  const names =
    typeof raw.kind === 'string' && Object.hasOwn(READ_ANNOTATIONS, raw.kind) ? READ_ANNOTATIONS[raw.kind] : undefined;
  const meta = Object.hasOwn(raw, 'metadata') ? raw.metadata : undefined;
  const annotations =
    meta !== null && typeof meta === 'object' && Object.hasOwn(meta, 'annotations')
      ? (meta as Raw).annotations
      : undefined;
  if (!names || annotations === null || typeof annotations !== 'object') return false;
  return names.some((n) => Object.hasOwn(annotations, n));
}

/** Leaves in `meta` only the annotations the compiler reads of its kind (none: no `annotations`). */
export function keepReadAnnotations(meta: Record<string, unknown>, kind: unknown): void {
  const annotations = meta.annotations;
  delete meta.annotations;
  const names = typeof kind === 'string' && Object.hasOwn(READ_ANNOTATIONS, kind) ? READ_ANNOTATIONS[kind] : undefined;
  if (!names || annotations === null || typeof annotations !== 'object') return;
  const kept = names.filter((n) => Object.hasOwn(annotations, n));
  if (kept.length > 0)
    meta.annotations = Object.fromEntries(kept.map((n) => [n, (annotations as Record<string, unknown>)[n]]));
}

function hasKindAndName(raw: Raw): boolean {
  const kind = Object.hasOwn(raw, 'kind') ? raw.kind : undefined;
  const meta = Object.hasOwn(raw, 'metadata') ? raw.metadata : undefined;
  if (typeof kind !== 'string' || kind === '' || meta === null || typeof meta !== 'object') return false;
  const name = Object.hasOwn(meta, 'name') ? (meta as Raw).name : undefined;
  return typeof name === 'string' && name !== '';
}
