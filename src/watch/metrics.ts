/** Prometheus metrics of one watcher, in a private registry (tests run several in one process). */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export class WatchMetrics {
  readonly registry = new Registry();
  readonly events: Counter<'kind' | 'type'>;
  readonly informerErrors: Counter<'informer'>;
  readonly compiles: Counter<'mode' | 'result'>;
  readonly compileSeconds: Histogram<'mode'>;
  readonly debounceSeconds: Histogram;
  readonly publishes: Counter<'result'>;
  readonly lastKnownGood: Gauge;
  readonly synced: Gauge;
  readonly version: Gauge;
  readonly keptObjects: Gauge<'informer'>;
  readonly informerDenied: Gauge<'informer'>;
  readonly statusWrites: Counter<'result'>;
  readonly statusQueue: Gauge;

  constructor() {
    const registers = [this.registry];
    this.events = new Counter({
      name: 'meshsnap_watch_events_total',
      help: 'Informer events by kind and type (added, modified, deleted; unchanged = only noise changed).',
      labelNames: ['kind', 'type'],
      registers,
    });
    this.informerErrors = new Counter({
      name: 'meshsnap_watch_informer_errors_total',
      help: 'Informer failures (each is restarted with backoff).',
      labelNames: ['informer'],
      registers,
    });
    this.compiles = new Counter({
      name: 'meshsnap_watch_compiles_total',
      help: 'Compiles by mode (full, incremental, remote) and result (ok, error).',
      labelNames: ['mode', 'result'],
      registers,
    });
    this.compileSeconds = new Histogram({
      name: 'meshsnap_watch_compile_seconds',
      help: 'Time to compile and build a snapshot.',
      labelNames: ['mode'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.debounceSeconds = new Histogram({
      name: 'meshsnap_watch_debounce_seconds',
      help: 'Time from the first event of a round to its compile.',
      buckets: [0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20],
      registers,
    });
    this.publishes = new Counter({
      name: 'meshsnap_watch_publishes_total',
      help: 'Publish attempts by result (published, unchanged, refused by the publish guard, error).',
      labelNames: ['result'],
      registers,
    });
    this.lastKnownGood = new Gauge({
      name: 'meshsnap_watch_last_known_good_objects',
      help: 'Objects compiled from their last valid version because the current one is invalid.',
      registers,
    });
    this.synced = new Gauge({ name: 'meshsnap_watch_synced', help: '1 once every informer has synced.', registers });
    this.keptObjects = new Gauge({
      name: 'meshsnap_watch_informer_kept_objects',
      help: 'Objects kept because their informer relisted nothing where it listed them before (a lost RBAC rule, a deleted CRD).',
      labelNames: ['informer'],
      registers,
    });
    this.informerDenied = new Gauge({
      name: 'meshsnap_watch_informer_denied_status',
      help: 'The HTTP status (403, 404) an informer keeps failing with (a lost RBAC rule, a deleted CRD), its objects kept; 0 once it lists again.',
      labelNames: ['informer'],
      registers,
    });
    this.statusWrites = new Counter({
      name: 'meshsnap_watch_status_writes_total',
      help: 'Gateway API status writes (--write-status) by result: written, conflict (read again and retried), gone, refused (400/422), error (retried with backoff).',
      labelNames: ['result'],
      registers,
    });
    this.statusQueue = new Gauge({
      name: 'meshsnap_watch_status_queue',
      help: 'Gateway API objects whose status is waiting to be written (--write-status).',
      registers,
    });
    this.version = new Gauge({
      name: 'meshsnap_watch_published_version',
      help: 'The channel version last published by this watcher.',
      registers,
    });
  }
}
