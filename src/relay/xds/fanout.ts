/**
 * Bounded writes in flight, across all streams and per stream. grpc-js copies every message it
 * writes into the HTTP/2 stream, so pushing a switch to 10k streams at once would hold 10k copies
 * at a time; here at most `limit` writes are in flight, streams take turns (round robin, one write
 * per turn), and each stream's writes stay in order. A write is done when grpc-js calls back
 * (flushed to HTTP/2).
 *
 * A proxy that does not read (HTTP/2 flow control window closed) never lets a write finish. So a
 * write still unfinished after `slowWriteMs` gives its shared slot back (the stream keeps it as its
 * own: one write in flight, nothing more starts on it), and a stream whose write is unfinished after
 * `writeTimeoutMs`, or whose queue outgrows `maxQueued`, is reported stalled (the server closes it).
 * Stalled streams therefore cannot hold the shared budget, and healthy streams are not kept waiting.
 *
 * A switch starts a write on every stream: a write is a few fields of its stream's writer (no
 * closure, no timer of its own), and one sweep per fanout, every quarter of the slow-write bound
 * while writes are in flight, finds the slow and the stalled ones (so a bound is noticed up to a
 * quarter of it late).
 */
export interface WriteItem {
  readonly bytes: Uint8Array;
  /** Queued items with the same key are superseded by a newer one (SotW: latest state wins). */
  readonly key?: string | undefined;
  readonly onWritten?: (err?: Error | null) => void;
}

export interface WritableCall {
  write(chunk: unknown, cb: (err?: Error | null) => void): boolean;
}

export interface FanoutOptions {
  /** Writes in flight across all streams. */
  readonly limit: number;
  /** An unfinished write gives back its shared slot after this long. Default 250 ms. */
  readonly slowWriteMs?: number;
  /** An unfinished write makes its stream stalled after this long. Default 10 s. */
  readonly writeTimeoutMs?: number;
  /** Queued responses per stream beyond which the stream is stalled. Default 64. */
  readonly maxQueued?: number;
}

/** Why a stream was reported stalled. */
export type StallReason =
  { readonly kind: 'write-timeout'; readonly ms: number } | { readonly kind: 'queue-full'; readonly queued: number };

export class Fanout {
  readonly limit: number;
  readonly slowWriteMs: number;
  readonly writeTimeoutMs: number;
  readonly maxQueued: number;
  private active = 0;
  private slow = 0;
  private readonly waiting: StreamWriter[] = [];
  private idleWaiters: (() => void)[] = [];
  /** Writers with a write in flight (holding a slot or slow), for the sweep. */
  private readonly writing = new Set<StreamWriter>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(opts: FanoutOptions) {
    this.limit = Math.max(1, opts.limit);
    this.slowWriteMs = opts.slowWriteMs ?? 250;
    this.writeTimeoutMs = opts.writeTimeoutMs ?? 10_000;
    this.maxQueued = opts.maxQueued ?? 64;
  }

  /** `onStalled` is called once when the stream stops draining its writes. */
  writer(call: WritableCall, onStalled: (why: StallReason) => void = () => {}): StreamWriter {
    return new StreamWriter(this, call, onStalled);
  }

  /** Writes holding a shared slot. */
  get inFlight(): number {
    return this.active;
  }

  /** Writes unfinished past `slowWriteMs` (they no longer hold a shared slot). */
  get slowWrites(): number {
    return this.slow;
  }

