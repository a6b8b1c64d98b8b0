/**
 * Pinning a channel: while pinned, the served config layer stays the pinned version's; the
 * watcher keeps following endpoints on top of it and records config changes as candidates
 * (pinned-round.ts). Unpinning lets the watcher's next round serve the cluster's config again.
 *
 * `pin` keeps what is served: `pin` (no version) pins the served version; `pin N` is accepted only
 * when N's config is the served one, and otherwise refused with a pointer to `rollback N` (which
 * serves N's config at once and pins it), so a pin never silently changes what is served later.
 * Moving an existing pin to another version needs `force`.
 */
import { updateChannelState, withoutPin, type ChannelState, type Pin } from './channel-state.js';
import type { HistoryContext } from './context.js';
import { recordEvent } from './audit.js';
import { HistoryError, VersionNotFoundError } from './errors.js';
import { inputsOf, sameLayer } from './layers.js';
import { selectVersion } from './select.js';

/** The channel is pinned to another version already (API 409). */
export class AlreadyPinnedError extends HistoryError {
  override readonly name = 'AlreadyPinnedError';
}

export interface PinOptions {
  /** Move an existing pin to this version. */
  readonly force?: boolean;
}

export async function pin(ctx: HistoryContext, spec = 'latest', opts: PinOptions = {}): Promise<Pin> {
  const head = await ctx.store.readChannel(ctx.channel);
  if (!head) throw new VersionNotFoundError(`channel ${ctx.channel} has no versions yet`);
  const record = await selectVersion(ctx.store, ctx.channel, spec);
  if (record.status === 'candidate') throw new HistoryError(`${spec} is a candidate: promote it instead of pinning it`);
  if (record.version !== head.version) {
    const served = await selectVersion(ctx.store, ctx.channel, String(head.version));
    if (!sameLayer(await inputsOf(ctx.store, record), await inputsOf(ctx.store, served), 'config')) {
      throw new HistoryError(
        `version ${record.version}'s config is not the one served (version ${head.version}): pin keeps what is served. To serve version ${record.version}'s config now, run \`meshsnap rollback ${record.version}\` (it pins the channel)`,
      );
    }
  }
  const p: Pin = {
    version: record.version,
    actor: ctx.actor,
    at: ctx.now().toISOString(),
    ...(ctx.reason !== undefined ? { reason: ctx.reason } : {}),
  };
  await updateChannelState(ctx.store, ctx.channel, (s) => {
    if (s.pin && s.pin.version !== p.version && !opts.force) {
      throw new AlreadyPinnedError(
        `channel ${ctx.channel} is already pinned to version ${s.pin.version} (by ${s.pin.actor} at ${s.pin.at}): pass --force (API: force: true) to move the pin to ${p.version}, or unpin first`,
      );
    }
    return { ...s, pin: p };
  });
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
