/**
 * Follows a channel of the store: on boot loads the channel head; then polls the head (cheap: one
 * small read) and, when it moves, loads and verifies the new version completely before handing it
 * over. Hints make it read the head at once instead of at the next poll: the store's own
 * (`watchHead`, the folder store's file-system watch) and `hint()` (a publisher's notify). Any failure (store unreachable, document or object missing or corrupt) leaves the last good
 * snapshot in service; the error is logged, counted and shown in status(), and the attempt is
 * retried with exponential backoff (capped), so a broken store is not hammered.
 */
import { backoff } from '../backoff.js';
import type { ChannelReader, ContentReader } from '../snapshot/store/store.js';
import { errorMessage, silentLogger, type RelayLogger } from './log.js';
import { loadServedSnapshot } from './snapshot/load.js';
import type { LoadedSnapshot } from './snapshot/served-snapshot.js';

export interface FollowerOptions {
  readonly store: ContentReader & ChannelReader;
  readonly channel: string;
  /** Head polling period. Default 1000 ms. */
  readonly pollMs?: number;
  /** Backoff cap after repeated failures. Default 30 s. */
  readonly maxBackoffMs?: number;
  /** Called with each new verified snapshot, in version order. */
  readonly onSnapshot: (next: LoadedSnapshot, previous: LoadedSnapshot | undefined) => void;
  /** Use the store's head watch where it has one (default true; tests that drive polls turn it off). */
  readonly watchHead?: boolean;
  /** Called for every failed poll or load (metrics). */
  readonly onError?: (error: unknown) => void;
  /** Called after every successful poll (metrics: the store answers again). */
  readonly onPolled?: () => void;
  readonly log?: RelayLogger;
}

export interface FollowerStatus {
  readonly channel: string;
  readonly ready: boolean;
  /** Why not ready, or why the served snapshot is behind the head. */
  readonly reason?: string;
  readonly serving?: {
    readonly version: number;
    readonly digest: string;
    readonly loadedAt: string;
    readonly classes: number;
    readonly objects: number;
    readonly bytes: number;
  };
  readonly head?: { readonly version: number; readonly digest: string };
  readonly lastPollAt?: string;
  readonly lastError?: { readonly message: string; readonly at: string; readonly version?: number };
  readonly consecutiveFailures: number;
  readonly nextAttemptAt?: string;
}

export class SnapshotFollower {
  private readonly pollMs: number;
  private readonly maxBackoffMs: number;
  private readonly log: RelayLogger;
  private current: LoadedSnapshot | undefined;
  private head: { version: number; digest: string } | undefined;
  private lastPollAt: Date | undefined;
  private lastError: { message: string; at: Date; version?: number } | undefined;
  private failures = 0;
  private nextAttemptAt: Date | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private hintQueued = false;
  private unwatchHead: (() => void) | undefined;

  constructor(private readonly opts: FollowerOptions) {
    this.pollMs = opts.pollMs ?? 1000;
    this.maxBackoffMs = opts.maxBackoffMs ?? 30_000;
    this.log = opts.log ?? silentLogger;
  }

  /** The snapshot in service, if any. */
  get snapshot(): LoadedSnapshot | undefined {
    return this.current;
  }

  /** Makes the boot attempt (resolves whether or not it succeeded), then keeps polling. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.attempt();
  }

  /**
   * Stops polling. Waits up to `waitMs` for an attempt in progress (a big snapshot load must not
   * hold up a shutdown; a load that finishes after stop() is dropped, not handed over).
   */
  async stop(waitMs = 1000): Promise<void> {
    this.stopped = true;
    this.unwatchHead?.();
    this.unwatchHead = undefined;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.running) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.running, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  /** Polls now (tests, or an operator nudge); resolves when the attempt is done. */
  async pollNow(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    await this.attempt();
  }

  /**
   * The head may have moved: read it now. Bursts coalesce into one read after the one in progress;
   * while the store is failing, the backoff decides (a hint must not turn into hammering).
   */
  hint(): void {
    if (this.stopped || this.failures > 0 || this.hintQueued) return;
    this.hintQueued = true;
    void (async () => {
      while (this.running) await this.running;
      this.hintQueued = false;
      if (this.stopped) return;
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      await this.attempt();
    })();
  }

