/**
 * Reading the audit log as every store does: batch keys of the days that may hold records since
 * `since` (a batch is filed under the day of its first record and may run past midnight, so the
 * day before too), oldest first, each batch's records filtered by time. Stores supply the I/O.
 */
import { parseAuditBatch, type AuditRecord } from '../audit.js';

export interface AuditBatchSource {
  /** Keys (layout.ts auditKey) of the batches filed on `fromDay` or later (every batch for ''), in any order. */
  keys(fromDay: string): Promise<string[]>;
  /** A batch's text and where it is (for messages), or null when it vanished meanwhile. */
  read(key: string): Promise<{ readonly text: string; readonly where: string } | null>;
}

export async function* readAuditBatches(source: AuditBatchSource, opts: { readonly since?: string } = {}): AsyncIterable<AuditRecord> {
  const since = opts.since === undefined ? undefined : Date.parse(opts.since);
  if (since !== undefined && Number.isNaN(since)) throw new RangeError(`readAudit: since is not a time: ${JSON.stringify(opts.since)}`);
  const fromDay = since === undefined ? '' : new Date(since - 86_400_000).toISOString().slice(0, 10);
  for (const key of (await source.keys(fromDay)).sort()) {
    const batch = await source.read(key);
    if (!batch) continue;
    for (const record of parseAuditBatch(batch.text, batch.where)) {
      if (since === undefined || Date.parse(record.at) >= since) yield record;
    }
  }
}
