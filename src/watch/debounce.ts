/**
 * Debouncing as istiod does it (pilot/pkg/xds/discovery.go `debounce`): after the first event,
 * wait until events have stopped for `quietMs` (PILOT_DEBOUNCE_AFTER, 100 ms), but never longer
 * than `maxMs` after that first event (PILOT_DEBOUNCE_MAX, 10 s), so a steady stream of endpoint
 * churn still produces a snapshot every 10 s. While a fire is running, events queue up and the
 * next round starts when it is done: compiles never overlap.
 */
import type { Clock } from './clock.js';

export interface DebounceOptions {
  readonly quietMs: number;
  readonly maxMs: number;
  readonly clock: Clock;
  /** Called with how long the round waited since its first event (ms). */
  readonly fire: (waitedMs: number) => Promise<void>;
  readonly onError?: (err: unknown) => void;
}

export class Debouncer {
  private firstAt: number | null = null;
  private lastAt = 0;
  private timer: unknown = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly opts: DebounceOptions) {}

  /** Records an event. */
  trigger(): void {
    if (this.closed) return;
    const now = this.opts.clock.now();
    this.lastAt = now;
    if (this.firstAt === null) this.firstAt = now;
    if (this.timer === null && this.running === null) this.arm(this.opts.quietMs);
  }

  /** Whether events wait for a fire. */
  get pending(): boolean {
    return this.firstAt !== null;
  }

  /** Resolves when no fire is running. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(ms: number): void {
    this.timer = this.opts.clock.setTimeout(() => this.check(), ms);
  }

  private check(): void {
    this.timer = null;
    if (this.closed || this.firstAt === null) return;
    const now = this.opts.clock.now();
    const waited = now - this.firstAt;
    const quiet = now - this.lastAt;
    if (quiet >= this.opts.quietMs || waited >= this.opts.maxMs) {
      this.run(waited);
      return;
    }
    // Re-check when either the quiet period or the maximum delay would end, whichever is first.
    this.arm(Math.min(this.opts.quietMs - quiet, this.opts.maxMs - waited));
  }

  private run(waited: number): void {
    this.firstAt = null;
    this.running = this.opts
      .fire(waited)
      .catch((err: unknown) => this.opts.onError?.(err))
      .finally(() => {
        this.running = null;
        // Events that came in while firing start a new round, timed from now.
        if (this.firstAt !== null && !this.closed) {
          this.firstAt = this.opts.clock.now();
          this.arm(this.opts.quietMs);
        }
      });
  }
}
