/**
 * The xDS server of the relay: registers ADS (SotW + delta) and the per-type CDS/EDS/LDS/RDS
 * services on a grpc-js server, serves the current ServedSnapshot, and on a switch pushes to each
 * stream only what changed for it, in make-before-break order (CDS, EDS, LDS, RDS):
 * https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#eventual-consistency-considerations
 */
import * as grpc from '@grpc/grpc-js';
import { XDS_TYPES } from '../../xds/type-urls.js';
import type { ProxyStatus, ServedSnapshot, XdsEvent } from '../types.js';
import type { StreamContext } from './context.js';
import { DeltaStream } from './delta-stream.js';
import { Fanout } from './fanout.js';
import { SotwCache } from './sotw-cache.js';
import { XDS_METHODS, serviceDefinition, type XdsMethod } from './services.js';
import { StatusError, type StreamBase, type XdsCall } from './stream-base.js';
import { SotwStream } from './sotw-stream.js';

export interface XdsServerOptions {
  readonly onEvent?: (e: XdsEvent) => void;
  /** Streams beyond this get RESOURCE_EXHAUSTED. Default 20000. */
  readonly maxStreams?: number;
  /** Response writes in flight across all streams. Default 256. */
  readonly writeConcurrency?: number;
  /** One line per event class (NACK, rejection, stream errors). Default: none. */
  readonly log?: (line: string) => void;
}

export class XdsServer {
  private readonly streams = new Map<string, StreamBase>();
  private readonly fanout: Fanout;
  private readonly maxStreams: number;
  private readonly onEvent: (e: XdsEvent) => void;
  private readonly logLine: (line: string) => void;
  private snapshot: ServedSnapshot | undefined;
  private cache: SotwCache | undefined;
  private switchedAt = 0;
  private nonceCounter = 0;
  private streamCounter = 0;
  private draining = false;
  private readonly closedWaiters = new Set<() => void>();
  private sharedContext: StreamContext | undefined;

  constructor(options: XdsServerOptions = {}) {
    this.fanout = new Fanout(Math.max(1, options.writeConcurrency ?? 256));
    this.maxStreams = options.maxStreams ?? 20000;
    this.onEvent = options.onEvent ?? (() => {});
    this.logLine = options.log ?? (() => {});
  }

  /** Registers every xDS service on a grpc-js server (call before bindAsync/start). */
  addTo(server: grpc.Server): void {
    for (const service of new Set(XDS_METHODS.map((m) => m.service))) {
      const handlers: grpc.UntypedServiceImplementation = {};
      for (const m of XDS_METHODS.filter((x) => x.service === service)) handlers[m.method] = (call: XdsCall) => this.open(m, call);
      server.addService(serviceDefinition(service), handlers);
    }
  }

  get streamCount(): number {
    return this.streams.size;
  }

  get current(): ServedSnapshot | undefined {
    return this.snapshot;
  }

  /** Writes queued or in flight (for tests and metrics). */
  get writesInFlight(): number {
    return this.fanout.inFlight;
  }

  /**
   * Switches to a snapshot: every stream is re-placed (its class may differ in the new snapshot)
   * and gets, type by type in CDS, EDS, LDS, RDS order, only the types whose resources changed.
   */
  setSnapshot(snapshot: ServedSnapshot): void {
    this.snapshot = snapshot;
    this.cache = new SotwCache(snapshot);
    this.switchedAt = Date.now();
    const live = [...this.streams.values()].filter((s) => s.node !== undefined && !s.isEnded);
    const placed = live.filter((s) => s.place(snapshot));
    for (const type of XDS_TYPES) for (const s of placed) s.pushType(type);
  }

  statuses(): ProxyStatus[] {
    return [...this.streams.values()].filter((s) => s.node !== undefined).map((s) => s.proxyStatus());
  }

  /** Stops accepting streams and ends the open ones with status OK (proxies reconnect elsewhere). */
  async drain(timeoutMs = 5000): Promise<void> {
    this.draining = true;
    for (const s of this.streams.values()) s.end();
    if (this.streams.size === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      timer.unref();
      const check = (): void => {
        if (this.streams.size === 0) done();
      };
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.closedWaiters.add(check);
    });
    this.closedWaiters.clear();
  }

  private context(): StreamContext {
    // Getters: streams always see the server's current snapshot and cache.
    const current = (): { snapshot: ServedSnapshot | undefined; cache: SotwCache | undefined; at: number } => ({ snapshot: this.snapshot, cache: this.cache, at: this.switchedAt });
    return {
      get snapshot() {
        return current().snapshot;
      },
      get sotwCache() {
        return current().cache;
      },
      get switchedAt() {
        return current().at;
      },
      fanout: this.fanout,
      nextNonce: () => (++this.nonceCounter).toString(36),
      emit: (e) => {
        try {
          this.onEvent(e);
        } catch (err) {
          this.logLine(`xds: event handler failed: ${(err as Error).message}`);
        }
      },
      log: (line) => this.logLine(line),
    };
  }

  private open(method: XdsMethod, call: XdsCall): void {
    if (this.draining) {
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'relay is shutting down' });
      return;
    }
    if (this.streams.size >= this.maxStreams) {
      this.logLine(`xds: stream refused: ${this.streams.size} streams open (max ${this.maxStreams})`);
      call.emit('error', { code: grpc.status.RESOURCE_EXHAUSTED, details: `too many xDS streams on this relay (max ${this.maxStreams})` });
      return;
    }
    const id = `s${++this.streamCounter}`;
    const ctx = this.sharedContext ?? (this.sharedContext = this.context());
    const writer = this.fanout.writer(call);
    const stream = method.delta ? new DeltaStream(id, 'delta', call, ctx, writer, method.fixedType) : new SotwStream(id, 'sotw', call, ctx, writer, method.fixedType);
    this.streams.set(id, stream);

    let gone = false;
    const close = (): void => {
      if (gone) return;
      gone = true;
      stream.closed();
      this.streams.delete(id);
      if (stream.node) ctx.emit({ kind: 'disconnect', streamId: id, nodeId: stream.nodeId, at: Date.now() });
      for (const w of this.closedWaiters) w();
    };
    call.on('data', (req: object) => {
      if (stream.isEnded) return;
      try {
        stream.handle(req);
      } catch (err) {
        const e = err instanceof StatusError ? err : new StatusError(grpc.status.INTERNAL, (err as Error).message);
        this.logLine(`xds: stream ${id} node=${stream.nodeId || '?'} ended: ${e.message}`);
        stream.fail(e);
      }
    });
    // The proxy half-closed: finish our side too.
    call.on('end', () => {
      stream.end();
    });
    call.on('cancelled', close);
    call.on('close', close);
    call.on('finish', close);
    call.on('error', close);
  }
}
