/**
 * `meshsnap watch --write-status`: writes the Gateway API statuses a round computed to the objects'
 * status subresources. The I/O edge around the pure merge (merge.ts) and comparison (compare.ts).
 *
 * - Only when it changed: an object whose current status (as the informer last saw it, or as our
 *   own write stored it) already is the merged one is not written, so an unchanged round writes
 *   nothing.
 * - The write is a PUT of the object as last read with the new status, so the API server checks its
 *   resourceVersion: a 409 (someone wrote the object meanwhile) reads it again, merges again and
 *   retries, at most `maxAttempts` times. An object that is gone (404) is skipped; one the server
 *   refuses (422, 400) is logged and left until its computed status changes; other failures (403,
 *   5xx, the network) are retried with backoff.
 * - Rate-bounded: every request takes a token of one bucket (`qps`, `burst`), and writes run one at
 *   a time off a queue holding at most one pending status per object (a newer round's replaces
 *   it), so a 10k-route mesh never has more than its objects queued nor floods the API server.
 */
import { backoff } from '../../backoff.js';
import type { LogFields, LogLevel } from '../../log.js';
import type { Clock } from '../clock.js';
import type { ComputedStatus } from './desired.js';
import { sameStatus } from './compare.js';
import { mergeStatus, metaTime, ROUTE_KINDS, withoutOurParents, type Json } from './merge.js';
import { takeToken, tokenBucket, type TokenBucket } from './rate-limit.js';

/** The API server as the writer needs it (status-client.ts over kube-http.ts; tests use fakes). */
export interface StatusClient {
  /** The object now, or undefined when it is gone. */
  get(path: string): Promise<Json | undefined>;
  /** PUT `path/status`; the stored object. Throws an error with `statusCode` on a non-2xx answer. */
  replaceStatus(path: string, object: Json): Promise<Json>;
}

export type StatusWriteResult = 'written' | 'conflict' | 'gone' | 'refused' | 'error';

export interface StatusWriterOptions {
  readonly client: StatusClient;
  /** The object path (without `/status`) of a kind in the apiVersion it was read in. */
  readonly pathOf: (kind: string, apiVersion: string, namespace: string, name: string) => string | undefined;
  readonly clock: Clock;
  /** Wall clock for lastTransitionTime. */
  readonly now?: () => Date;
  /** Requests per second (default 20) and burst (default 40), as client-go's QPS and Burst. */
  readonly qps?: number;
  readonly burst?: number;
  /** PUTs per object and pass, counting the retries after a conflict (default 5). */
  readonly maxAttempts?: number;
  /** Backoff of an object whose write failed (default 1 s doubling to 60 s). */
  readonly retryInitialMs?: number;
  readonly retryMaxMs?: number;
  readonly log?: (level: LogLevel, event: string, fields: LogFields) => void;
  readonly count?: (result: StatusWriteResult) => void;
  readonly queued?: (size: number) => void;
}

/** What to do for one object: write the computed status, or remove our route parents. */
type Intent =
  | { readonly type: 'set'; readonly computed: ComputedStatus; readonly generation?: number }
  | { readonly type: 'clear'; readonly kind: string };

interface Observed {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly object: Json;
}

interface LastWrite {
  /** The status we sent, and the status the server stored (with its defaults). */
  readonly sent: Json;
  readonly stored: unknown;
}

const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function identity(raw: Json): { kind: string; namespace: string; name: string } | undefined {
  const meta = raw.metadata;
  if (typeof raw.kind !== 'string' || !isRecord(meta) || typeof meta.name !== 'string') return undefined;
  return { kind: raw.kind, namespace: typeof meta.namespace === 'string' ? meta.namespace : '', name: meta.name };
}

const keyOf = (o: { kind: string; namespace: string; name: string }): string => `${o.kind}/${o.namespace}/${o.name}`;
const statusCodeOf = (err: unknown): number | undefined => {
  const code = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
};

export class StatusWriter {
  private readonly observed = new Map<string, Observed>();
  private readonly lastWrite = new Map<string, LastWrite>();
  /**
   * Objects found not to need a write, with the intent and the object version they were checked
   * against: the next round skips them without merging again while neither changed (a 10k-route
   * mesh's unchanged round then costs one JSON text per route).
   */
  private readonly settled = new Map<string, { readonly intent: string; readonly object: Json }>();
  private readonly queue = new Map<string, Intent>();
  private readonly retries = new Map<string, { attempts: number; timer: unknown }>();
  private readonly bucket: TokenBucket;
  private draining: Promise<void> | null = null;
  private stopped = false;
  private sleeping: { timer: unknown; wake: () => void } | null = null;

