/**
 * The OffloadRunner of `meshsnap serve`: compile and diff each run in their own worker thread
 * (offload-worker.ts), one job at a time per kind with a bounded queue, under V8 heap limits, so the
 * relay and the watcher in the same process keep their event loop. Node only.
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { BoundedDiff } from './diff-bound.js';
import type { CompileJobResult, DiffJob, OffloadRunner } from './offload.js';
import type { OffloadRequest, OffloadWorkerData } from './offload-worker.js';
import { WorkerLane } from './worker-lane.js';

export const WORKER_QUEUE_DEFAULT = 4;
export const COMPILE_HEAP_MB_DEFAULT = 2048;
export const DIFF_HEAP_MB_DEFAULT = 1024;

export interface WorkerRunnerOptions {
  /** The store the diff worker reads: the same `--store` spec the server opened. */
  readonly storeSpec: string;
  /** Jobs that may wait per kind while one runs (default 4); one more answers 503 `busy`. */
  readonly maxQueue?: number;
  /** Seconds in a `busy` answer's Retry-After (default 5). */
  readonly retryAfter?: number;
  readonly compileLimits?: ResourceLimits;
  readonly diffLimits?: ResourceLimits;
}

export interface WorkerRunner extends OffloadRunner {
  /** Ends both workers; jobs still waiting answer `busy`. */
  close(): Promise<void>;
}

const WORKER_FILE = new URL('./offload-worker.js', import.meta.url);
/** A worker inherits the process's flags; `--input-type` (a CLI started with `-e`) makes it refuse a file. */
const workerExecArgv = (): string[] => process.execArgv.filter((a) => !a.startsWith('--input-type'));

export function workerRunner(opts: WorkerRunnerOptions): WorkerRunner {
  const workerData: OffloadWorkerData = { storeSpec: opts.storeSpec };
  const lane = (name: string, resourceLimits: ResourceLimits) =>
    new WorkerLane({
      name,
      spawn: () => new Worker(WORKER_FILE, { workerData, resourceLimits, execArgv: workerExecArgv() }),
      maxQueue: opts.maxQueue ?? WORKER_QUEUE_DEFAULT,
      retryAfter: opts.retryAfter ?? 5,
    });
  const compile = lane('compile', opts.compileLimits ?? { maxOldGenerationSizeMb: COMPILE_HEAP_MB_DEFAULT });
  const diff = lane('diff', opts.diffLimits ?? { maxOldGenerationSizeMb: DIFF_HEAP_MB_DEFAULT });
  const ask = <T>(l: WorkerLane, request: OffloadRequest) => l.run(request) as Promise<T>;
  return {
    compile: (files) => ask<CompileJobResult>(compile, { kind: 'compile', files }),
    // The worker reads its own handle on the same store: `store` here is the server's.
    diff: (_store, job: DiffJob) => ask<BoundedDiff>(diff, { kind: 'diff', job }),
    close: async () => {
      await Promise.all([compile.close(), diff.close()]);
    },
  };
}
