/** What the history commands share: store, channel, who acts and why (the CLI edge of src/history). */
import { userInfo } from 'node:os';
import type { HistoryContext } from '../history/context.js';
import { InvalidSelectorError, selectVersion } from '../history/select.js';
import type { VersionRecord } from '../snapshot/manifest.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { nodeSha256Hex } from '../snapshot/store/local.js';
import { UsageError } from './args.js';
import { checkChannel, openStore } from './store.js';

/** `--actor`, else $MESHSNAP_ACTOR, else the OS user. */
export function actorOf(flag: string | undefined): string {
  if (flag) return flag;
  if (process.env.MESHSNAP_ACTOR) return process.env.MESHSNAP_ACTOR;
  try {
    return userInfo().username || 'unknown';
  } catch {
    return process.env.USER ?? 'unknown';
  }
}

export function historyContext(values: {
  store?: string | undefined;
  channel: string;
  actor?: string | undefined;
  reason?: string | undefined;
}): HistoryContext {
  return {
    store: openStore(values.store),
    channel: checkChannel(values.channel),
    actor: actorOf(values.actor),
    ...(values.reason !== undefined ? { reason: values.reason } : {}),
    now: () => new Date(),
    hasher: nodeSha256Hex,
  };
}

/** selectVersion with a malformed selector reported as a usage error (exit 2). */
export async function selectArg(
  store: SnapshotStore,
  channel: string,
  spec: string | undefined,
): Promise<VersionRecord> {
  try {
    return await selectVersion(store, channel, spec);
  } catch (err) {
    if (err instanceof InvalidSelectorError) throw new UsageError(err.message);
    throw err;
  }
}
