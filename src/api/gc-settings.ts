/**
 * The retention settings a caller outside the CLI gives gc (the HTTP body of POST /api/v1/gc, the
 * Worker's cron vars), turned into the library's options, and the store's own limit on them: a
 * grace period shorter than the interval after which the store refreshes reused objects could
 * delete an object a publish is reusing (src/history/gc.ts refuses it too, with a RangeError).
 */
import { GC_GRACE_MS, type GcOptions } from '../history/gc.js';

/** The library's default grace period, in the minutes callers here speak in. */
export const GC_GRACE_MINUTES_DEFAULT = GC_GRACE_MS / 60_000;

export interface GcSettings {
  /** Newest versions kept per channel (the library's default, 10, when absent). */
  readonly keep?: number;
  /** Versions younger than this many days are kept too. */
  readonly keepDays?: number;
  readonly graceMinutes: number;
  readonly dryRun: boolean;
}

export const gcOptions = (s: GcSettings): GcOptions => ({
  ...(s.keep !== undefined ? { keep: s.keep } : {}),
  ...(s.keepDays !== undefined ? { keepDays: s.keepDays } : {}),
  graceMs: s.graceMinutes * 60_000,
  dryRun: s.dryRun,
});
