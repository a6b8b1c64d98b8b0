/**
 * Publishing through the publish guard (guard.ts), for every path that publishes a compile: the
 * CLI, the API (and so the Worker and the Lambda), the watcher. A refused snapshot is recorded as
 * a candidate on `<channel>.candidates` (an operator can diff it and `promote candidate:N` on
 * purpose) and an audit event `guard` says why; the head does not move.
 */
import type { BuiltSnapshot } from '../snapshot/build.js';
import type { ObjectReader } from '../snapshot/composite.js';
import type { PackCache } from '../snapshot/store/packs.js';
import type { PublishResult } from '../snapshot/store/publish.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { recordEvent } from './audit.js';
import { readChannelState, updateChannelState } from './channel-state.js';
import { candidatesChannel, type HistoryContext } from './context.js';
import { HistoryError } from './errors.js';
import { checkShrink, DEFAULT_GUARD_POLICY, type GuardPolicy, type GuardVerdict } from './guard.js';
import type { Compiled } from './layers.js';
import { MeshIndex } from './mesh-index.js';
import { processEndpointCounter, summarize, type MeshSummary } from './mesh-summary.js';
import { publishCompiled, resultVersion, type RecordFields } from './publish.js';

export interface GuardOptions {
  /** `--allow-shrink` / `allowShrink: true`: publish even what the guard would refuse. */
  readonly allowShrink?: boolean;
  /** The publisher's pack cache (publishCompiled). */
  readonly packCache?: PackCache;
}

/** A refused publish: nothing served changed; the snapshot is candidate `candidate`. */
export interface Refused {
  readonly status: 'refused';
  readonly candidate: number;
  readonly verdict: GuardVerdict;
  /** The served version the snapshot was compared with. */
  readonly served: number;
}

/** The error the API maps to 409 `publish_guard`. */
export class PublishRefusedError extends HistoryError {
  override readonly name = 'PublishRefusedError';
  constructor(
    channel: string,
    readonly refused: Refused,
  ) {
    super(refusalMessage(channel, refused), 'publish_guard');
  }
}

export function refusalMessage(channel: string, r: Refused): string {
  return `publish guard: not served on channel ${channel} (serving version ${r.served}): ${r.verdict.problems.join('; ')}. Recorded as candidate:${r.candidate}; serve it on purpose with \`meshsnap promote candidate:${r.candidate}\` or compile again with --allow-shrink (API: allowShrink: true)`;
}

export interface GuardCheck {
  readonly verdict: GuardVerdict;
  /** The served version compared with; null before the first version. */
  readonly served: number | null;
  /** What the new snapshot serves (its endpoint count goes on the version record). */
  readonly next: MeshSummary;
}

/**
 * Compares snapshots with the served head; keeps decoded endpoint counts, the last summary and an
 * index of the last snapshot checked, so that a delta's summary costs what it changed (a watcher keeps one).
 */
export class PublishGuard {
  private readonly counter = processEndpointCounter;
  private last: { readonly digest: string; readonly summary: MeshSummary } | undefined;
  private index: MeshIndex | undefined;

  /** Undefined when the channel serves this very snapshot; `served` null for a channel's first version (exempt). */
  async check(store: SnapshotStore, channel: string, snapshot: BuiltSnapshot): Promise<GuardCheck | undefined> {
    const head = await store.readChannel(channel);
    if (head?.digest === snapshot.digest) return undefined;
    const next = await this.summarize(snapshot, async (d) => snapshot.objects.get(d) ?? store.getObject(d));
    const served = head ? await this.summaryOf(head.digest, store) : undefined;
    const verdict = checkShrink(served, next, head ? await guardPolicy(store, channel) : DEFAULT_GUARD_POLICY);
    if (verdict.allowed) this.last = { digest: snapshot.digest, summary: next };
    return { verdict, served: head?.version ?? null, next };
  }

  /** From the index when the snapshot is a delta of the one it describes, else by indexing the whole snapshot. */
  private async summarize(snapshot: BuiltSnapshot, read: ObjectReader): Promise<MeshSummary> {
    const index = this.index;
    this.index = undefined; // a failed advance leaves it half-moved
    if (index?.canAdvance(snapshot.base, snapshot.changes)) {
      const summary = await index.advance(snapshot.digest, snapshot.changes, read, this.counter);
      this.index = index;
      return summary;
    }
    this.index = await MeshIndex.of(snapshot.digest, snapshot.content, read, this.counter);
    return this.index.summary;
  }

  private async summaryOf(digest: string, store: SnapshotStore): Promise<MeshSummary | undefined> {
    if (this.last?.digest === digest) return this.last.summary;
    const content = await store.getSnapshot(digest);
    if (!content) return undefined;
    const summary = await summarize(content, (d) => store.getObject(d), this.counter);
    this.last = { digest, summary };
    return summary;
  }
}

/** Records a refused snapshot as a candidate and audits why. */
export async function recordRefused(
  store: SnapshotStore,
  channel: string,
  compiled: Compiled,
  fields: RecordFields,
  createdAt: string,
  check: GuardCheck & { readonly served: number },
): Promise<Refused> {
  const candidate = resultVersion(
    await publishCompiled(store, candidatesChannel(channel), compiled, { ...fields, status: 'candidate' }, createdAt),
  );
  const refused: Refused = { status: 'refused', candidate, verdict: check.verdict, served: check.served };
  const ctx: HistoryContext = {
    store,
    channel,
    actor: fields.actor ?? '',
    now: () => new Date(createdAt),
    ...(fields.reason !== undefined ? { reason: fields.reason } : {}),
  };
  await recordEvent(ctx, {
    kind: 'guard',
    version: check.served,
    detail: {
      candidate: `candidate:${candidate}`,
      problems: check.verdict.problems,
      lostServices: check.verdict.lostServices,
      lostNamespaces: check.verdict.lostNamespaces,
    },
  });
  return refused;
}

/** publishCompiled behind the guard. */
export async function publishGuarded(
  store: SnapshotStore,
  channel: string,
  compiled: Compiled,
  fields: RecordFields,
  createdAt: string,
  opts: GuardOptions = {},
  guard = new PublishGuard(),
): Promise<PublishResult | Refused> {
  if (!opts.allowShrink) {
    const check = await guard.check(store, channel, compiled.snapshot);
    if (check?.served != null && !check.verdict.allowed)
      return recordRefused(store, channel, compiled, fields, createdAt, { ...check, served: check.served });
  }
  return publishCompiled(store, channel, compiled, fields, createdAt, opts.packCache);
}

export async function guardPolicy(store: SnapshotStore, channel: string): Promise<GuardPolicy> {
  return (await readChannelState(store, channel)).state.guard ?? DEFAULT_GUARD_POLICY;
}

/** `meshsnap guard --max-shrink P`: the channel's threshold, audited. */
export async function setGuardPolicy(ctx: HistoryContext, policy: GuardPolicy): Promise<GuardPolicy> {
  if (!(policy.maxShrinkPercent >= 0 && policy.maxShrinkPercent <= 100))
    throw new HistoryError(`max shrink must be a percentage from 0 to 100, not ${policy.maxShrinkPercent}`);
  await updateChannelState(ctx.store, ctx.channel, (s) =>
    s.guard?.maxShrinkPercent === policy.maxShrinkPercent ? undefined : { ...s, guard: policy },
  );
  await recordEvent(ctx, { kind: 'guard', detail: { maxShrinkPercent: policy.maxShrinkPercent } });
  return policy;
}
