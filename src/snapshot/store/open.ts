/**
 * `openStore(spec)`: a store from what `--store` / $MESHSNAP_STORE say — a folder (`DIR`,
 * `file:///abs/dir`) or `s3://bucket/prefix?endpoint=…&region=…&forcePathStyle=true`
 * (`&conditional=false` for test servers that ignore conditional writes; `&freshenMinutes=M` for how
 * stale a reused object may get before it is touched for gc, default 10). Node edge.
 */
import { MeshsnapError } from '../../errors.js';
import { fileURLToPath } from 'node:url';
import { DEFAULT_STORE_DIR, LocalStore, nodeSha256Hex } from './local.js';
import { ObjectStore } from './object-store.js';
import { parseS3Url, S3Backend, type S3BackendOptions } from './s3.js';
import type { SnapshotStore } from './store.js';

export class UnsupportedStoreError extends MeshsnapError {
  override readonly name = 'UnsupportedStoreError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('bad_request', message, options);
  }
}

export function openStore(spec: string = DEFAULT_STORE_DIR, opts: S3BackendOptions = {}): SnapshotStore {
  if (spec.startsWith('s3://'))
    return new ObjectStore(new S3Backend(parseS3Url(spec), opts), { hasher: nodeSha256Hex, ...freshenOption(spec) });
  if (spec.startsWith('file://')) return new LocalStore(fileURLToPath(spec));
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spec))
    throw new UnsupportedStoreError(
      `store ${spec}: use a folder, file://… or s3://bucket/prefix (r2 is reached through a Workers binding)`,
    );
  return new LocalStore(spec);
}

function freshenOption(spec: string): { freshenAfterMs?: number } {
  const m = new URL(spec).searchParams.get('freshenMinutes');
  if (m === null) return {};
  if (!/^[0-9]+(\.[0-9]+)?$/.test(m)) throw new TypeError(`store ${spec}: freshenMinutes must be a number of minutes`);
  return { freshenAfterMs: Number(m) * 60_000 };
}
