/** Opens the store a command names (`--store`): a local folder (default `./.meshsnap`), `file://…` or `s3://…` (src/snapshot/store/open.ts). */
import { openStore as openStoreSpec, UnsupportedStoreError } from '../snapshot/store/open.js';
import { DEFAULT_STORE_DIR } from '../snapshot/store/local.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import type { VersionRecord } from '../snapshot/manifest.js';
import { reservedChannelProblem } from '../history/context.js';
import { assertChannel } from '../snapshot/manifest.js';
import { MeshsnapError } from '../errors.js';
import { UsageError } from './args.js';

export function openStore(spec: string | undefined): SnapshotStore {
  try {
    return openStoreSpec(spec ?? process.env.MESHSNAP_STORE ?? DEFAULT_STORE_DIR);
  } catch (err) {
    if (err instanceof UnsupportedStoreError || err instanceof TypeError) throw new UsageError((err as Error).message);
    throw err;
  }
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
