/**
 * The audit trail of a channel: publishes (compiles, rollbacks, promotions, pinned endpoint
 * updates, candidates — from the version records themselves, which already say who/when/why),
 * operator actions (pins, unpins, tags, gc runs, rollbacks, promotions — appended to the store's
 * audit log by these operations) and the relays' ACK/NACK records (same log).
 */
import type { AuditRecord, HistoryAuditKind } from '../snapshot/audit.js';
import type { VersionRecord } from '../snapshot/manifest.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { candidatesChannel, type HistoryContext } from './context.js';

export interface HistoryEventInput {
  readonly kind: HistoryAuditKind;
  readonly version?: number;
  readonly digest?: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** Appends one operator action to the audit log. */
export async function recordEvent(ctx: HistoryContext, event: HistoryEventInput): Promise<AuditRecord> {
  const record: AuditRecord = {
    at: ctx.now().toISOString(),
    kind: event.kind,
    relay: '',
    channel: ctx.channel,
    nodeId: '',
    classId: '',
    typeUrl: '',
    version: event.version === undefined ? '' : String(event.version),
    snapshotVersion: event.version ?? 0,
    ...(event.digest !== undefined ? { digest: event.digest } : {}),
    actor: ctx.actor,
    ...(ctx.reason !== undefined ? { reason: ctx.reason } : {}),
    ...(event.detail !== undefined ? { detail: event.detail } : {}),
  };
  await ctx.store.appendAudit([record]);
  return record;
}

export interface TrailEvent {
  readonly at: string;
  /** `publish`/`candidate` from version records; otherwise the audit record's kind. */
  readonly kind: string;
  readonly channel: string;
  readonly version?: number | string;
  readonly digest?: string;
  readonly actor?: string;
  readonly reason?: string;
  readonly origin?: VersionRecord['origin'];
  /** The GitOps revision a publish was compiled from. */
  readonly source?: VersionRecord['source'];
  /** Of a watcher's version: the field managers that wrote the changed objects (provenance), sorted. */
  readonly managers?: readonly string[];
  readonly nodeId?: string;
  readonly classId?: string;
  readonly typeUrl?: string;
  readonly error?: string;
  readonly relay?: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

export interface TrailQuery {
  readonly channel: string;
  /** ISO time. */
  readonly since?: string;
  /** Only this proxy's relay records. */
  readonly proxy?: string;
}

export async function auditTrail(store: SnapshotStore, q: TrailQuery): Promise<TrailEvent[]> {
  const since = q.since === undefined ? -Infinity : Date.parse(q.since);
  const out: TrailEvent[] = [];
  if (q.proxy === undefined) {
    for (const channel of [q.channel, candidatesChannel(q.channel)]) {
      for (const n of await store.listVersions(channel)) {
        const r = await store.getVersion(channel, n);
        if (!r || Date.parse(r.createdAt) < since) continue;
        out.push(publishEvent(r));
      }
    }
  }
  for await (const a of store.readAudit(q.since !== undefined ? { since: q.since } : {})) {
    if (a.channel !== q.channel) continue;
    if (q.proxy !== undefined && a.nodeId !== q.proxy) continue;
    out.push(auditEvent(a));
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

function publishEvent(r: VersionRecord): TrailEvent {
  const managers = [
    ...new Set((r.provenance?.changes ?? []).flatMap((c) => (c.manager !== undefined ? [c.manager] : []))),
  ].sort();
  return {
    at: r.createdAt,
    kind: r.status === 'candidate' ? 'candidate' : 'publish',
    channel: r.status === 'candidate' ? r.channel.replace(/\.candidates$/, '') : r.channel,
    version: r.status === 'candidate' ? `candidate:${r.version}` : r.version,
    digest: r.digest,
    ...(r.actor !== undefined ? { actor: r.actor } : {}),
    ...(r.reason !== undefined ? { reason: r.reason } : {}),
    ...(r.origin !== undefined ? { origin: r.origin } : {}),
    ...(r.source !== undefined ? { source: r.source } : {}),
    ...(managers.length > 0 ? { managers } : {}),
  };
}

function auditEvent(a: AuditRecord): TrailEvent {
  const relayRecord = a.relay !== '';
  return {
    at: a.at,
    kind: a.kind,
    channel: a.channel,
    ...(a.version !== '' ? { version: relayRecord ? a.snapshotVersion : Number(a.version) } : {}),
    ...(a.digest !== undefined ? { digest: a.digest } : {}),
    ...(a.actor !== undefined ? { actor: a.actor } : {}),
    ...(a.reason !== undefined ? { reason: a.reason } : {}),
    ...(relayRecord ? { relay: a.relay, nodeId: a.nodeId, classId: a.classId, typeUrl: a.typeUrl } : {}),
    ...(a.error !== undefined ? { error: a.error } : {}),
    ...(a.detail !== undefined ? { detail: a.detail } : {}),
  };
}

/** `--since`: an ISO time, or a duration back from now (`90s`, `15m`, `2h`, `7d`). */
export function parseSince(text: string, now: Date): string | undefined {
  const m = /^([0-9]+)(s|m|h|d)$/.exec(text);
  if (m)
    return new Date(now.getTime() - Number(m[1]) * { s: 1e3, m: 6e4, h: 3.6e6, d: 8.64e7 }[m[2] as 's']).toISOString();
  const t = Date.parse(text);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}
