/**
 * HistoryOps bound to the history library (src/history). The library takes a HistoryContext per
 * operation (store, channel, actor, reason, clock); this file builds it from the API's Operator,
 * so who/when/why always come from the authenticated caller and the injected clock.
 */
import { auditTrail } from '../history/audit.js';
import { readChannelState } from '../history/channel-state.js';
import { candidatesChannel, isCandidatesChannel, type HistoryContext } from '../history/context.js';
import { diffVersions } from '../history/diff/index.js';
import { gc } from '../history/gc.js';
import { pin, unpin } from '../history/pin.js';
import { PinnedRefusedError, pinnedRound } from '../history/pinned-round.js';
import { promote } from '../history/promote.js';
import { publishGuarded, PublishRefusedError } from '../history/guarded-publish.js';
import { resultVersion } from '../history/publish.js';
import { rollback } from '../history/rollback.js';
import { selectVersion } from '../history/select.js';
import { tag } from '../history/tag.js';
import type { Hasher } from '../snapshot/digest.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import type { HistoryOps, Operator } from './history-port.js';

const context = (store: SnapshotStore, channel: string, op: Operator, hasher?: Hasher): HistoryContext => ({
  store,
  channel,
  actor: op.actor,
  now: () => op.at,
  ...(op.reason !== undefined ? { reason: op.reason } : {}),
  ...(hasher ? { hasher } : {}),
});

/** The rebuild result without the raw publish result (its record is returned as `record`). */
const rebuilt = (r: Awaited<ReturnType<typeof rollback>>) => ({
  version: r.version,
  digest: r.digest,
  status: r.result.status,
  pin: r.pin,
  ...(r.result.status === 'published' ? { record: r.result.record } : {}),
});

export function historyBinding(hasher?: Hasher): HistoryOps {
  return {
    select: (store, channel, selector) => selectVersion(store, channel, selector),

    async status(store, channel) {
      const head = await store.readChannel(channel);
      const { state } = await readChannelState(store, channel);
      const candidates = await store.listVersions(candidatesChannel(channel));
      return {
        current: head?.version ?? null,
        pinned: state.pin ?? null,
        tags: Object.fromEntries(state.tags),
        candidates,
      };
    },

    async channels(store) {
      return ((await store.listChannels?.()) ?? []).filter((c) => !isCandidatesChannel(c)).sort();
    },

    diff: (store, from, to, opts) => diffVersions(store, from, to, opts),

    async publish(store, channel, compiled, op, opts = {}) {
      const createdAt = op.at.toISOString();
      // A pinned channel keeps its config: the new config becomes a candidate (as in a watcher round).
      const fields = {
        actor: op.actor,
        ...(op.reason !== undefined ? { reason: op.reason } : {}),
        ...(opts.source !== undefined ? { source: opts.source } : {}),
      };
      const round = await pinnedRound({
        store,
        channel,
        objects: compiled.objects,
        snapshot: compiled.snapshot,
        diagnostics: compiled.diagnostics,
        createdAt,
        ...fields,
        ...(hasher ? { hasher } : {}),
        allowShrink: opts.allowShrink === true,
      });
      if (round?.refused) throw new PinnedRefusedError(channel, round.refused);
      if (round) {
        return { status: 'candidate', version: resultVersion(round.served), candidate: round.candidateVersion };
      }
      const result = await publishGuarded(
        store,
        channel,
        { snapshot: compiled.snapshot, diagnostics: compiled.diagnostics, stored: compiled.stored },
        fields,
        createdAt,
        { allowShrink: opts.allowShrink === true, ...(opts.packCache ? { packCache: opts.packCache } : {}) },
      );
      if (result.status === 'refused') throw new PublishRefusedError(channel, result);
      return result.status === 'published'
        ? { status: 'published', version: result.record.version, record: result.record }
        : { status: 'unchanged', version: result.head.version };
    },

    rollback: async (store, channel, selector, op, opts = {}) =>
      rebuilt(await rollback(context(store, channel, op, hasher), selector, opts)),
    promote: async (store, channel, selector, op, opts = {}) =>
      rebuilt(await promote(context(store, channel, op, hasher), selector, opts)),
    pin: async (store, channel, op, opts = {}) => ({
      pin: await pin(context(store, channel, op, hasher), opts.selector ?? 'latest', opts),
    }),
    unpin: async (store, channel, op) => ({ unpinned: (await unpin(context(store, channel, op, hasher))) ?? null }),
    tag: async (store, channel, selector, name, op, opts = {}) => ({
      version: await tag(context(store, channel, op, hasher), selector, name, opts),
    }),
    gc: (store, channel, opts, op) => gc(context(store, channel, op, hasher), opts),

    audit: (store, filter) => auditTrail(store, filter),
  };
}

export const defaultHistory: HistoryOps = historyBinding();
