/**
 * One worker thread running one job at a time, with a bounded queue. Node only (app.ts never
 * imports it). A full queue answers `busy` (503, Retry-After); a worker that dies (out of memory
 * under its resourceLimits, a crash) fails its job with `worker_failed` and is replaced on the next
 * job, so the process that owns the lane keeps serving.
 */
import type { Worker } from 'node:worker_threads';
import { MeshsnapError } from '../errors.js';
import { BusyError } from './errors.js';

/** What a worker posts back for one job. */
export type WorkerReply =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: SerializedError };

export interface SerializedError {
  readonly name: string;
  readonly message: string;
  /** Its stable code (src/errors.ts), by which the API answers. */
  readonly code?: string;
}

export function serializeError(err: unknown): SerializedError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const code = (err as { code?: unknown }).code;
  return { name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) };
}

/** An Error with the worker error's name and code, so the API maps it as if thrown here. */
function reviveError(e: SerializedError): Error {
  const err = new Error(e.message);
  err.name = e.name;
  if (e.code !== undefined) Object.assign(err, { code: e.code });
  return err;
}

interface Job {
  readonly request: unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
}

export interface LaneOptions {
  /** Names the lane in errors (`compile`, `diff`). */
  readonly name: string;
  readonly spawn: () => Worker;
  /** Jobs that may wait while one runs; one more is `busy`. */
  readonly maxQueue: number;
  /** Seconds in the Retry-After of a `busy` answer. */
  readonly retryAfter: number;
}

export class WorkerLane {
  private worker: Worker | undefined;
  private active: Job | undefined;
  private readonly waiting: Job[] = [];
  private closed = false;

  constructor(private readonly opts: LaneOptions) {}

  run(request: unknown): Promise<unknown> {
    if (this.closed) return Promise.reject(this.shuttingDown());
    if (this.active && this.waiting.length >= this.opts.maxQueue) {
      return Promise.reject(
        new BusyError(
          `${this.opts.name}: ${this.waiting.length + 1} jobs already running or waiting; try again later`,
          this.opts.retryAfter,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.next();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const failed = this.shuttingDown();
    for (const job of this.waiting.splice(0)) job.reject(failed);
    const w = this.worker;
    this.worker = undefined;
    this.active?.reject(failed);
    this.active = undefined;
    await w?.terminate();
  }

  private shuttingDown(): BusyError {
    return new BusyError(`the ${this.opts.name} worker is shutting down`, this.opts.retryAfter);
  }

  private next(): void {
    if (this.active || this.closed) return;
    const job = this.waiting.shift();
    if (!job) return;
    this.active = job;
    this.workerFor().postMessage(job.request);
  }

  private workerFor(): Worker {
    if (this.worker) return this.worker;
    const w = this.opts.spawn();
    w.unref(); // an idle worker must not keep the process alive
    w.on('message', (reply: WorkerReply) => this.settle(w, reply));
    w.on('error', (err) => this.failed(w, err.message));
    w.on('exit', (code) => this.failed(w, `exited with code ${code}`));
    this.worker = w;
    return w;
  }

  private settle(w: Worker, reply: WorkerReply): void {
    const job = this.active;
    if (w !== this.worker || !job) return;
    this.active = undefined;
    if (reply.ok) job.resolve(reply.value);
    else job.reject(reviveError(reply.error));
    this.next();
  }

  /** The worker is gone ('error' then 'exit' both come here; the second finds it replaced). */
  private failed(w: Worker, reason: string): void {
    if (w !== this.worker) return;
    this.worker = undefined;
    void w.terminate();
    const job = this.active;
    this.active = undefined;
    job?.reject(new MeshsnapError('worker_failed', `the ${this.opts.name} worker failed: ${reason}`));
    this.next();
  }
}
