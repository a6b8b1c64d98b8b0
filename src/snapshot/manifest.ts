/**
 * Channel version records: one immutable record per published version of a channel, pointing at
 * a snapshot digest and its parent version. The core has no clock: `createdAt` comes from the caller.
 */
import { MeshsnapError } from '../errors.js';
import type { Diagnostic } from '../model/diagnostics.js';
import type { SnapshotCounts } from './build.js';
import { canonicalJson } from '../canonical-json.js';
import type { CompilerInfo } from './content.js';
import { digestOf, isDigest, nobleSha256Hex, type Hasher } from './digest.js';

export const VERSION_SCHEMA = 'meshsnap.version/v1';

export interface VersionRecord {
  readonly schema: typeof VERSION_SCHEMA;
  readonly channel: string;
  /** 1, 2, 3, … per channel. */
  readonly version: number;
  /** Snapshot digest. */
  readonly digest: string;
  readonly parent: number | null;
  /** ISO 8601. */
  readonly createdAt: string;
  readonly inputsDigest: string;
  readonly compiler: CompilerInfo;
  readonly counts: SnapshotCounts;
  /**
   * The diagnostics document (`meshsnap.diagnostics/v1`, see diagnosticsDocument): stored once per
   * distinct list, so a version record stays small however many diagnostics there are.
   */
  readonly diagnosticsDigest?: string;
  /** How many diagnostics of each severity the diagnostics document holds. */
  readonly diagnosticCounts?: DiagnosticCounts;
  /** Records written before diagnostics documents carry the list itself (read with recordDiagnostics). */
  readonly diagnostics?: readonly Diagnostic[];
  /** Digest of the stored inputs manifest (`meshsnap.inputs/v2` tree, or a `v1` manifest before it; src/snapshot/stored-inputs/): what this version was compiled from. */
  readonly inputs?: string;
  /** What changed since the parent version (the watcher records it; `meshsnap compile` does not). */
  readonly provenance?: VersionProvenance;
  /** The packs that together hold this snapshot's documents and objects (src/snapshot/store/packs.ts). */
  readonly packs?: PackList;
  /** `candidate`: recorded while the channel was pinned, not served (lives in the `<channel>.candidates` channel, see src/history). Absent = served. */
  readonly status?: 'candidate';
  /** How this version was made when not by a plain compile: a rollback, a promotion, an endpoint update on a pinned config. */
  readonly origin?: VersionOrigin;
  /** Who made it (`--actor`, $MESHSNAP_ACTOR or the OS user) and why. */
  readonly actor?: string;
  readonly reason?: string;
  /** The GitOps revision the inputs came from (`compile --source-revision`, or the input folder's git commit). */
  readonly source?: VersionSource;
}

export interface VersionSource {
  /** A commit id (or any revision name the source uses). */
  readonly revision: string;
  readonly url?: string;
  /** The work tree had uncommitted changes: the inputs are not exactly `revision`. */
  readonly dirty?: boolean;
}

export interface DiagnosticCounts {
  readonly error: number;
  readonly warning: number;
  readonly info: number;
}

/** Where a version's config layer came from (its endpoint layer is always the current one). */
export interface VersionOrigin {
  readonly kind: 'rollback' | 'promote' | 'pinned';
  /** The version (or `candidate:N`) whose config layer was used. */
  readonly from: number | string;
}

/** A pack: an object holding many documents and objects (src/snapshot/store/packs.ts). */
export interface PackRef {
  readonly digest: string;
  /** Its size in bytes. */
  readonly bytes: number;
}

/** A full checkpoint pack and the delta packs written after it, oldest first. */
export interface PackList {
  readonly checkpoint: PackRef;
  readonly deltas: readonly PackRef[];
}

/** One object that changed since the parent version. */
export interface ProvenanceChange {
  readonly kind: string;
  /** "" for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
  /** The API server's resourceVersion of the change (the deleted object's last one for a delete). */
  readonly resourceVersion?: string;
  readonly change: 'added' | 'modified' | 'deleted';
  /**
   * Who wrote it, as far as Kubernetes tells: the field manager of the object's newest
   * managedFields entry (`kubectl-client-side-apply`, `helm`, `argocd-controller`, …). Kubernetes
   * records no user; its audit log does, and this points there. Absent for deletes.
   */
  readonly manager?: string;
}

/** An object compiled from its last valid version because its current one is invalid. */
export interface LastKnownGoodSubstitution {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** resourceVersion of the invalid object that was set aside, and of the valid one compiled instead. */
  readonly rejectedResourceVersion?: string;
  readonly usedResourceVersion?: string;
  /** The first failing field and why. */
  readonly field?: string;
  readonly message: string;
}

export interface VersionProvenance {
  readonly changes: readonly ProvenanceChange[];
  /** Changes folded away because the list was too long (a relist of a big cluster). */
  readonly truncated?: number;
  readonly lastKnownGood?: readonly LastKnownGoodSubstitution[];
}

