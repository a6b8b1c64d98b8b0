/**
 * Retries for remote store calls: timeouts, 5xx and throttling (429, 503 SlowDown) are retried
 * with exponential backoff and full jitter, a bounded number of times; anything else (a 4xx, a
 * digest mismatch, a lost conditional write) is the caller's to handle and is thrown at once.
 * Pure: the sleep and the random source are injectable, so tests run without waiting.
 */
import { backoff } from '../../backoff.js';
import { MeshsnapError } from '../../errors.js';

export interface RetryOptions {
  /** Attempts in all, the first included (default 5). */
  readonly attempts?: number;
  /** Backoff before the second attempt, doubled after each failure (default 100 ms). */
  readonly baseMs?: number;
  /** Upper bound of one backoff (default 5 s). */
  readonly maxMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** In [0, 1); default Math.random. */
  readonly random?: () => number;
  /** Told about each failure that will be retried (logging, tests). */
  readonly onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/** An error a backend classified as worth another attempt. */
export class TransientStoreError extends Error {
  override readonly name = 'TransientStoreError';
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Thrown when every attempt failed: carries the last failure. */
export class RetriesExhaustedError extends MeshsnapError {
  override readonly name = 'RetriesExhaustedError';
  constructor(
    readonly attempts: number,
    readonly last: unknown,
  ) {
    super('unavailable', `store call failed ${attempts} times: ${(last as Error)?.message ?? String(last)}`, {
      cause: last,
    });
  }
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Full jitter (AWS's recommendation): a uniform delay in [0, min(max, base·2^n)). */
export function backoffDelay(attempt: number, opts: RetryOptions = {}, random: () => number = Math.random): number {
  return backoff(attempt, { baseMs: opts.baseMs ?? 100, maxMs: opts.maxMs ?? 5000, jitter: 'full' }, random);
}

export async function withRetry<T>(
  op: () => Promise<T>,
  isTransient: (e: unknown) => boolean,
  opts: RetryOptions = {},
): Promise<T> {
  const attempts = Math.max(1, opts.attempts ?? 5);
  const sleep = opts.sleep ?? defaultSleep;
  const random = opts.random ?? Math.random;
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (e) {
      if (!isTransient(e)) throw e;
      if (attempt >= attempts) throw new RetriesExhaustedError(attempt, e);
      const delay = backoffDelay(attempt, opts, random);
      opts.onRetry?.(e, attempt, delay);
      await sleep(delay);
    }
  }
}

/** HTTP statuses worth retrying: throttling and server-side failures. */
export const isRetryableStatus = (status: number | undefined): boolean =>
  status === 429 || (status !== undefined && status >= 500 && status <= 599);
