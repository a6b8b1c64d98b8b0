/**
 * `rollback N`: a NEW version made from N's config layer and the CURRENT version's endpoint layer
 * (never N's endpoints: their pod IPs may be gone), recorded with who/when/why and
 * `origin: {kind: 'rollback', from: N}`; then the channel is pinned to it, so the watcher does
 * not roll the config forward again at its next round.
 */
import type { PublishResult } from '../snapshot/store/publish.js';
import type { Pin } from './channel-state.js';
import type { HistoryContext } from './context.js';
import { recordEvent } from './audit.js';
import { VersionNotFoundError } from './errors.js';
import { compileLayers, inputsOf } from './layers.js';
import { setPin } from './pin.js';
import { publishCompiled, resultDigest, resultVersion } from './publish.js';
import { selectVersion, versionLabel } from './select.js';

export interface RebuildResult {
  readonly result: PublishResult;
  readonly version: number;
  readonly digest: string;
  readonly from: string;
  readonly pin: Pin;
}

export async function rollback(ctx: HistoryContext, spec: string): Promise<RebuildResult> {
  return rebuildAndPin(ctx, spec, 'rollback');
}

/** Shared by rollback and promote: config of `spec` + endpoints of the head → publish → pin. */
export async function rebuildAndPin(ctx: HistoryContext, spec: string, kind: 'rollback' | 'promote'): Promise<RebuildResult> {
  const target = await selectVersion(ctx.store, ctx.channel, spec);
  const head = await ctx.store.readChannel(ctx.channel);
  if (!head) throw new VersionNotFoundError(`channel ${ctx.channel} has no versions yet`);
  const current = await selectVersion(ctx.store, ctx.channel, String(head.version));
  const from = versionLabel(target);
  const compiled = await compileLayers(ctx.store, await inputsOf(ctx.store, target), await inputsOf(ctx.store, current), ctx.hasher);
  const result = await publishCompiled(
    ctx.store,
    ctx.channel,
    compiled,
    { origin: { kind, from: target.status === 'candidate' ? from : target.version }, actor: ctx.actor, ...(ctx.reason !== undefined ? { reason: ctx.reason } : {}) },
    ctx.now().toISOString(),
  );
  const version = resultVersion(result);
  const digest = resultDigest(result);
  const p: Pin = { version, actor: ctx.actor, at: ctx.now().toISOString(), ...(ctx.reason !== undefined ? { reason: ctx.reason } : {}) };
  await setPin(ctx, p);
  await recordEvent(ctx, { kind, version, digest, detail: { from, status: result.status } });
  return { result, version, digest, from, pin: p };
}
