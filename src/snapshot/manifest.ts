/**
 * Channel version records: one immutable record per published version of a channel, pointing at
 * a snapshot digest and its parent version. The core has no clock: `createdAt` comes from the caller.
 */
import type { Diagnostic } from '../inputs/diagnostics.js';
import type { SnapshotCounts } from './build.js';
import type { CompilerInfo } from './content.js';
import { isDigest } from './digest.js';

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
  readonly diagnostics: readonly Diagnostic[];
  /** Digest of the stored inputs manifest (`meshsnap.inputs/v1`, src/model/stored-inputs.ts): what this version was compiled from. */
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
    diagnostics: draft.diagnostics,
    ...(draft.inputs !== undefined ? { inputs: draft.inputs } : {}),
    ...(draft.provenance !== undefined ? { provenance: draft.provenance } : {}),
    ...(draft.packs !== undefined ? { packs: draft.packs } : {}),
    ...(draft.status !== undefined ? { status: draft.status } : {}),
    ...(draft.origin !== undefined ? { origin: draft.origin } : {}),
    ...(draft.actor !== undefined ? { actor: draft.actor } : {}),
    ...(draft.reason !== undefined ? { reason: draft.reason } : {}),
  };
}

/** Channel names become path segments and object keys: keep them plain. */
const CHANNEL_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const isValidChannel = (channel: string): boolean => CHANNEL_RE.test(channel) && !channel.includes('..');

export class InvalidChannelError extends Error {
  override readonly name = 'InvalidChannelError';
  constructor(readonly channel: string) {
    super(`invalid channel name ${JSON.stringify(channel)}: use letters, digits, '.', '_' and '-'`);
  }
}

export function assertChannel(channel: string): void {
  if (!isValidChannel(channel)) throw new InvalidChannelError(channel);
}

export class InvalidVersionRecordError extends Error {
  override readonly name = 'InvalidVersionRecordError';
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
  if (!Array.isArray(value.diagnostics)) return fail('bad diagnostics');
  if (value.inputs !== undefined && !isDigest(value.inputs)) return fail('bad inputs');
  if (value.provenance !== undefined && (!isRecord(value.provenance) || !Array.isArray(value.provenance.changes))) return fail('bad provenance');
  if (value.packs !== undefined && !isPackList(value.packs)) return fail('bad packs');
  return value as unknown as VersionRecord;
}

export function parseChannelHead(value: unknown): ChannelHead {
  if (!isRecord(value) || !isVersionNumber(value.version) || !isDigest(value.digest)) throw new InvalidVersionRecordError('not a channel head');
  return { version: value.version, digest: value.digest };
}

/** The record's history, newest first, as far as `get` can read it. */
export async function versionHistory(get: (version: number) => Promise<VersionRecord | null>, from: VersionRecord, limit = Infinity): Promise<VersionRecord[]> {
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

const isPackRef = (v: unknown): v is PackRef => isRecord(v) && isDigest(v.digest) && typeof v.bytes === 'number';
const isPackList = (v: unknown): v is PackList => isRecord(v) && isPackRef(v.checkpoint) && Array.isArray(v.deltas) && v.deltas.every(isPackRef);
const isVersionNumber = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1;
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
