/**
 * Prometheus metrics of one relay, in a private registry (several relays may share a process in
 * tests, and the global registry would mix them).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { XDS_TYPES, xdsTypeOfUrl } from '../xds/type-urls.js';
import { SECRET_TYPE_URL } from './sds/secret-material.js';
import type { XdsEvent } from './types.js';

export interface MetricsSources {
  /** Open xDS streams right now. */
  readonly streams: () => number;
  /** Response writes unfinished past the slow-write bound (proxies not reading). */
  readonly slowWrites?: () => number;
}

/** Label value for a type URL: `clusters`, `endpoints`, … (or the URL of an unknown type). */
const typeLabel = (typeUrl: string): string =>
  xdsTypeOfUrl(typeUrl) ?? (typeUrl === SECRET_TYPE_URL ? 'secrets' : typeUrl);

/** Per type URL, the pushes, ACKs and push latencies (ms → how many) not yet handed to prom-client. */
class Tally {
  private readonly byUrl = new Map<string, { pushes: number; acks: number; latencies: Map<number, number> }>();

  of(typeUrl: string): { pushes: number; acks: number; latencies: Map<number, number> } {
    let t = this.byUrl.get(typeUrl);
    // Bounded: type URLs of pushes and ACKs are the relay's own types.
    if (!t) this.byUrl.set(typeUrl, (t = { pushes: 0, acks: 0, latencies: new Map() }));
    return t;
  }

  /** Hands each type's pending counts to `apply` (by type label) and clears them. */
  drain(
    apply: (type: string, t: { pushes: number; acks: number; latencies: ReadonlyMap<number, number> }) => void,
  ): void {
    for (const [url, t] of this.byUrl) {
      if (t.pushes === 0 && t.acks === 0 && t.latencies.size === 0) continue;
      apply(typeLabel(url), t);
      t.pushes = 0;
      t.acks = 0;
      t.latencies.clear();
    }
  }
}