  status(): FollowerStatus {
    const c = this.current;
    const reason = !c
      ? (this.lastError?.message ??
        (this.head === undefined ? `channel ${this.opts.channel}: no snapshot loaded yet` : 'loading'))
      : this.lastError && this.head && this.head.version !== c.version
        ? `serving version ${c.version}; head version ${this.head.version} refused: ${this.lastError.message}`
        : this.lastError?.message;
    return {
      channel: this.opts.channel,
      ready: c !== undefined,
      ...(reason !== undefined ? { reason } : {}),
      ...(c
        ? {
            serving: {
              version: c.version,
              digest: c.digest,
              loadedAt: c.loadedAt.toISOString(),
              classes: c.classIds.length,
              objects: c.objects.size,
              bytes: c.objectBytes,
            },
          }
        : {}),
      ...(this.head ? { head: { ...this.head } } : {}),
      ...(this.lastPollAt ? { lastPollAt: this.lastPollAt.toISOString() } : {}),
      ...(this.lastError
        ? {
            lastError: {
              message: this.lastError.message,
              at: this.lastError.at.toISOString(),
              ...(this.lastError.version !== undefined ? { version: this.lastError.version } : {}),
            },
          }
        : {}),
      consecutiveFailures: this.failures,
      ...(this.nextAttemptAt ? { nextAttemptAt: this.nextAttemptAt.toISOString() } : {}),
    };
  }

  private attempt(): Promise<void> {
    const run = this.tick().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async tick(): Promise<void> {
    let delay = this.pollMs;
    // Before the first publish the channel's folder may not exist: try again on every poll.
    if (!this.unwatchHead && !this.stopped && this.opts.watchHead !== false)
      this.unwatchHead = this.opts.store.watchHead?.(this.opts.channel, () => this.hint());
    let version: number | undefined;
    try {
      const head = await this.opts.store.readChannel(this.opts.channel);
      this.lastPollAt = new Date();
      if (!head) {
        this.head = undefined;
        // A head that disappears under a served snapshot means the store was lost (folder
        // deleted, bucket emptied): a failure, while the last good snapshot stays in service.
        if (this.current)
          throw new Error(
            `channel ${this.opts.channel} head is gone from the store (deleted or emptied?); still serving version ${this.current.version}`,
          );
        this.lastError = { message: `channel ${this.opts.channel} has no versions yet`, at: new Date() };
      } else {
        this.head = { version: head.version, digest: head.digest };
        version = head.version;
        const c = this.current;
        if (c && c.version === head.version && c.digest === head.digest) {
          this.recovered();
        } else if (c && head.version < c.version) {
          // Heads only move forward; a lower one is a lagging replica of the store: keep serving.
          this.log.log('warn', 'snapshot.head_behind', {
            channel: this.opts.channel,
            serving: c.version,
            head: head.version,
          });
        } else {
          const started = performance.now();
          const next = await loadServedSnapshot(this.opts.store, this.opts.channel, head, c ? { previous: c } : {});
          if (this.stopped) return;
          this.current = next;
          this.recovered();
          this.log.log('info', 'snapshot.switch', {
            channel: this.opts.channel,
            version: next.version,
            digest: next.digest,
            from: c?.version ?? null,
            classes: next.classIds.length,
            objects: next.objects.size,
            loadMs: Math.round((performance.now() - started) * 10) / 10,
          });
          try {
            this.opts.onSnapshot(next, c);
          } catch (e) {
            this.log.log('error', 'snapshot.handoff_failed', { version: next.version, error: errorMessage(e) });
          }
        }
      }
      this.opts.onPolled?.();
    } catch (e) {
      this.failures++;
      this.lastError = { message: errorMessage(e), at: new Date(), ...(version !== undefined ? { version } : {}) };
      delay = backoff(this.failures, { baseMs: this.pollMs, maxMs: this.maxBackoffMs, jitter: 'none' });
      this.opts.onError?.(e);
      this.log.log(this.current ? 'warn' : 'error', 'snapshot.refused', {
        channel: this.opts.channel,
        ...(version !== undefined ? { version } : {}),
        serving: this.current?.version ?? null,
        failures: this.failures,
        retryInMs: delay,
        error: this.lastError.message,
      });
    }
    this.schedule(delay);
  }

  private recovered(): void {
    if (this.failures > 0)
      this.log.log('info', 'snapshot.recovered', { channel: this.opts.channel, afterFailures: this.failures });
    this.failures = 0;
    this.lastError = undefined;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer); // one loop only, even after pollNow()
    this.nextAttemptAt = new Date(Date.now() + delay);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.attempt();
    }, delay);
  }
}
