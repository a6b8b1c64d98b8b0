/**
 * Small helpers the stores share: bounded concurrency for many small I/O calls, and the digest
 * check every put does before writing anything. Pure (no node:*): object stores run in workerd.
 */
import { digestOf, type Hasher } from '../digest.js';
import { DigestMismatchError } from './store.js';

/**
 * Calls `fn` on every item, at most `limit` calls in flight (a pool of workers taking the next
 * item), in item order. Resolves when all are done; the first failure rejects.
 */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}

/** Refuses the whole batch (DigestMismatchError) before anything is written when any bytes do not hash to their digest. */
export function assertDigests(entries: Iterable<readonly [string, Uint8Array]>, hasher: Hasher): void {
  for (const [digest, bytes] of entries) {
    const actual = digestOf(bytes, hasher);
    if (actual !== digest) throw new DigestMismatchError(digest, actual);
  }
}