export class RelayMetrics {
  readonly registry = new Registry();
  private readonly tally = new Tally();
  readonly pushes: Counter<'type'>;
  readonly pushLatency: Histogram<'type'>;
  readonly acks: Counter<'type'>;
  readonly nacks: Counter<'type'>;
  readonly connections: Counter<'protocol'>;
  readonly rejected: Counter;
  readonly snapshotVersion: Gauge;
  readonly snapshotSwitches: Counter;
  readonly storeErrors: Counter;
  readonly auditErrors: Counter;
  readonly auditDropped: Counter;
  readonly ready: Gauge;
  readonly stalledStreams: Counter;
  readonly limitedStreams: Counter;
  readonly storeOk: Gauge;
  readonly storeFailures: Gauge;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    new Gauge({
      name: 'meshsnap_relay_streams',
      help: 'Open xDS streams.',
      registers,
      collect() {
        this.set(sources.streams());
      },
    });
    // Every metric fed by the tally takes it in before it is read (whichever is read first).
    const takeTally = (): void =>
      this.tally.drain((type, t) => {
        if (t.pushes > 0) this.pushes.inc({ type }, t.pushes);
        if (t.acks > 0) this.acks.inc({ type }, t.acks);
        for (const [ms, n] of t.latencies) for (let i = 0; i < n; i++) this.pushLatency.observe({ type }, ms / 1000);
      });
    this.pushes = new Counter({
      name: 'meshsnap_relay_pushes_total',
      help: 'DiscoveryResponses sent, by xDS type.',
      labelNames: ['type'],
      registers,
      collect: takeTally,
    });
    this.pushLatency = new Histogram({
      name: 'meshsnap_relay_push_latency_seconds',
      help: 'From a snapshot switch (or a request) to the response being written, by xDS type.',
      labelNames: ['type'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
      collect: takeTally,
    });
    this.acks = new Counter({
      name: 'meshsnap_relay_acks_total',
      help: 'ACKs received, by xDS type.',
      labelNames: ['type'],
      registers,
      collect: takeTally,
    });
    this.nacks = new Counter({
      name: 'meshsnap_relay_nacks_total',
      help: 'NACKs received, by xDS type.',
      labelNames: ['type'],
      registers,
    });
    this.connections = new Counter({
      name: 'meshsnap_relay_connections_total',
      help: 'xDS streams accepted, by protocol.',
      labelNames: ['protocol'],
      registers,
    });
    this.rejected = new Counter({
      name: 'meshsnap_relay_rejected_streams_total',
      help: 'xDS streams refused (unknown or malformed node, stream cap).',
      registers,
    });
    this.snapshotVersion = new Gauge({
      name: 'meshsnap_relay_snapshot_version',
      help: 'Channel version of the snapshot being served (0: none yet).',
      registers,
    });
    this.snapshotSwitches = new Counter({
      name: 'meshsnap_relay_snapshot_switches_total',
      help: 'Snapshots loaded, verified and switched to.',
      registers,
    });
    this.storeErrors = new Counter({
      name: 'meshsnap_relay_store_errors_total',
      help: 'Failed store polls or snapshot loads (store unreachable, missing or corrupt data).',
      registers,
    });
    this.auditErrors = new Counter({
      name: 'meshsnap_relay_audit_errors_total',
      help: 'Failed audit log appends (retried).',
      registers,
    });
    this.auditDropped = new Counter({
      name: 'meshsnap_relay_audit_dropped_total',
      help: 'Audit records dropped because the buffer was full.',
      registers,
    });
    this.ready = new Gauge({ name: 'meshsnap_relay_ready', help: '1 once a snapshot is served.', registers });
    this.stalledStreams = new Counter({
      name: 'meshsnap_relay_stalled_streams_total',
      help: 'xDS streams closed because they did not read their responses in time.',
      registers,
    });
    this.limitedStreams = new Counter({
      name: 'meshsnap_relay_limited_streams_total',
      help: 'xDS streams closed for going over a client limit (node size, resource names, request rate).',
      registers,
    });
    this.storeOk = new Gauge({
      name: 'meshsnap_relay_store_ok',
      help: '1 while the last store poll succeeded, 0 after a failed one.',
      registers,
    });
    this.storeFailures = new Gauge({
      name: 'meshsnap_relay_store_consecutive_failures',
      help: 'Failed store polls or loads in a row (0 when the store answers).',
      registers,
    });
    new Gauge({
      name: 'meshsnap_relay_slow_writes',
      help: 'Responses written but not read by their proxy past the slow-write bound.',
      registers,
      collect() {
        this.set(sources.slowWrites?.() ?? 0);
      },
    });
    // Pre-create the per-type series so dashboards see zeros, not gaps.
    for (const t of XDS_TYPES) {
      this.pushes.inc({ type: t }, 0);
      this.acks.inc({ type: t }, 0);
      this.nacks.inc({ type: t }, 0);
    }
    this.snapshotVersion.set(0);
    this.ready.set(0);
    this.storeOk.set(1);
    this.storeFailures.set(0);
  }

  /**
   * Counts one xDS server event. A switch makes one push and one ACK per stream, in the middle of
   * writing the others: they are tallied in plain numbers here and handed to prom-client when it is
   * scraped (its per-call label hashing was a few per cent of a switch's CPU).
   */
  observe(e: XdsEvent): void {
    switch (e.kind) {
      case 'push': {
        const t = this.tally.of(e.typeUrl);
        t.pushes++;
        if (e.latencyMs !== undefined) t.latencies.set(e.latencyMs, (t.latencies.get(e.latencyMs) ?? 0) + 1);
        break;
      }
      case 'ack':
        this.tally.of(e.typeUrl).acks++;
        break;
      case 'nack':
        this.nacks.inc({ type: typeLabel(e.typeUrl) });
        break;
      case 'connect':
        this.connections.inc({ protocol: e.protocol });
        break;
      case 'rejected':
        this.rejected.inc();
        break;
      case 'disconnect':
        break;
    }
  }

  snapshotServed(version: number): void {
    this.snapshotVersion.set(version);
    this.snapshotSwitches.inc();
    this.ready.set(1);
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
