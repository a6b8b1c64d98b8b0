/**
 * The relay's audit log: every ACK and NACK (plus refused streams) becomes an AuditRecord, buffered
 * and appended to the store in batches (every `flushMs`, or at once when `maxBatch` records wait),
 * each batch one immutable JSON-lines object. Batching keeps the store cheap under a 10k-proxy
 * switch.
 *
 * Bounded against hostile proxies: a record is at most `maxRecordBytes` as JSON (the node id and
 * error are cut to fit, saying so, or the record is dropped and counted); a failed batch is split
 * in halves and retried at once, and a record the store refuses while it takes the others is
 * dropped and counted, so one bad record cannot hold back the others. While the store is down the
 * buffer is capped at `maxBuffered` (the oldest go first).
 */
import type { AuditRecord } from '../snapshot/audit.js';
import type { AuditWriter } from '../snapshot/store/store.js';
import { clip, forLog } from './client-text.js';
import { errorMessage, silentLogger, type RelayLogger } from './log.js';
import type { XdsEvent } from './types.js';

export interface AuditLogOptions {
  readonly store: AuditWriter;
  readonly relayId: string;
  readonly channel: string;
  /** Default 1000 ms. */
  readonly flushMs?: number;
  /** Records per stored batch. Default 500. */
  readonly maxBatch?: number;
  /** Records held while the store is failing; beyond it the oldest are dropped (and counted). Default 100 000. */
  readonly maxBuffered?: number;
  /** Largest record as JSON (characters). Default 16 384. */
  readonly maxRecordBytes?: number;
  /** Flushes a single record may fail before it is dropped. Default 3. */
  readonly maxAttempts?: number;
  /** Snapshot digest of a channel version, when the relay knows it. */
  readonly digestOf?: (snapshotVersion: number) => string | undefined;
  readonly onError?: (error: unknown) => void;
  readonly onDropped?: (n: number) => void;
  readonly log?: RelayLogger;
}

export class AuditLog {
  private buffer: AuditRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private closed = false;
  private readonly flushMs: number;
  private readonly maxBatch: number;
  private readonly maxBuffered: number;
  private readonly maxRecordBytes: number;
  private readonly maxAttempts: number;
  /** Failed flushes in a row of the record at the head of the buffer. */
  private headFailures = 0;
  /** While set, a full batch waits for it (holdUntil). */
  private held: Promise<void> | undefined;
  private readonly log: RelayLogger;
  /** Records appended so far (tests, status). */
  written = 0;

  constructor(private readonly opts: AuditLogOptions) {
    this.flushMs = opts.flushMs ?? 1000;
    this.maxBatch = opts.maxBatch ?? 500;
    this.maxBuffered = opts.maxBuffered ?? 100_000;
    this.maxRecordBytes = opts.maxRecordBytes ?? 16_384;
    this.maxAttempts = opts.maxAttempts ?? 3;
    this.log = opts.log ?? silentLogger;
  }

  get pending(): number {
    return this.buffer.length;
  }

  /** Takes an xDS server event; only ACKs, NACKs and refused streams are audited. */
  observe(e: XdsEvent): void {
    if (this.closed) return;
    if (e.kind === 'ack' || e.kind === 'nack') {
      const digest = this.opts.digestOf?.(e.snapshotVersion);
      this.add({
        at: new Date(e.at).toISOString(),
        kind: e.kind,
        relay: this.opts.relayId,
        channel: this.opts.channel,
        nodeId: e.nodeId,
        classId: e.classId,
        typeUrl: e.typeUrl,
        version: e.version,
        snapshotVersion: e.snapshotVersion,
        ...(digest !== undefined ? { digest } : {}),
        ...(e.kind === 'nack' ? { error: e.error } : {}),
        ...identityDetail(e.identity),
      });
    } else if (e.kind === 'rejected') {
      this.add({
        at: new Date(e.at).toISOString(),
        kind: 'rejected',
        relay: this.opts.relayId,
        channel: this.opts.channel,
        nodeId: e.nodeId,
        classId: '',
        typeUrl: '',
        version: '',
        snapshotVersion: 0,
        error: e.reason,
        ...identityDetail(e.identity),
      });
    }
  }

  add(record: AuditRecord): void {
    const bounded = this.bounded(record);
    if (!bounded) {
      this.opts.onDropped?.(1);
      this.log.log('warn', 'audit.record_dropped', {
        kind: record.kind,
        node: forLog(record.nodeId),
        reason: `larger than ${this.maxRecordBytes} bytes`,
      });
      return;
    }
    this.buffer.push(bounded);
    if (this.buffer.length > this.maxBuffered) {
      const drop = this.buffer.length - this.maxBuffered;
      this.buffer.splice(0, drop);
      this.headFailures = 0;
      this.opts.onDropped?.(drop);
    }
    if (this.buffer.length >= this.maxBatch && !this.held) void this.flush();
    else this.arm();
  }