  /**
   * Resolves when no write holds a shared slot and none waits for one: every healthy stream has
   * what was pushed (a slow write no longer holds a slot, so a stalled proxy does not hold this up).
   */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }

  /** @internal */
  enqueue(w: StreamWriter): void {
    this.waiting.push(w);
    this.pump();
  }

  /** @internal */
  release(): void {
    this.active--;
    this.pump();
  }

  /** @internal A write became slow (+1) or a slow write ended (-1). */
  countSlow(delta: 1 | -1): void {
    this.slow += delta;
  }

  /** @internal A writer started a write: the sweep watches it until it ends. */
  track(w: StreamWriter): void {
    this.writing.add(w);
    if (this.sweeper) return;
    const every = Math.max(1, Math.min(this.slowWriteMs, this.writeTimeoutMs) / 4);
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  /** @internal A writer's write ended (written, failed or abandoned). */
  untrack(w: StreamWriter): void {
    this.writing.delete(w);
    if (this.writing.size > 0 || !this.sweeper) return;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private sweep(): void {
    const now = Date.now();
    for (const w of this.writing) w.checkAge(now);
  }

  private pump(): void {
    while (this.active < this.limit && this.waiting.length > 0) {
      const w = this.waiting.shift() as StreamWriter;
      if (w.startOne()) this.active++;
    }
    if (this.idleWaiters.length > 0 && this.idle) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}

export class StreamWriter {
  private readonly queue: WriteItem[] = [];
  /** The write grpc-js has not called back yet (kept after an abandon, for its onWritten). */
  private current: WriteItem | undefined;
  /** A write is in flight: it holds a shared slot, or is slow. */
  private inFlight = false;
  private holdsSlot = false;
  private slow = false;
  private startedAt = 0;
  private waiting = false;
  private closed = false;
  private stalled = false;
  /** The one write callback of this stream (one write in flight at a time). */
  private readonly written = (err?: Error | null): void => this.writeDone(err);

  constructor(
    private readonly fanout: Fanout,
    private readonly call: WritableCall,
    private readonly onStalled: (why: StallReason) => void,
  ) {}

  push(item: WriteItem): void {
    if (this.closed) return;
    if (item.key !== undefined) {
      const at = this.queue.findIndex((q) => q.key === item.key);
      if (at >= 0) {
        this.queue[at] = item;
        return;
      }
    }
    this.queue.push(item);
    if (this.queue.length > this.fanout.maxQueued) return this.stall({ kind: 'queue-full', queued: this.queue.length });
    this.schedule();
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Drops queued writes and gives back the slot of a write in flight. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.finish();
  }

  private stall(why: StallReason): void {
    if (this.stalled || this.closed) return;
    this.stalled = true;
    this.onStalled(why);
    this.close();
  }

  private schedule(): void {
    if (!this.inFlight && !this.waiting && this.queue.length > 0 && !this.closed) {
      this.waiting = true;
      this.fanout.enqueue(this);
    }
  }

  /** @internal Starts the head write; false when there is nothing to write. */
  startOne(): boolean {
    this.waiting = false;
    const item = this.queue.shift();
    if (!item || this.closed) return false;
    this.current = item;
    this.inFlight = true;
    this.holdsSlot = true;
    this.slow = false;
    this.startedAt = Date.now();
    this.fanout.track(this);
    try {
      this.call.write(item.bytes, this.written);
    } catch (err) {
      this.writeDone(err as Error);
    }
    return true;
  }

  /**
   * @internal The sweep: past the slow-write bound the write gives its shared slot back; past the
   * write timeout the stream is stalled.
   */
  checkAge(now: number): void {
    const { slowWriteMs, writeTimeoutMs } = this.fanout;
    const age = now - this.startedAt;
    if (!this.inFlight || age < Math.min(slowWriteMs, writeTimeoutMs)) return;
    if (!this.slow) {
      this.slow = true;
      this.fanout.countSlow(1);
      this.giveBackSlot();
    }
    if (age >= writeTimeoutMs) this.stall({ kind: 'write-timeout', ms: writeTimeoutMs });
  }

  private writeDone(err?: Error | null): void {
    const item = this.current;
    this.current = undefined;
    this.finish();
    item?.onWritten?.(err);
  }

  /** Ends the write in flight (written, failed or abandoned): its slot back, the next one scheduled. */
  private finish(): void {
    if (!this.inFlight) return;
    this.inFlight = false;
    this.fanout.untrack(this);
    if (this.slow) {
      this.slow = false;
      this.fanout.countSlow(-1);
    }
    this.giveBackSlot();
    this.schedule();
  }

  private giveBackSlot(): void {
    if (!this.holdsSlot) return;
    this.holdsSlot = false;
    this.fanout.release();
  }
}
