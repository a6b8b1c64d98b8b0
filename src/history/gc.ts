/**
 * `gc`: retention for a store. Mark, then sweep:
 *
 * - kept versions, per channel: the newest `keep`, those younger than `keepDays`, tagged ones,
 *   the pinned one and the head; candidates: the newest `keep` and those younger than `keepDays`;
 * - mark from each kept record its snapshot documents (walking the tree), resource objects, packs,
 *   diagnostics document, inputs manifest and input objects;
 * - sweep: version records not kept first (so no record ever names deleted data), then
 *   unmarked documents and objects.
 *
 * A publish running concurrently is protected by a grace period: nothing written or reused after
 * `startedAt - graceMs` is deleted. Writers refresh the time of an object they find and reuse
 * (hasObject/putObject/hasDocument/putDocuments), and the store re-checks that time right before
 * deleting, so an old unreferenced object that a new compile is reusing is not deleted under it.
 * This assumes a publish takes less than the grace period (default 1 h). Object stores refresh a
 * reused key only when it is older than their `freshenAfterMs` (10 min by default: a touch is a
 * copy request), so the grace period must be longer than that; gc refuses a shorter one.
 *
 * The relays' audit records (ACKs, NACKs, refused streams) are kept `auditDays` (default 30):
 * gc deletes the relay audit batches filed on days before that window. Operator actions (pins,
 * tags, rollbacks, gc runs) in the same log are kept.
 *
 * Works on every store that implements the history methods: the folder store, S3 and R2.
 */
import { readStoredInputsIndex } from '../snapshot/stored-inputs/index.js';
import { compositeParts } from '../snapshot/composite.js';
import { readSnapshotContent } from '../snapshot/content.js';
import type { VersionRecord } from '../snapshot/manifest.js';
import { packDigests } from '../snapshot/store/packs.js';
import type { Retention, SnapshotStore } from '../snapshot/store/store.js';
import { recordEvent } from './audit.js';
import { readChannelState } from './channel-state.js';
import { isCandidatesChannel, type HistoryContext } from './context.js';

export interface GcOptions {
  /** Newest versions kept per channel (default 10, at least 1). */
  readonly keep?: number;
  readonly keepDays?: number;
  /** Default 1 h. */
  readonly graceMs?: number;
  readonly dryRun?: boolean;
  /** Relay audit records are kept this many days (default 30); older day batches are deleted. */
  readonly auditDays?: number;
}

export interface GcResult {
  readonly startedAt: string;
  readonly dryRun: boolean;
  readonly keptVersions: Readonly<Record<string, readonly number[]>>;
  readonly deletedVersions: Readonly<Record<string, readonly number[]>>;
  readonly deletedDocuments: number;
  readonly deletedObjects: number;
  /** Unreferenced but inside the grace period. */
  readonly spared: number;
  /** Relay audit batches older than auditDays (0 when the store keeps no audit). */
  readonly deletedAuditBatches: number;
  /** Files a killed writer left half-written (folder store), older than the grace period. */
  readonly deletedTempFiles: number;
}

const DAY = 86_400_000;

/**
 * Why `store` refuses this grace period (`name`: what the caller calls the setting), or undefined:
 * shorter than the interval after which the store refreshes a reused object, an object a publish
 * is reusing could be deleted. The CLI, the API and the Worker's cron all ask here.
 */
export function graceProblem(
  graceMs: number,
  store: Pick<Retention, 'freshenAfterMs'>,
  name = 'the grace period in minutes',
): string | undefined {
  const freshen = store.freshenAfterMs;
  if (freshen <= 0 || graceMs >= freshen) return undefined;
  return `${name} ${graceMs / 60_000} is shorter than the store's freshen interval of ${freshen / 60_000} min (${String(store)} refreshes a reused object only when it is older than that): an object reused meanwhile could be deleted`;
}
/** Relay audit retention by default: 30 days. */
export const GC_AUDIT_DAYS = 30;
/** The default grace period: 1 h. */
export const GC_GRACE_MS = 3_600_000;

