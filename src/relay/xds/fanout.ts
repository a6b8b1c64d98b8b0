/**
 * Bounded writes in flight across all streams. grpc-js copies every message it writes into the
 * HTTP/2 stream, so pushing a switch to 10k streams at once would hold 10k copies at a time; here
 * at most `limit` writes are in flight, streams take turns (round robin, one write per turn), and
 * each stream's writes stay in order. A write is done when grpc-js calls back (flushed to HTTP/2),
 * so a slow proxy holds at most one slot.
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

export class Fanout {
  private active = 0;
  private readonly waiting: StreamWriter[] = [];

  constructor(readonly limit: number) {}

  writer(call: WritableCall): StreamWriter {
    return new StreamWriter(this, call);
  }

  get inFlight(): number {
    return this.active;
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

  private pump(): void {
    while (this.active < this.limit && this.waiting.length > 0) {
      const w = this.waiting.shift() as StreamWriter;
      if (w.startOne()) this.active++;
    }
  }
}

export class StreamWriter {
  private readonly queue: WriteItem[] = [];
  private inFlight = false;
  private waiting = false;
  private closed = false;
  private releaseSlot: (() => void) | undefined;

  constructor(
    private readonly fanout: Fanout,
    private readonly call: WritableCall,
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
    this.schedule();
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Drops queued writes and gives back the slot of a write in flight. */
  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.releaseSlot?.();
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
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.releaseSlot = undefined;
      this.inFlight = false;
      this.fanout.release();
      this.schedule();
    };
    this.releaseSlot = release;
    try {
      this.call.write(item.bytes, (err) => {
        release();
        item.onWritten?.(err);
      });
    } catch (err) {
      release();
      item.onWritten?.(err as Error);
    }
    return true;
  }
}