  constructor(private readonly opts: StatusWriterOptions) {
    this.bucket = tokenBucket(opts.qps ?? 20, opts.burst ?? 40, opts.clock.now());
  }

  // ---- what the informers see ----------------------------------------------------------------

  /** An object as an informer delivered it (kind and apiVersion set). */
  observe(raw: Json): void {
    const id = identity(raw);
    if (id) this.observed.set(keyOf(id), { ...id, object: raw });
  }

  forget(raw: Json): void {
    const id = identity(raw);
    if (!id) return;
    const key = keyOf(id);
    this.observed.delete(key);
    this.lastWrite.delete(key);
    this.settled.delete(key);
    this.queue.delete(key);
    this.cancelRetry(key);
  }

  // ---- a round's statuses --------------------------------------------------------------------

  /**
   * Queues the objects whose status differs from what the round computed, and the routes that
   * still carry a parent entry of ours the round no longer computed. Returns how many were queued.
   */
  sync(
    computed: readonly ComputedStatus[],
    generationOf: (c: ComputedStatus) => number | undefined = () => undefined,
  ): number {
    if (this.stopped) return 0;
    const now = this.now();
    const seen = new Set<string>();
    let queued = 0;
    for (const c of computed) {
      seen.add(c.key);
      const generation = generationOf(c);
      const intent: Intent = { type: 'set', computed: c, ...(generation !== undefined ? { generation } : {}) };
      if (this.enqueue(c.key, intent, now)) queued++;
    }
    for (const [key, o] of this.observed)
      if (ROUTE_KINDS.has(o.kind) && !seen.has(key) && this.enqueue(key, { type: 'clear', kind: o.kind }, now))
        queued++;
    this.kick();
    return queued;
  }

  /** Resolves when nothing is queued or being written (retries waiting on backoff are not waited for). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  get pending(): number {
    return this.queue.size;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.clear();
    for (const key of [...this.retries.keys()]) this.cancelRetry(key);
    if (this.sleeping) {
      this.opts.clock.clearTimeout(this.sleeping.timer);
      this.sleeping.wake();
    }
    await this.idle();
  }

  // ---- the queue -----------------------------------------------------------------------------

  /** Queues an intent when the object needs a write now (replacing a pending one); false when not. */
  private enqueue(key: string, intent: Intent, now: string): boolean {
    const o = this.observed.get(key);
    // Plain JSON text suffices for the memo: equal text is equal content; a key-order difference only re-checks.
    const text = intent.type === 'set' ? JSON.stringify([intent.computed.status, intent.generation ?? null]) : 'clear';
    const settled = this.settled.get(key);
    if (o && settled && settled.intent === text && settled.object === o.object) return false;
    if (!o || !this.desired(key, intent, o.object, now)) {
      if (o) this.settled.set(key, { intent: text, object: o.object });
      this.queue.delete(key);
      this.cancelRetry(key);
      return false;
    }
    this.settled.delete(key);
    this.queue.set(key, intent);
    return true;
  }

  private now(): string {
    return metaTime(this.opts.now?.() ?? new Date());
  }

