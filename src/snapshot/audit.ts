/**
 * The relay audit log: one record per ACK or NACK (and a few lifecycle events), appended to the
 * store in immutable JSON-lines batches, so one can later answer "which proxies ran version N, when".
 */
import { MeshsnapError } from '../errors.js';

export type AuditKind = 'ack' | 'nack' | 'connect' | 'disconnect' | 'rejected' | HistoryAuditKind;

/** Operator actions on a channel's history (src/history); relay-only fields are empty for them. */
export type HistoryAuditKind = 'rollback' | 'pin' | 'unpin' | 'promote' | 'tag' | 'untag' | 'gc' | 'guard';

export interface AuditRecord {
  /** ISO 8601 time of the event. */
  readonly at: string;
  readonly kind: AuditKind;
  /** Id of the relay that saw it (several relays may serve one store). */
  readonly relay: string;
  readonly channel: string;
  readonly nodeId: string;
  readonly classId: string;
  /** xDS type URL; empty for events not about one type. */
  readonly typeUrl: string;
  /** xDS version_info ACKed or NACKed. */
  readonly version: string;
  /** Channel version number of the snapshot the proxy was on. */
  readonly snapshotVersion: number;
  /** Snapshot digest, when known. */
  readonly digest?: string;
  /** NACK error_detail, or the rejection reason. */
  readonly error?: string;
  /** History actions: who did it and why, and what it touched (e.g. a tag name, gc counts). */
  readonly actor?: string;
  readonly reason?: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

const KINDS: ReadonlySet<string> = new Set<AuditKind>([
  'ack',
  'nack',
  'connect',
  'disconnect',
  'rejected',
  'rollback',
  'pin',
  'unpin',
  'promote',
  'tag',
  'untag',
  'gc',
  'guard',
]);

export class InvalidAuditRecordError extends MeshsnapError {
  override readonly name = 'InvalidAuditRecordError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('internal', message, options);
  }
}

/** A batch as stored: one JSON object per line, each line ending in `\n`. */
export function auditBatchBytes(records: readonly AuditRecord[]): Uint8Array {
  return new TextEncoder().encode(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

const RELAY_KINDS: ReadonlySet<AuditKind> = new Set<AuditKind>(['ack', 'nack', 'connect', 'disconnect', 'rejected']);

/** True for a batch of relay records only (operator actions are batches of their own and kept by retention). */
export const isRelayBatch = (records: readonly AuditRecord[]): boolean =>
  records.length > 0 && records.every((r) => RELAY_KINDS.has(r.kind));

/** The day (YYYY-MM-DD, UTC) an ISO time files under; throws RangeError on a non-time. */
export function auditDay(at: string): string {
  const t = Date.parse(at);
  if (Number.isNaN(t)) throw new RangeError(`not a time: ${JSON.stringify(at)}`);
  return new Date(t).toISOString().slice(0, 10);
}

/** How a reader hears of a line it skipped. */
export type SkippedAuditLine = (error: InvalidAuditRecordError) => void;

/** The default: a warning on stderr (the CLI's and the API server's log), so one bad line never hides the rest of the trail. */
const warnSkipped: SkippedAuditLine = (e) => console.warn(`warning: audit record skipped: ${e.message}`);

/** Parses a stored batch; a line that is not a record is skipped and reported to `onSkip`. */
export function parseAuditBatch(text: string, where = '', onSkip: SkippedAuditLine = warnSkipped): AuditRecord[] {
  const out: AuditRecord[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line === '') continue;
    try {
      out.push(parseAuditRecord(parseLine(line, `${where}:${i + 1}`), `${where}:${i + 1}`));
    } catch (e) {
      if (!(e instanceof InvalidAuditRecordError)) throw e;
      onSkip(e);
    }
  }
  return out;
}

function parseLine(line: string, where: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    throw new InvalidAuditRecordError(`${where}: not JSON`);
  }
}

export function parseAuditRecord(value: unknown, where = ''): AuditRecord {
  const fail = (why: string): never => {
    throw new InvalidAuditRecordError(`${where}: not an audit record: ${why}`);
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return fail('not an object');
  const v = value as Record<string, unknown>;
  for (const key of ['at', 'relay', 'channel', 'nodeId', 'classId', 'typeUrl', 'version'] as const)
    if (typeof v[key] !== 'string') fail(`bad ${key}`);
  if (typeof v.kind !== 'string' || !KINDS.has(v.kind)) fail('bad kind');
  if (typeof v.snapshotVersion !== 'number') fail('bad snapshotVersion');
  if (v.digest !== undefined && typeof v.digest !== 'string') fail('bad digest');
  if (v.error !== undefined && typeof v.error !== 'string') fail('bad error');
  if (v.actor !== undefined && typeof v.actor !== 'string') fail('bad actor');
  if (v.reason !== undefined && typeof v.reason !== 'string') fail('bad reason');
  return v as unknown as AuditRecord;
}
