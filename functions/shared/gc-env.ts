/**
 * Retention settings from a function's environment (Worker vars). Pure, like env.ts.
 *
 *   MESHSNAP_GC_KEEP           newest versions kept per channel (default 10)
 *   MESHSNAP_GC_KEEP_DAYS      optional: versions younger than this many days are kept too
 *   MESHSNAP_GC_GRACE_MINUTES  nothing written or reused this recently is deleted (default 60)
 *   MESHSNAP_FRESHEN_MINUTES   the store's freshen interval: a reused object older than this gets
 *                              its time refreshed (default 10; the grace period may not be shorter)
 *
 * A var may be a string ("10") or, from wrangler.toml, a number (10). A bad value is a ConfigError.
 */
import { GC_GRACE_MINUTES_DEFAULT, type GcSettings } from '../../src/api/gc-settings.js';
import { ConfigError, type EnvLike } from './env.js';

export const GC_KEEP_DEFAULT = 10;

/** A number var ≥ `min` (whole when `integer`), or undefined when absent or empty. */
function envNumber(env: EnvLike, name: string, min: number, integer: boolean): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === null || raw === '') return undefined;
  const text = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : undefined;
  const pattern = integer ? /^[0-9]+$/ : /^[0-9]+(\.[0-9]+)?$/;
  const n = text !== undefined && pattern.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(n) || n < min)
    throw new ConfigError(
      `${name} must be ${integer ? 'a whole number' : 'a number'} ≥ ${min}, not ${JSON.stringify(raw)}`,
    );
  return n;
}

/** The cron's gc settings (never a dry run). */
export function gcSettingsFromEnv(env: EnvLike): GcSettings {
  const keepDays = envNumber(env, 'MESHSNAP_GC_KEEP_DAYS', 0, false);
  return {
    keep: envNumber(env, 'MESHSNAP_GC_KEEP', 1, true) ?? GC_KEEP_DEFAULT,
    ...(keepDays !== undefined ? { keepDays } : {}),
    graceMinutes: envNumber(env, 'MESHSNAP_GC_GRACE_MINUTES', 0, false) ?? GC_GRACE_MINUTES_DEFAULT,
    dryRun: false,
  };
}

/** ObjectStoreOptions.freshenAfterMs from MESHSNAP_FRESHEN_MINUTES, or undefined (the store's default, 10 min). */
export function freshenAfterMsFromEnv(env: EnvLike): number | undefined {
  const minutes = envNumber(env, 'MESHSNAP_FRESHEN_MINUTES', 0, false);
  return minutes === undefined ? undefined : minutes * 60_000;
}
