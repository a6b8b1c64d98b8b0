/**
 * `rollback N`: a NEW version made from N's config layer and the CURRENT version's endpoint layer
 * (never N's endpoints: their pod IPs may be gone), recorded with who/when/why and
 * `origin: {kind: 'rollback', from: N}`; then the channel is pinned to it, so the watcher does
 * not roll the config forward again at its next round.
 *
 * Because the endpoints are the current ones, a rollback after an empty or broken version could
 * serve clusters without endpoints: a result that leaves empty a cluster that had endpoints in the
 * target version is refused (naming its services) unless `force`.
 */
import type { VersionRecord } from '../snapshot/manifest.js';
import type { PublishResult } from '../snapshot/store/publish.js';
import type { Pin } from './channel-state.js';
import type { HistoryContext } from './context.js';
import { recordEvent } from './audit.js';
import { HistoryError, VersionNotFoundError } from './errors.js';
import { emptiedClusters } from './guard.js';
import type { Compiled } from './layers.js';
import { summarize } from './mesh-summary.js';
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

export interface RebuildOptions {
  /** Serve the result even when it leaves clusters without the endpoints they had in the target. */
  readonly force?: boolean;
}

/** The result would serve clusters with no endpoints that had some in the target (API 409). */
export class EmptyEndpointsError extends HistoryError {
  override readonly name = 'EmptyEndpointsError';
}

export async function rollback(ctx: HistoryContext, spec: string, opts: RebuildOptions = {}): Promise<RebuildResult> {
  return rebuildAndPin(ctx, spec, 'rollback', opts);
}

/** Shared by rollback and promote: config of `spec` + endpoints of the head → publish → pin. */
export async function rebuildAndPin(
  ctx: HistoryContext,
  spec: string,
  kind: 'rollback' | 'promote',
  opts: RebuildOptions = {},
): Promise<RebuildResult> {
  const target = await selectVersion(ctx.store, ctx.channel, spec);
  const head = await ctx.store.readChannel(ctx.channel);
  if (!head) throw new VersionNotFoundError(`channel ${ctx.channel} has no versions yet`);
  const current = await selectVersion(ctx.store, ctx.channel, String(head.version));
  const from = versionLabel(target);
  const compiled = await compileLayers(
    ctx.store,
    await inputsOf(ctx.store, target),
    await inputsOf(ctx.store, current),
    ctx.hasher,
  );
  if (!opts.force) await refuseEmptiedEndpoints(ctx, target, from, compiled, kind);
  const result = await publishCompiled(
    ctx.store,
    ctx.channel,
    compiled,
    {
      origin: { kind, from: target.status === 'candidate' ? from : target.version },
      actor: ctx.actor,
      ...(ctx.reason !== undefined ? { reason: ctx.reason } : {}),
    },
    ctx.now().toISOString(),
  );
  const version = resultVersion(result);
  const digest = resultDigest(result);
  const p: Pin = {
    version,
    actor: ctx.actor,
    at: ctx.now().toISOString(),
    ...(ctx.reason !== undefined ? { reason: ctx.reason } : {}),
  };
  await setPin(ctx, p);
  await recordEvent(ctx, { kind, version, digest, detail: { from, status: result.status } });
  return { result, version, digest, from, pin: p };
}

async function refuseEmptiedEndpoints(
  ctx: HistoryContext,
  target: VersionRecord,
  from: string,
  compiled: Compiled,
  kind: string,
): Promise<void> {
  const content = await ctx.store.getSnapshot(target.digest);
  if (!content) return; // the target's snapshot was collected: nothing to compare with
  const read = (d: string) => ctx.store.getObject(d);
  const before = await summarize(content, read);
  const after = await summarize(compiled.snapshot.content, async (d) => compiled.snapshot.objects.get(d) ?? read(d));
  const emptied = emptiedClusters(before, after);
  if (emptied.clusters.length === 0) return;
  const shown =
    emptied.services.slice(0, 10).join(', ') +
    (emptied.services.length > 10 ? ` and ${emptied.services.length - 10} more` : '');
  throw new EmptyEndpointsError(
    `${kind} of ${from} refused: with the current endpoints, ${emptied.clusters.length} cluster(s) that had endpoints in ${from} would have none (services: ${shown}). Restore the endpoints first, or pass --force (API: force: true) to serve it anyway`,
  );
}