/** A record before the store allocated its version. */
export type VersionDraft = Omit<VersionRecord, 'schema' | 'channel' | 'version' | 'parent'>;

/** Where a channel stands. */
export interface ChannelHead {
  readonly version: number;
  readonly digest: string;
}

export function versionRecord(channel: string, version: number, draft: VersionDraft): VersionRecord {
  return {
    schema: VERSION_SCHEMA,
    channel,
    version,
    digest: draft.digest,
    parent: version > 1 ? version - 1 : null,
    createdAt: draft.createdAt,
    inputsDigest: draft.inputsDigest,
    compiler: { name: draft.compiler.name, version: draft.compiler.version },
    counts: draft.counts,
    ...(draft.diagnosticsDigest !== undefined ? { diagnosticsDigest: draft.diagnosticsDigest } : {}),
    ...(draft.diagnosticCounts !== undefined ? { diagnosticCounts: draft.diagnosticCounts } : {}),
    ...(draft.diagnostics !== undefined ? { diagnostics: draft.diagnostics } : {}),
    ...(draft.inputs !== undefined ? { inputs: draft.inputs } : {}),
    ...(draft.provenance !== undefined ? { provenance: draft.provenance } : {}),
    ...(draft.packs !== undefined ? { packs: draft.packs } : {}),
    ...(draft.status !== undefined ? { status: draft.status } : {}),
    ...(draft.origin !== undefined ? { origin: draft.origin } : {}),
    ...(draft.actor !== undefined ? { actor: draft.actor } : {}),
    ...(draft.reason !== undefined ? { reason: draft.reason } : {}),
    ...(draft.source !== undefined ? { source: draft.source } : {}),
  };
}

/** Channel names become path segments and object keys: keep them plain. */
const CHANNEL_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const isValidChannel = (channel: string): boolean => CHANNEL_RE.test(channel) && !channel.includes('..');

export class InvalidChannelError extends MeshsnapError {
  override readonly name = 'InvalidChannelError';
  constructor(readonly channel: string) {
    super('bad_request', `invalid channel name ${JSON.stringify(channel)}: use letters, digits, '.', '_' and '-'`);
  }
}

export function assertChannel(channel: string): void {
  if (!isValidChannel(channel)) throw new InvalidChannelError(channel);
}

export class InvalidVersionRecordError extends MeshsnapError {
  override readonly name = 'InvalidVersionRecordError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('internal', message, options);
  }
}

const COUNT_KEYS = ['clusters', 'endpoints', 'listeners', 'routes', 'classes', 'objects'] as const;

/** Checks the shape of a parsed version record. */
export function parseVersionRecord(value: unknown): VersionRecord {
  const fail = (why: string): never => {
    throw new InvalidVersionRecordError(`not a ${VERSION_SCHEMA} record: ${why}`);
  };
  if (!isRecord(value)) return fail('not an object');
  if (value.schema !== VERSION_SCHEMA) return fail(`schema is ${JSON.stringify(value.schema)}`);
  if (typeof value.channel !== 'string') return fail('bad channel');
  if (!isVersionNumber(value.version)) return fail('bad version');
  if (!isDigest(value.digest)) return fail('bad digest');
  if (value.parent !== null && !isVersionNumber(value.parent)) return fail('bad parent');
  if (typeof value.createdAt !== 'string') return fail('bad createdAt');
  if (typeof value.inputsDigest !== 'string') return fail('bad inputsDigest');
  const c = value.compiler;
  if (!isRecord(c) || typeof c.name !== 'string' || typeof c.version !== 'string') return fail('bad compiler');
  const counts = value.counts;
  if (!isRecord(counts) || COUNT_KEYS.some((k) => typeof counts[k] !== 'number')) return fail('bad counts');
  if (value.diagnostics !== undefined && !Array.isArray(value.diagnostics)) return fail('bad diagnostics');
  if (value.diagnosticsDigest !== undefined && !isDigest(value.diagnosticsDigest)) return fail('bad diagnosticsDigest');
  if (value.diagnosticCounts !== undefined && !isDiagnosticCounts(value.diagnosticCounts))
    return fail('bad diagnosticCounts');
  if (value.inputs !== undefined && !isDigest(value.inputs)) return fail('bad inputs');
  if (value.provenance !== undefined && (!isRecord(value.provenance) || !Array.isArray(value.provenance.changes)))
    return fail('bad provenance');
  if (value.packs !== undefined && !isPackList(value.packs)) return fail('bad packs');
  if (value.source !== undefined && (!isRecord(value.source) || typeof value.source.revision !== 'string'))
    return fail('bad source');
  return value as unknown as VersionRecord;
}

export function parseChannelHead(value: unknown): ChannelHead {
  if (!isRecord(value) || !isVersionNumber(value.version) || !isDigest(value.digest))
    throw new InvalidVersionRecordError('not a channel head');
  return { version: value.version, digest: value.digest };
}