export async function gc(ctx: HistoryContext, opts: GcOptions = {}): Promise<GcResult> {
  const { store } = ctx;
  const listChannels = store.listChannels.bind(store);
  const listObjects = store.listObjects.bind(store);
  const listDocuments = store.listDocuments.bind(store);
  const deleteObject = store.deleteObject.bind(store);
  const deleteDocument = store.deleteDocument.bind(store);
  const deleteVersion = store.deleteVersion.bind(store);

  const graceMs = opts.graceMs ?? GC_GRACE_MS;
  const problem = graceProblem(graceMs, store);
  if (problem !== undefined) throw new RangeError(`gc: ${problem}`);
  const started = ctx.now();
  const cutoff = started.getTime() - graceMs;
  const keepN = Math.max(1, opts.keep ?? 10);
  const youngerThan = opts.keepDays === undefined ? Infinity : started.getTime() - opts.keepDays * DAY;

  // Maps: channel names are user input (`__proto__` is a channel name like any other).
  const keptByChannel = new Map<string, number[]>();
  const dropByChannel = new Map<string, number[]>();
  const docs = new Set<string>();
  const objects = new Set<string>();
  for (const channel of await listChannels()) {
    const versions = await store.listVersions(channel);
    const head = await store.readChannel(channel);
    const protectedVersions = new Set<number>(head ? [head.version] : []);
    if (!isCandidatesChannel(channel)) {
      const { state } = await readChannelState(store, channel);
      if (state.pin) protectedVersions.add(state.pin.version);
      for (const v of state.tags.values()) protectedVersions.add(v);
    }
    const kept: number[] = [];
    const drop: number[] = [];
    keptByChannel.set(channel, kept);
    dropByChannel.set(channel, drop);
    for (const [i, n] of versions.entries()) {
      const record = await store.getVersion(channel, n);
      if (!record) continue;
      const keep = i < keepN || protectedVersions.has(n) || Date.parse(record.createdAt) >= youngerThan;
      if (!keep) {
        drop.push(n);
        continue;
      }
      kept.push(n);
      await markRecord(store, record, docs, objects);
    }
  }

  let deletedDocuments = 0;
  let deletedObjects = 0;
  let spared = 0;
  if (!opts.dryRun) for (const [channel, list] of dropByChannel) for (const n of list) await deleteVersion(channel, n);
  for await (const d of listDocuments()) {
    if (docs.has(d.digest)) continue;
    if (d.modifiedAt >= cutoff) spared++;
    else if (opts.dryRun || (await deleteDocument(d.digest, cutoff))) deletedDocuments++;
    else spared++;
  }
  for await (const o of listObjects()) {
    if (objects.has(o.digest)) continue;
    if (o.modifiedAt >= cutoff) spared++;
    else if (opts.dryRun || (await deleteObject(o.digest, cutoff))) deletedObjects++;
    else spared++;
  }
  const keptVersions = Object.fromEntries(keptByChannel);
  const dropVersions = Object.fromEntries(dropByChannel);
  const auditBefore = new Date(started.getTime() - (opts.auditDays ?? GC_AUDIT_DAYS) * DAY).toISOString();
  const deletedAuditBatches = (await store.pruneAudit?.(auditBefore, { dryRun: opts.dryRun ?? false })) ?? 0;
  const deletedTempFiles = opts.dryRun ? 0 : await store.deleteStaleTemp(cutoff);
  const result: GcResult = {
    startedAt: started.toISOString(),
    dryRun: opts.dryRun ?? false,
    keptVersions,
    deletedVersions: dropVersions,
    deletedDocuments,
    deletedObjects,
    spared,
    deletedAuditBatches,
    deletedTempFiles,
  };
  if (!opts.dryRun) {
    await recordEvent(ctx, {
      kind: 'gc',
      detail: {
        keep: keepN,
        ...(opts.keepDays !== undefined ? { keepDays: opts.keepDays } : {}),
        deletedVersions: dropVersions,
        deletedDocuments,
        deletedObjects,
        spared,
        deletedAuditBatches,
      },
    });
  }
  return result;
}

/** Everything a version record reaches: tree documents, resource objects, packs, diagnostics document, stored inputs. */
export async function markRecord(
  store: SnapshotStore,
  record: VersionRecord,
  docs: Set<string>,
  objects: Set<string>,
): Promise<void> {
  if (!docs.has(record.digest)) {
    const content = await readSnapshotContent(async (d) => {
      docs.add(d);
      return store.getDocument(d);
    }, record.digest);
    if (content) {
      // Only route configs are ever stored as composites (composite.ts): their parts are reached through them.
      const routes = new Set<string>();
      for (const group of Object.values(content.groups)) {
        for (const d of Object.values(group.routes)) if (!objects.has(d)) routes.add(d);
        for (const table of Object.values(group)) for (const d of Object.values(table)) objects.add(d);
      }
      for (const d of routes) {
        const bytes = await store.getObject(d).catch(() => null);
        for (const p of (bytes && compositeParts(bytes)) ?? []) objects.add(p);
      }
    }
  }
  for (const p of packDigests(record)) objects.add(p);
  if (record.diagnosticsDigest !== undefined) docs.add(record.diagnosticsDigest);
  if (record.inputs !== undefined && !docs.has(record.inputs) && !objects.has(record.inputs)) {
    // v2 inputs are a document tree, v1 a single manifest object: mark the digest as both.
    docs.add(record.inputs);
    objects.add(record.inputs);
    const index = await readStoredInputsIndex(
      {
        getObject: (d) => store.getObject(d),
        getDocument: async (d) => {
          docs.add(d);
          return store.getDocument(d);
        },
      },
      record.inputs,
    );
    for (const layer of Object.values(index)) for (const d of layer.values()) objects.add(d);
  }
}
