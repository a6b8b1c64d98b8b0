/**
 * The worker thread of worker-runner.ts: runs one compile or diff per message, the same code as
 * the inline runner (offload.ts), and posts back its result or its error as plain data.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { diffVersions } from '../history/diff/index.js';
import type { InputText } from '../pipeline.js';
import { nodeSha256Hex } from '../snapshot/store/local.js';
import { openStore } from '../snapshot/store/open.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import { boundDiff } from './diff-bound.js';
import { compileJob, diffOptions, type DiffJob } from './offload.js';
import { serializeError, type WorkerReply } from './worker-lane.js';

export interface OffloadWorkerData {
  readonly storeSpec: string;
}

export type OffloadRequest =
  { readonly kind: 'compile'; readonly files: readonly InputText[] } | { readonly kind: 'diff'; readonly job: DiffJob };

let store: SnapshotStore | undefined;

async function run(req: OffloadRequest): Promise<unknown> {
  if (req.kind === 'compile') return compileJob(req.files, { hasher: nodeSha256Hex });
  store ??= openStore((workerData as OffloadWorkerData).storeSpec);
  return boundDiff(await diffVersions(store, req.job.from, req.job.to, diffOptions(req.job)), req.job.bound);
}

const port = parentPort;
if (port) {
  port.on('message', (req: OffloadRequest) => {
    run(req).then(
      (value) => port.postMessage({ ok: true, value } satisfies WorkerReply),
      (err: unknown) => port.postMessage({ ok: false, error: serializeError(err) } satisfies WorkerReply),
    );
  });
}
