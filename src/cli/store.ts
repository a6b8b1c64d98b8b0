/** Opens the store a command names (`--store`): a local folder (default `./.meshsnap`). */
import { DEFAULT_STORE_DIR, LocalStore } from '../snapshot/store/local.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import type { VersionRecord } from '../snapshot/manifest.js';
import { assertChannel } from '../snapshot/manifest.js';
import { UsageError } from './args.js';

export function openStore(spec: string | undefined): SnapshotStore {
  const where = spec ?? process.env.MESHSNAP_STORE ?? DEFAULT_STORE_DIR;
  if (/^[a-z0-9]+:\/\//i.test(where) && !where.startsWith('file://')) {
    throw new UsageError(`store ${where}: only local folders are supported by this build`);
  }
  return new LocalStore(where.startsWith('file://') ? new URL(where).pathname : where);
}

export function checkChannel(channel: string): string {
  try {
    assertChannel(channel);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return channel;
}

export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

export async function resolveVersion(store: SnapshotStore, channel: string, version: number | 'latest'): Promise<VersionRecord> {
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
