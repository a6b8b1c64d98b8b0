/**
 * Pinning a channel: while pinned, the served config layer stays the pinned version's; the
 * watcher keeps following endpoints on top of it and records config changes as candidates
 * (pinned-round.ts). Unpinning lets the watcher's next round serve the cluster's config again.
 */
import { updateChannelState, withoutPin, type ChannelState, type Pin } from './channel-state.js';
import type { HistoryContext } from './context.js';
import { recordEvent } from './audit.js';
import { HistoryError } from './errors.js';
import { selectVersion } from './select.js';

export async function pin(ctx: HistoryContext, spec = 'latest'): Promise<Pin> {
  const record = await selectVersion(ctx.store, ctx.channel, spec);
  if (record.status === 'candidate') throw new HistoryError(`${spec} is a candidate: promote it instead of pinning it`);
  const p: Pin = { version: record.version, actor: ctx.actor, at: ctx.now().toISOString(), ...(ctx.reason !== undefined ? { reason: ctx.reason } : {}) };
  await setPin(ctx, p);
  await recordEvent(ctx, { kind: 'pin', version: record.version, digest: record.digest });
  return p;
}

export async function unpin(ctx: HistoryContext): Promise<Pin | undefined> {
  let was: Pin | undefined;
  await updateChannelState(ctx.store, ctx.channel, (s) => {
    was = s.pin;
    return s.pin ? withoutPin(s) : undefined;
  });
  if (was) await recordEvent(ctx, { kind: 'unpin', version: was.version });
  return was;
}

export async function setPin(ctx: HistoryContext, p: Pin): Promise<ChannelState> {
  return updateChannelState(ctx.store, ctx.channel, (s) => ({ ...s, pin: p }));
}
