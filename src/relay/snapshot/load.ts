/**
 * Loads one channel version from the store into a LoadedSnapshot, verifying everything first:
 * the snapshot document against its digest, and every object any group references against its
 * digest (store.getObject does the hashing). A single missing or corrupt object refuses the whole
 * snapshot, so a bad byte never reaches a proxy. A composite object (a large route config stored as
 * shared parts, composite.ts) is materialized here, once per digest: every class and stream that
 * serves it shares those bytes.
 */
import { resourceBytes } from '../../snapshot/composite.js';
import { readSnapshotTrees } from '../../snapshot/content.js';
import type { ChannelHead } from '../../snapshot/manifest.js';
import type { ChannelReader, ContentReader } from '../../snapshot/store/store.js';
import { nodeSha256Hex } from '../../snapshot/store/local.js';
import { loadSnapshotPacked } from '../../snapshot/store/packs.js';
import { mustHex } from '../../snapshot/store/layout.js';
import { XDS_TYPES } from '../../xds/type-urls.js';
import { LoadedSnapshot } from './served-snapshot.js';

export class SnapshotLoadError extends Error {
  override readonly name = 'SnapshotLoadError';
  constructor(
    readonly version: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface LoadOptions {
  /**
   * The snapshot being served now. Objects are immutable and content-addressed, and its bytes were
   * verified when it was loaded, so objects it shares with the new version are reused, not re-read:
   * a switch costs I/O and memory only for what changed.
   */
  readonly previous?: LoadedSnapshot;
  /** Object reads in flight at once. */
  readonly concurrency?: number;
}

export async function loadServedSnapshot(
  store: ContentReader & Pick<ChannelReader, 'getVersion'>,
  channel: string,
  head: ChannelHead,
  opts: LoadOptions = {},
): Promise<LoadedSnapshot> {
  const fail = (why: string, cause?: unknown): never => {
    throw new SnapshotLoadError(
      head.version,
      `channel ${channel} version ${head.version} (${head.digest}): ${why}`,
      cause === undefined ? undefined : { cause },
    );
  };
  if (!opts.previous) {
    // Cold start: the record's packs hold the whole snapshot, ≤ 8 reads whatever its size (packs.ts).
    try {
      const record = await store.getVersion(channel, head.version);
      if (record?.packs && record.digest === head.digest) {
        const packed = await loadSnapshotPacked(store, record, nodeSha256Hex);
        if (packed)
          return new LoadedSnapshot({
            channel,
            version: head.version,
            digest: head.digest,
            content: packed.content,
            trees: packed.trees,
            objects: packed.objects,
          });
      }
    } catch (e) {
      return fail(`loading from packs: ${(e as Error).message}`, e);
    }
  }
  // Tables the served snapshot already has (same root digest) are taken from it, unread: a switch
  // reads only the documents that changed (each verified by getDocument).
  let tree;
  try {
    mustHex(head.digest);
    tree = await readSnapshotTrees(
      (d) => store.getDocument(d),
      head.digest,
      opts.previous ? { known: opts.previous.trees } : {},
    );
  } catch (e) {
    return fail(`snapshot document unreadable: ${(e as Error).message}`, e);
  }
  if (!tree) return fail('snapshot document is missing');
  const { content, trees } = tree;

  const digests = new Set<string>();
  for (const group of Object.values(content.groups))
    for (const type of XDS_TYPES) for (const d of Object.values(group[type])) digests.add(d);

  const objects = new Map<string, Uint8Array>();
  const toRead: string[] = [];
  for (const d of digests) {
    const known = opts.previous?.objects.get(d);
    if (known) objects.set(d, known);
    else toRead.push(d);
  }

  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < toRead.length) {
      const d = toRead[next++] as string;
      let bytes: Uint8Array | null;
      try {
        bytes = await resourceBytes((x) => store.getObject(x), d);
      } catch (e) {
        next = toRead.length; // the snapshot is refused: stop the other workers too
        return fail(`object ${d}: ${(e as Error).message}`, e);
      }
      if (!bytes) {
        next = toRead.length;
        return fail(`object ${d} is missing from the store`);
      }
      objects.set(d, bytes);
    }
  };
  const n = Math.max(1, Math.min(opts.concurrency ?? 32, toRead.length));
  // allSettled + rethrow: let every worker stop before reporting, so no read is left dangling.
  const results = await Promise.allSettled(Array.from({ length: n }, worker));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;

  return new LoadedSnapshot({
    channel,
    version: head.version,
    digest: head.digest,
    content,
    trees,
    objects,
    ...(opts.previous ? { previous: opts.previous } : {}),
  });
}
