/** Opens the store a command names (`--store`): a local folder (default `./.meshsnap`), `file://…` or `s3://…` (src/snapshot/store/open.ts). */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openStore as openStoreSpec, UnsupportedStoreError } from '../snapshot/store/open.js';
import { DEFAULT_STORE_DIR } from '../snapshot/store/local.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import type { VersionRecord } from '../snapshot/manifest.js';
import { reservedChannelProblem } from '../history/context.js';
import { assertChannel } from '../snapshot/manifest.js';
import { MeshsnapError } from '../errors.js';
import { UsageError } from './args.js';

/** The store a command names: `--store`, else $MESHSNAP_STORE, else `./.meshsnap`. */
export const storeSpec = (spec: string | undefined): string => spec ?? process.env.MESHSNAP_STORE ?? DEFAULT_STORE_DIR;

export function openStore(spec: string | undefined): SnapshotStore {
  try {
    return openStoreSpec(storeSpec(spec));
  } catch (err) {
    if (err instanceof UnsupportedStoreError || err instanceof TypeError) throw new UsageError((err as Error).message);
    throw err;
  }
}

/**
 * For commands that only read (log, show, diff, …): a folder store must exist, or the command
 * would report an empty channel for a mistyped path. Object stores are checked by their first read.
 */
export function openExistingStore(spec: string | undefined): SnapshotStore {
  const chosen = storeSpec(spec);
  const store = openStore(chosen);
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(chosen) || chosen.startsWith('file://')) {
    const dir = chosen.startsWith('file://') ? fileURLToPath(chosen) : chosen;
    const from =
      spec !== undefined
        ? '--store'
        : process.env.MESHSNAP_STORE !== undefined
          ? '$MESHSNAP_STORE'
          : 'the default store';
    if (!existsSync(dir))
      throw new UsageError(
        `no store at ${dir} (${from}): the folder does not exist (run meshsnap compile or meshsnap demo first, or pass --store)`,
      );
  }
  return store;
}

export function checkChannel(channel: string): string {
  try {
    assertChannel(channel);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const reserved = reservedChannelProblem(channel);
  if (reserved) throw new UsageError(reserved);
  return channel;
}

export class NotFoundError extends MeshsnapError {
  override readonly name = 'NotFoundError';
  constructor(message: string) {
    super('not_found', message);
  }
}

export async function resolveVersion(
  store: SnapshotStore,
  channel: string,
  version: number | 'latest',
): Promise<VersionRecord> {
  let n = version;
  if (n === 'latest') {
    const head = await store.readChannel(channel);
    if (!head) throw new NotFoundError(`channel ${channel} has no versions yet (run meshsnap compile first)`);
    n = head.version;
  }
  const record = await store.getVersion(channel, n);
  if (!record) throw new NotFoundError(`channel ${channel} has no version ${n}`);
  return record;
}