  /**
   * Holds back the at-once flush of a full batch until `until` settles: a snapshot switch audits
   * one ACK per proxy while it is still writing to the others, and the records' JSON and file
   * write would take turns with those writes. Nothing is lost (the buffer keeps its bound; the
   * timer still flushes), it is written when the switch is.
   */
  holdUntil(until: Promise<unknown>): void {
    const hold = until.then(
      () => undefined,
      () => undefined,
    );
    this.held = hold;
    void hold.then(() => {
      if (this.held !== hold) return;
      this.held = undefined;
      if (this.buffer.length >= this.maxBatch) void this.flush();
    });
  }

  /** Appends everything buffered (in batches of maxBatch); resolves when done or failed (never rejects). */
  flush(): Promise<void> {
    if (this.flushing)
      return this.flushing.then(() => (this.buffer.length >= this.maxBatch ? this.flush() : undefined));
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const run = this.drain().finally(() => {
      this.flushing = undefined;
      if (this.buffer.length > 0) this.arm();
    });
    this.flushing = run;
    return run;
  }

  /** Stops the timer and flushes what is left (one more try on failure). */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    if (this.buffer.length > 0) await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.buffer.length > 0) this.log.log('error', 'audit.lost', { records: this.buffer.length });
  }

  /** The record within maxRecordBytes: as is, with its client text cut to fit, or undefined. */
  private bounded(record: AuditRecord): AuditRecord | undefined {
    const size = (r: AuditRecord): number => JSON.stringify(r).length;
    if (surelyWithin(record, this.maxRecordBytes) || size(record) <= this.maxRecordBytes) return record;
    const room = Math.max(64, Math.floor(this.maxRecordBytes / 4));
    const cut = {
      ...record,
      nodeId: clip(record.nodeId, room).text,
      ...(record.error !== undefined ? { error: clip(record.error, room).text } : {}),
    };
    return size(cut) <= this.maxRecordBytes ? cut : undefined;
  }

  /**
   * Appends batches of up to maxBatch. A failed batch is halved and retried at once, down to one
   * record. A single failing record is set aside while the rest is tried: if the store takes the
   * rest, that record is what it refuses, and it is dropped (counted); if the store refuses the rest
   * too, it is down: everything stays for the next flush (a record alone in the buffer is dropped
   * after maxAttempts flushes).
   */
  private async drain(): Promise<void> {
    let size = this.maxBatch;
    let start = 0; // records before `start` are set aside: they failed alone
    while (start < this.buffer.length) {
      const batch = this.buffer.slice(start, start + size);
      try {
        await this.opts.store.appendAudit(batch);
        this.buffer.splice(start, batch.length);
        this.written += batch.length;
        if (start > 0) this.dropHead(start, 'refused by the store while later records were written');
        start = 0;
        size = this.maxBatch;
        this.headFailures = 0;
      } catch (e) {
        this.opts.onError?.(e);
        if (batch.length > 1) {
          size = Math.ceil(batch.length / 2);
          continue;
        }
        if (start === 0 && this.buffer.length > 1) {
          start = 1;
          size = this.maxBatch;
          continue;
        }
        this.headFailures++;
        if (start === 0 && this.headFailures >= this.maxAttempts) {
          this.dropHead(1, `failed ${this.maxAttempts} flushes: ${errorMessage(e)}`);
          continue;
        }
        this.log.log('warn', 'audit.append_failed', {
          records: batch.length,
          pending: this.buffer.length,
          error: forLog(errorMessage(e)),
        });
        return;
      }
    }
  }

  private dropHead(n: number, why: string): void {
    const dropped = this.buffer.splice(0, n);
    this.headFailures = 0;
    this.opts.onDropped?.(n);
    this.log.log('error', 'audit.records_dropped', {
      records: n,
      kind: dropped[0]?.kind,
      node: forLog(dropped[0]?.nodeId ?? ''),
      reason: forLog(why),
    });
  }

  private arm(): void {
    if (this.timer || this.flushing || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushMs);
  }
}

/** JSON writes a character as at most 6 (a \u escape); keys, quotes and numbers take well under 512. */
const JSON_OVERHEAD = 512;

/**
 * True when a record without `detail` cannot be over `max` as JSON, judged from its string lengths:
 * a switch audits one ACK per proxy, and most need no JSON.stringify to know they fit.
 */
function surelyWithin(r: AuditRecord, max: number): boolean {
  if (r.detail !== undefined) return false;
  const chars =
    r.at.length +
    r.kind.length +
    r.relay.length +
    r.channel.length +
    r.nodeId.length +
    r.classId.length +
    r.typeUrl.length +
    r.version.length +
    (r.digest?.length ?? 0) +
    (r.error?.length ?? 0) +
    (r.actor?.length ?? 0) +
    (r.reason?.length ?? 0);
  return JSON_OVERHEAD + 6 * chars <= max;
}

/** The authenticated identity beside the node id the proxy claims (absent for anonymous streams). */
const identityDetail = (identity: string | undefined): { detail?: { identity: string } } =>
  identity !== undefined ? { detail: { identity } } : {};