  private kick(): void {
    this.opts.queued?.(this.queue.size);
    if (this.draining || this.stopped || this.queue.size === 0) return;
    this.draining = this.drain().finally(() => {
      this.draining = null;
      this.opts.queued?.(this.queue.size);
    });
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const next = this.queue.entries().next();
      if (next.done) return;
      const [key, intent] = next.value;
      this.queue.delete(key);
      await this.write(key, intent);
    }
  }

  /** The status to write over `object`'s, or undefined when it already has it. */
  private desired(key: string, intent: Intent, object: Json, now: string): Json | undefined {
    const id = identity(object);
    if (!id) return undefined;
    const ctx = {
      kind: id.kind,
      namespace: id.namespace,
      current: object.status,
      now,
      ...(intent.type === 'set' && intent.generation !== undefined ? { generation: intent.generation } : {}),
    };
    const status = intent.type === 'set' ? mergeStatus(intent.computed.status, ctx) : withoutOurParents(ctx);
    if (!status || sameStatus(status, object.status)) return undefined;
    // The server echoes our last write with its defaults: the object still has what we wrote.
    const last = this.lastWrite.get(key);
    if (last && sameStatus(status, last.sent) && sameStatus(object.status, last.stored)) return undefined;
    return status;
  }

  private async write(key: string, intent: Intent): Promise<void> {
    const maxAttempts = this.opts.maxAttempts ?? 5;
    let object = this.observed.get(key)?.object;
    for (let attempt = 1; object && !this.stopped; attempt++) {
      const status = this.desired(key, intent, object, this.now());
      if (!status) return this.cancelRetry(key);
      const id = identity(object)!;
      const path = this.opts.pathOf(id.kind, String(object.apiVersion ?? ''), id.namespace, id.name);
      if (!path) return;
      let code: number | undefined;
      try {
        await this.token();
        if (this.stopped) return;
        const stored = await this.opts.client.replaceStatus(path, { ...object, status });
        this.lastWrite.set(key, { sent: status, stored: stored.status });
        if (this.observed.has(key)) this.observed.set(key, { ...id, object: stored });
        this.opts.count?.('written');
        this.opts.log?.('debug', 'watch.status_written', { kind: id.kind, namespace: id.namespace, name: id.name });
        return this.cancelRetry(key);
      } catch (err) {
        code = statusCodeOf(err);
        if (code === 404) return this.gone(key);
        if (code === 400 || code === 422) return this.refused(id, code, err);
        if (code !== 409 || attempt >= maxAttempts) return this.failed(key, intent, id, err);
      }
      // A conflict: someone wrote the object since we read it. Read it again and merge again.
      this.opts.count?.('conflict');
      try {
        await this.token();
        if (this.stopped) return;
        object = await this.opts.client.get(path);
      } catch (err) {
        return this.failed(key, intent, id, err);
      }
      if (object) this.observed.set(key, { ...id, object });
    }
    if (!object) this.gone(key);
  }

  /** The object was deleted before the informer told us: forget it (the informer adds it again if it comes back). */
  private gone(key: string): void {
    this.opts.count?.('gone');
    this.observed.delete(key);
    this.lastWrite.delete(key);
    this.settled.delete(key);
    this.cancelRetry(key);
  }

  private refused(id: { kind: string; namespace: string; name: string }, code: number, err: unknown): void {
    this.opts.count?.('refused');
    this.opts.log?.('warn', 'watch.status_refused', {
      message: `the API server refused the status of ${id.kind} ${id.namespace}/${id.name}; not retried until it changes`,
      kind: id.kind,
      namespace: id.namespace,
      name: id.name,
      status: code,
      error: String(err).slice(0, 300),
    });
  }

  /** Logs a failed write and queues the object again after a backoff (unless a newer intent came). */
  private failed(
    key: string,
    intent: Intent,
    id: { kind: string; namespace: string; name: string },
    err: unknown,
  ): void {
    this.opts.count?.('error');
    const attempts = (this.retries.get(key)?.attempts ?? 0) + 1;
    const delay = backoff(attempts, {
      baseMs: this.opts.retryInitialMs ?? 1000,
      maxMs: this.opts.retryMaxMs ?? 60_000,
      jitter: 'none',
    });
    // The first failure of an object warns; its retries (say, every object forbidden) log at debug.
    this.opts.log?.(attempts === 1 ? 'warn' : 'debug', 'watch.status_write_failed', {
      message: `writing the status of ${id.kind} ${id.namespace}/${id.name} failed; retrying in ${delay} ms`,
      kind: id.kind,
      namespace: id.namespace,
      name: id.name,
      ...(statusCodeOf(err) !== undefined ? { status: statusCodeOf(err) } : {}),
      error: String(err).slice(0, 300),
    });
    this.cancelRetry(key);
    const timer = this.opts.clock.setTimeout(() => {
      const r = this.retries.get(key);
      if (!r || r.timer !== timer || this.stopped) return;
      r.timer = null;
      if (!this.queue.has(key) && this.observed.has(key)) {
        this.queue.set(key, intent);
        this.kick();
      }
    }, delay);
    this.retries.set(key, { attempts, timer });
  }

  private cancelRetry(key: string): void {
    const r = this.retries.get(key);
    if (r?.timer) this.opts.clock.clearTimeout(r.timer);
    this.retries.delete(key);
  }

  /** Waits for a token of the bucket. */
  private async token(): Promise<void> {
    for (;;) {
      const wait = takeToken(this.bucket, this.opts.clock.now());
      if (wait === 0 || this.stopped) return;
      await new Promise<void>((wake) => {
        this.sleeping = {
          wake,
          timer: this.opts.clock.setTimeout(() => {
            this.sleeping = null;
            wake();
          }, wait),
        };
      });
    }
  }
}
