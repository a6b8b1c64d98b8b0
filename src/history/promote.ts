/**
 * `promote VERSION` (usually `candidate:N`): serves a candidate. Like a rollback it is built from
 * the candidate's config layer and the CURRENT endpoints (the candidate's own endpoints may be
 * stale by now); the channel stays pinned, now to the promoted version, so later config changes
 * keep becoming candidates until `unpin`.
 */
import type { HistoryContext } from './context.js';
import { rebuildAndPin, type RebuildOptions, type RebuildResult } from './rollback.js';

export async function promote(ctx: HistoryContext, spec: string, opts: RebuildOptions = {}): Promise<RebuildResult> {
  return rebuildAndPin(ctx, spec, 'promote', opts);
}
