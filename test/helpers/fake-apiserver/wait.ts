/** Waits for a condition without sleeping longer than needed: polls every few ms, bounded in time. */
import { setTimeout as sleep } from 'node:timers/promises';

export async function until(cond: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}