/** The record's history, newest first, as far as `get` can read it. */
export async function versionHistory(
  get: (version: number) => Promise<VersionRecord | null>,
  from: VersionRecord,
  limit = Infinity,
): Promise<VersionRecord[]> {
  const out: VersionRecord[] = [from];
  let parent = from.parent;
  while (parent !== null && out.length < limit) {
    const rec = await get(parent);
    if (!rec) break;
    out.push(rec);
    parent = rec.parent;
  }
  return out;
}

// --- diagnostics documents

export const DIAGNOSTICS_SCHEMA = 'meshsnap.diagnostics/v1';

/** A diagnostics document, ready for `putDocuments`: canonical JSON, so equal lists are one document. */
export interface DiagnosticsDocument {
  readonly digest: string;
  readonly bytes: Uint8Array;
  readonly counts: DiagnosticCounts;
}

const utf8 = new TextEncoder();
const decoder = new TextDecoder();

export function countDiagnostics(diagnostics: readonly Diagnostic[]): DiagnosticCounts {
  let error = 0;
  let warning = 0;
  let info = 0;
  for (const d of diagnostics) {
    if (d.severity === 'error') error++;
    else if (d.severity === 'warning') warning++;
    else info++;
  }
  return { error, warning, info };
}

// Diagnostic objects are immutable and mostly the same objects from one round to the next: each
// one's canonical text is computed once, and the last document is kept for an identical list.
const diagnosticText = new WeakMap<Diagnostic, string>();
let lastDocument:
  { readonly list: readonly Diagnostic[]; readonly hasher: Hasher; readonly doc: DiagnosticsDocument } | undefined;

/** `{"diagnostics":[…],"schema":"meshsnap.diagnostics/v1"}` in canonical JSON, in the list's order. */
export function diagnosticsDocument(
  diagnostics: readonly Diagnostic[],
  hasher: Hasher = nobleSha256Hex,
): DiagnosticsDocument {
  const last = lastDocument;
  if (
    last &&
    last.hasher === hasher &&
    last.list.length === diagnostics.length &&
    last.list.every((d, i) => d === diagnostics[i])
  )
    return last.doc;
  const parts: string[] = [];
  for (const d of diagnostics) {
    let text = diagnosticText.get(d);
    if (text === undefined) diagnosticText.set(d, (text = canonicalJson(d)));
    parts.push(text);
  }
  const bytes = utf8.encode(`{"diagnostics":[${parts.join(',')}],"schema":${JSON.stringify(DIAGNOSTICS_SCHEMA)}}`);
  const doc: DiagnosticsDocument = { digest: digestOf(bytes, hasher), bytes, counts: countDiagnostics(diagnostics) };
  lastDocument = { list: [...diagnostics], hasher, doc };
  return doc;
}

export function parseDiagnosticsDocument(bytes: Uint8Array): Diagnostic[] {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(bytes));
  } catch {
    throw new InvalidVersionRecordError(`not a ${DIAGNOSTICS_SCHEMA} document: not JSON`);
  }
  if (!isRecord(value) || value.schema !== DIAGNOSTICS_SCHEMA || !Array.isArray(value.diagnostics))
    throw new InvalidVersionRecordError(`not a ${DIAGNOSTICS_SCHEMA} document`);
  return value.diagnostics as Diagnostic[];
}

/** A version's diagnostics: from its diagnostics document, or inline in an older record. */
export async function recordDiagnostics(
  store: { getDocument(digest: string): Promise<Uint8Array | null> },
  record: Pick<VersionRecord, 'diagnostics' | 'diagnosticsDigest' | 'version'>,
): Promise<readonly Diagnostic[]> {
  if (record.diagnosticsDigest === undefined) return record.diagnostics ?? [];
  const bytes = await store.getDocument(record.diagnosticsDigest);
  if (!bytes) throw new MissingDiagnosticsError(record.version, record.diagnosticsDigest);
  return parseDiagnosticsDocument(bytes);
}

/** A version's diagnostic counts, without reading its diagnostics document. */
export function recordDiagnosticCounts(
  record: Pick<VersionRecord, 'diagnostics' | 'diagnosticCounts'>,
): DiagnosticCounts {
  return record.diagnosticCounts ?? countDiagnostics(record.diagnostics ?? []);
}

export class MissingDiagnosticsError extends MeshsnapError {
  override readonly name = 'MissingDiagnosticsError';
  constructor(
    readonly version: number,
    readonly digest: string,
  ) {
    super('internal', `the diagnostics document ${digest} of version ${version} is missing from the store`);
  }
}

const isDiagnosticCounts = (v: unknown): v is DiagnosticCounts =>
  isRecord(v) && typeof v.error === 'number' && typeof v.warning === 'number' && typeof v.info === 'number';
const isPackRef = (v: unknown): v is PackRef => isRecord(v) && isDigest(v.digest) && typeof v.bytes === 'number';
const isPackList = (v: unknown): v is PackList =>
  isRecord(v) && isPackRef(v.checkpoint) && Array.isArray(v.deltas) && v.deltas.every(isPackRef);
const isVersionNumber = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
