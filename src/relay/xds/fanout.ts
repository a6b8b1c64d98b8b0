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
 */
export interface WriteItem {
  readonly bytes: Uint8Array;
  /** Queued items with the same key are superseded by a newer one (SotW: latest state wins). */
  readonly key?: string;
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
  private inFlight = false;
  private waiting = false;
  private closed = false;
  private stalled = false;
  private finishWrite: (() => void) | undefined;

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
    this.finishWrite?.();
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
    this.inFlight = true;
    let holdsSlot = true;
    let slow = false;
    let done = false;
    const giveBackSlot = (): void => {
      if (!holdsSlot) return;
      holdsSlot = false;
      this.fanout.release();
    };
    // One timer per write (a switch starts thousands): armed for the slow-write bound, then re-armed
    // for the rest of the write timeout; most writes finish before the first fires.
    const { slowWriteMs, writeTimeoutMs } = this.fanout;
    const stallAfter = (): void => this.stall({ kind: 'write-timeout', ms: writeTimeoutMs });
    let timer = setTimeout(
      () => {
        slow = true;
        this.fanout.countSlow(1);
        giveBackSlot();
        if (writeTimeoutMs <= slowWriteMs) return stallAfter();
        timer = setTimeout(stallAfter, writeTimeoutMs - slowWriteMs);
        timer.unref();
      },
      Math.min(slowWriteMs, writeTimeoutMs),
    );
    timer.unref();
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (slow) this.fanout.countSlow(-1);
      this.finishWrite = undefined;
      this.inFlight = false;
      giveBackSlot();
      this.schedule();
    };
    this.finishWrite = finish;
    try {
      this.call.write(item.bytes, (err) => {
        finish();
        item.onWritten?.(err);
      });
    } catch (err) {
      finish();
      item.onWritten?.(err as Error);
    }
    return true;
  }
}
