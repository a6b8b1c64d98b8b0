/**
 * Exponential backoff with a cap and optional jitter: the one formula behind every retry (store
 * calls, informer restarts, the relay's head polling). A leaf module: any layer may import it.
 * Pure; the random source is injectable so tests get exact delays.
 */

export interface BackoffPolicy {
  /** The delay after the first failure; doubled after each further one. */
  readonly baseMs: number;
  /** No delay exceeds this. */
  readonly maxMs: number;
  /**
   * `full`: a uniform whole number of ms in [0, delay) (AWS's "full jitter", so that many clients
   * failing together do not retry together); `none`: the delay itself.
   */
  readonly jitter: 'full' | 'none';
}

/** Doublings beyond this change nothing for any sane cap, and keep `baseMs · 2^n` finite. */
const MAX_DOUBLINGS = 30;

/** The delay before retry `failures` (1 = after the first failure): min(maxMs, baseMs · 2^(failures − 1)), jittered. */
export function backoff(failures: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const doublings = Math.min(Math.max(failures - 1, 0), MAX_DOUBLINGS);
  const delay = Math.min(policy.maxMs, policy.baseMs * 2 ** doublings);
  return policy.jitter === 'full' ? Math.floor(random() * delay) : delay;
}
