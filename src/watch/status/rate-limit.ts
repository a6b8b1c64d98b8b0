/**
 * A token bucket (as client-go's QPS/burst): `burst` requests at once, then `qps` per second.
 * Pure arithmetic over the times it is given.
 */
export interface TokenBucket {
  readonly qps: number;
  readonly burst: number;
  /** Tokens available at `at` (ms). */
  tokens: number;
  at: number;
}

export function tokenBucket(qps: number, burst: number, now: number): TokenBucket {
  if (!(qps > 0) || !(burst >= 1)) throw new RangeError('a token bucket needs qps > 0 and burst >= 1');
  return { qps, burst, tokens: burst, at: now };
}

/** Takes one token: 0 when one was available now, else how long to wait (ms) before asking again. */
export function takeToken(b: TokenBucket, now: number): number {
  const refilled = Math.min(b.burst, b.tokens + (Math.max(0, now - b.at) * b.qps) / 1000);
  b.at = Math.max(b.at, now);
  b.tokens = refilled;
  if (refilled >= 1) {
    b.tokens = refilled - 1;
    return 0;
  }
  return Math.ceil(((1 - refilled) * 1000) / b.qps);
}
