/**
 * The relay's audit log: every ACK and NACK (plus refused streams) becomes an AuditRecord, buffered
 * and appended to the store in batches (every `flushMs`, or at once when `maxBatch` records wait),
 * each batch one immutable JSON-lines object. Batching keeps the store cheap under a 10k-proxy
 * switch; a failed append keeps its records and is retried at the next flush.
 */
import type { AuditRecord } from '../snapshot/audit.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { errorMessage, silentLogger, type RelayLogger } from './log.js';
import type { XdsEvent } from './types.js';

export interface AuditLogOptions {
  readonly store: Pick<SnapshotStore, 'appendAudit'>;
  readonly relayId: string;
  readonly channel: string;
  /** Default 1000 ms. */
  readonly flushMs?: number;
  /** Records per stored batch. Default 500. */
  readonly maxBatch?: number;
  /** Records held while the store is failing; beyond it the oldest are dropped (and counted). Default 100 000. */
  readonly maxBuffered?: number;
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
  private readonly log: RelayLogger;
  /** Records appended so far (tests, status). */
  written = 0;

  constructor(private readonly opts: AuditLogOptions) {
    this.flushMs = opts.flushMs ?? 1000;
    this.maxBatch = opts.maxBatch ?? 500;
    this.maxBuffered = opts.maxBuffered ?? 100_000;
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
      });
    } else if (e.kind === 'rejected') {
      this.add({ at: new Date(e.at).toISOString(), kind: 'rejected', relay: this.opts.relayId, channel: this.opts.channel, nodeId: e.nodeId, classId: '', typeUrl: '', version: '', snapshotVersion: 0, error: e.reason });
    }
  }

  add(record: AuditRecord): void {
    this.buffer.push(record);
    if (this.buffer.length > this.maxBuffered) {
      const drop = this.buffer.length - this.maxBuffered;
      this.buffer.splice(0, drop);
      this.opts.onDropped?.(drop);
    }
    if (this.buffer.length >= this.maxBatch) void this.flush();
    else this.arm();
  }

  /** Appends everything buffered (in batches of maxBatch); resolves when done or failed (never rejects). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.buffer.length >= this.maxBatch ? this.flush() : undefined));
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

  private async drain(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.maxBatch);
      try {
        await this.opts.store.appendAudit(batch);
        this.written += batch.length;
      } catch (e) {
        this.buffer.unshift(...batch); // keep them, in order, for the next flush
        this.opts.onError?.(e);
        this.log.log('warn', 'audit.append_failed', { records: batch.length, pending: this.buffer.length, error: errorMessage(e) });
        return;
      }
    }
  }

  private arm(): void {
    if (this.timer || this.flushing || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushMs);
  }
}
