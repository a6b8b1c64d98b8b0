/**
 * The Worker's cron trigger (wrangler.toml `[triggers] crons`): gc over the R2 store with the
 * settings of functions/shared/gc-env.ts, through the same history port as POST /api/v1/gc, as
 * actor `cron` with the cron expression in the reason (the audit record is filed under
 * MESHSNAP_CHANNEL). One JSON log line per run: `gc.done` with the GcResult, or `gc.failed` with
 * why — a bad var or a grace period the store refuses fails before anything is deleted. A failure
 * is thrown again after the line, so the run shows as failed in the Worker's cron events.
 */
import { gcOptions } from '../../src/api/gc-settings.js';
import { graceProblem } from '../../src/history/gc.js';
import { defaultHistory } from '../../src/api/history-binding.js';
import type { HistoryOps } from '../../src/api/history-port.js';
import type { GcResult } from '../../src/history/gc.js';
import { createLogger, errorMessage, type Logger } from '../../src/log.js';
import type { SnapshotStore } from '../../src/snapshot/store/store.js';
import { channelFromEnv, ConfigError, type EnvLike } from '../shared/env.js';
import { gcSettingsFromEnv } from '../shared/gc-env.js';

/** The part of workerd's ScheduledController used here. */
export interface ScheduledEventLike {
  readonly cron: string;
}

export interface CronGcDeps {
  readonly env: EnvLike;
  /** Called once the vars are read, so a bad store var is reported like a bad gc var. */
  readonly store: () => SnapshotStore;
  readonly history?: HistoryOps;
  readonly now?: () => Date;
  /** Default: src/log.ts's logger (JSON lines on the Worker's console). */
  readonly log?: Logger;
}

export async function cronGc(event: ScheduledEventLike, deps: CronGcDeps): Promise<GcResult> {
  const log = deps.log ?? createLogger();
  const cron = event.cron;
  try {
    const settings = gcSettingsFromEnv(deps.env);
    const store = deps.store();
    const problem = graceProblem(settings.graceMinutes * 60_000, store, 'MESHSNAP_GC_GRACE_MINUTES');
    if (problem !== undefined) throw new ConfigError(problem);
    const op = { actor: 'cron', at: (deps.now ?? (() => new Date()))(), reason: `scheduled gc (cron "${cron}")` };
    const result = await (deps.history ?? defaultHistory).gc(store, channelFromEnv(deps.env), gcOptions(settings), op);
    log.info('gc.done', { cron, ...result });
    return result;
  } catch (err) {
    log.error('gc.failed', { cron, error: errorMessage(err) });
    throw err;
  }
}
