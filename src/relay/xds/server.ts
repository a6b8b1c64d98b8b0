/**
 * The xDS server of the relay: registers ADS (SotW + delta) and the per-type CDS/EDS/LDS/RDS
 * services on a grpc-js server, serves the current ServedSnapshot, and on a switch pushes to each
 * stream only what changed for it, in make-before-break order (CDS, EDS, LDS, RDS):
 * https://www.envoyproxy.io/docs/envoy/latest/api-docs/xds_protocol#eventual-consistency-considerations
 */
import * as grpc from '@grpc/grpc-js';
import { XDS_TYPES } from '../../xds/type-urls.js';
import type { SecretResolver } from '../sds/secret-resolver.js';
import type { CallCredentials } from '../security/authenticate.js';
import type { ProxyIdentity } from '../security/identity.js';
import type { ProxyStatus, ServedSnapshot, XdsEvent } from '../types.js';
import { credentialsOf } from './call-credentials.js';
import type { StreamContext } from './context.js';
import { DeltaStream } from './delta-stream.js';
import { forLog } from '../client-text.js';
import { resetCallStream } from './abort-call.js';
import { Fanout, type StallReason } from './fanout.js';
import { frameWriter } from './grpc-frames.js';
import { DEFAULT_CLIENT_LIMITS, RequestRate, type ClientLimits } from './limits.js';
import { SotwCache } from './sotw-cache.js';
import { XDS_METHODS, serviceDefinition, type XdsMethod } from './services.js';
import { StatusError, type StreamBase, type XdsCall } from './stream-base.js';
import { SotwStream } from './sotw-stream.js';
import { LimitExceeded } from './status-error.js';

export interface XdsServerOptions {
  readonly onEvent?: (e: XdsEvent) => void;
  /** Streams beyond this get RESOURCE_EXHAUSTED. Default 20000. */
  readonly maxStreams?: number;
  /** Response writes in flight across all streams. Default 256. */
  readonly writeConcurrency?: number;
  /** A write unfinished after this long gives back its shared slot. Default 250 ms. */
  readonly slowWriteMs?: number;
  /** A stream whose write is unfinished after this long is closed (UNAVAILABLE). Default 10 s. */
  readonly writeTimeoutMs?: number;
  /** Queued responses per stream beyond which it is closed. Default 64. */
  readonly maxQueuedWrites?: number;
  /** What a client may send (defaults: DEFAULT_CLIENT_LIMITS). */
  readonly limits?: Partial<ClientLimits>;
  /** A stream was closed because it did not drain its writes. */
  readonly onStalled?: (streamId: string, nodeId: string, why: StallReason) => void;
  /** A stream was closed for going over a client limit (rate, size). */
  readonly onLimited?: (streamId: string, nodeId: string, reason: string) => void;
  /** One line per event class (NACK, rejection, stream errors). Default: none. */
  readonly log?: (line: string) => void;
  /** Who may open a stream, and the secrets served to them. Default: anyone, anonymously; no secrets. */
  readonly security?: XdsSecurity;
}

/** A stream's admission: who it is (undefined: anonymous) and whether it may read keys over SDS. */
export type Admission =
  | { readonly ok: true; readonly identity?: ProxyIdentity; readonly mayReadKeys: boolean }
  | { readonly ok: false; readonly reason: string };

export interface XdsSecurity {
  /** Authenticates a stream from its credentials, before any of its requests is handled. */
  admit(creds: CallCredentials): Promise<Admission>;
  /** SDS from Kubernetes Secrets; undefined: secret names are not served. */
  readonly secrets?: SecretResolver;
}

const ANYONE: XdsSecurity = { admit: () => Promise.resolve({ ok: true, mayReadKeys: false }) };

/** Requests a stream may send before its authentication finishes; more end it. */
const MAX_REQUESTS_BEFORE_ADMISSION = 64;

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
  private readonly limits: ClientLimits;
  private readonly onStalled: NonNullable<XdsServerOptions['onStalled']>;
  private readonly onLimited: NonNullable<XdsServerOptions['onLimited']>;
  private readonly security: XdsSecurity;

  constructor(options: XdsServerOptions = {}) {
    this.fanout = new Fanout({
      limit: options.writeConcurrency ?? 256,
      ...(options.slowWriteMs !== undefined ? { slowWriteMs: options.slowWriteMs } : {}),
      ...(options.writeTimeoutMs !== undefined ? { writeTimeoutMs: options.writeTimeoutMs } : {}),
      ...(options.maxQueuedWrites !== undefined ? { maxQueued: options.maxQueuedWrites } : {}),
    });
    this.limits = { ...DEFAULT_CLIENT_LIMITS, ...options.limits };
    this.onStalled = options.onStalled ?? (() => {});
    this.onLimited = options.onLimited ?? (() => {});
    this.maxStreams = options.maxStreams ?? 20000;
    this.onEvent = options.onEvent ?? (() => {});
    this.logLine = options.log ?? (() => {});
    this.security = options.security ?? ANYONE;
    // A Secret changed: every authenticated stream subscribed to secrets gets them again (only what
    // changed is sent). Not only its namespace: a verified `kubernetes-gateway://` name may point
    // across namespaces.
    this.security.secrets?.source.onChange(() => {
      for (const s of this.streams.values()) if (!s.isEnded && s.identity) s.pushSecrets();
    });
  }

  /** Registers every xDS service on a grpc-js server (call before bindAsync/start). */
  addTo(server: grpc.Server): void {
    for (const service of new Set(XDS_METHODS.map((m) => m.service))) {
      const handlers: grpc.UntypedServiceImplementation = {};
      for (const m of XDS_METHODS.filter((x) => x.service === service))
        handlers[m.method] = (call: XdsCall) => this.open(m, call);
      server.addService(serviceDefinition(service), handlers);
    }
  }

  get streamCount(): number {
    return this.streams.size;
  }

  get current(): ServedSnapshot | undefined {
    return this.snapshot;
  }

  /** Writes holding a shared slot (for tests and metrics). */
  get writesInFlight(): number {
    return this.fanout.inFlight;
  }

  /** Writes unfinished past slowWriteMs: streams that are not reading (for metrics). */
  get slowWrites(): number {
    return this.fanout.slowWrites;
  }

  /**
   * Switches to a snapshot: every stream is re-placed (its class may differ in the new snapshot)
   * and gets, type by type in CDS, EDS, LDS, RDS order, only the types whose resources changed.
   */
  setSnapshot(snapshot: ServedSnapshot): void {
    this.snapshot = snapshot;
    this.cache = new SotwCache(snapshot, this.nextNonce(), this.cache);
    this.switchedAt = Date.now();
    const live = [...this.streams.values()].filter((s) => s.node !== undefined && !s.isEnded);
    const placed = live.filter((s) => s.place(snapshot));
    for (const type of XDS_TYPES) for (const s of placed) s.pushType(type);
    // A class's verified `kubernetes-gateway://` names may have changed with the snapshot.
    for (const s of live) if (!s.isEnded && s.identity) s.pushSecrets();
  }

  /** Nonces of every stream come from one counter: a switch's shared push nonce is never a stream's own. */
  private nextNonce(): string {
    return (++this.nonceCounter).toString(36);
  }

  /** Resolves when every write queued so far has reached its stream (stalled streams aside). */
  written(): Promise<void> {
    return this.fanout.whenIdle();
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
    // Getters: streams always see the server's current snapshot and cache (read a few times per
    // stream and type on every switch: no object per read).
    const snapshot = (): ServedSnapshot | undefined => this.snapshot;
    const cache = (): SotwCache | undefined => this.cache;
    const switchedAt = (): number => this.switchedAt;
    return {
      get snapshot() {
        return snapshot();
      },
      get sotwCache() {
        return cache();
      },
      get switchedAt() {
        return switchedAt();
      },
      fanout: this.fanout,
      limits: this.limits,
      secrets: this.security.secrets,
      nextNonce: () => this.nextNonce(),
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
    if (method.fixedType === 'secrets' && !this.security.secrets) {
      call.emit('error', {
        code: grpc.status.UNIMPLEMENTED,
        details: 'this relay serves no secrets: it has no Kubernetes access configured (meshsnap relay --kubeconfig)',
      });
      return;
    }
    if (this.streams.size >= this.maxStreams) {
      this.logLine(`xds: stream refused: ${this.streams.size} streams open (max ${this.maxStreams})`);
      call.emit('error', {
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: `too many xDS streams on this relay (max ${this.maxStreams})`,
      });
      return;
    }
    const id = `s${++this.streamCounter}`;
    const ctx = this.sharedContext ?? (this.sharedContext = this.context());
    // `stream` is assigned below; a stall is only reported after a write, so it is set by then.
    const writer = this.fanout.writer(frameWriter(call), (why) => {
      const detail =
        why.kind === 'write-timeout'
          ? `a response was not read within ${why.ms} ms`
          : `${why.queued} responses queued unread`;
      this.logLine(`xds: stream ${id} node=${forLog(stream.nodeId || '?')} closed: stalled (${detail})`);
      this.onStalled(id, stream.nodeId, why);
      stream.fail(new StatusError(grpc.status.UNAVAILABLE, `closed by the relay: ${detail}`));
      // The status above waits behind the unread write: reset the HTTP/2 stream so it really ends.
      if (!resetCallStream(call))
        this.logLine(`xds: stream ${id}: could not reset the HTTP/2 stream (grpc-js internals changed?)`);
    });
    const rate = new RequestRate(this.limits.requestsPerSecond, this.limits.requestBurst);
    const stream: StreamBase = method.delta
      ? new DeltaStream(id, 'delta', call, ctx, writer, method.fixedType)
      : new SotwStream(id, 'sotw', call, ctx, writer, method.fixedType);
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
    const handle = (req: object): void => {
      if (stream.isEnded) return;
      try {
        stream.handle(req);
      } catch (err) {
        fail(err);
      }
    };
    const fail = (err: unknown): void => {
      const e = err instanceof StatusError ? err : new StatusError(grpc.status.INTERNAL, (err as Error).message);
      if (e instanceof LimitExceeded) this.onLimited(id, stream.nodeId, e.message);
      this.logLine(`xds: stream ${id} node=${forLog(stream.nodeId || '?')} ended: ${forLog(e.message, 512)}`);
      stream.fail(e);
    };
    // Authentication starts with the first request (so a refusal is recorded under the node id it
    // claims); requests wait until it is done.
    let waiting: object[] | undefined;
    let admitted = false;
    const admit = (first: object): void => {
      waiting = [first];
      void this.security.admit(credentialsOf(call)).then(
        (admission) => {
          const queued = waiting ?? [];
          waiting = undefined;
          if (stream.isEnded) return;
          if (!admission.ok) {
            ctx.emit({ kind: 'rejected', nodeId: claimedNodeId(first), reason: admission.reason, at: Date.now() });
            return fail(new StatusError(grpc.status.UNAUTHENTICATED, admission.reason));
          }
          admitted = true;
          stream.identity = admission.identity;
          stream.mayReadKeys = admission.mayReadKeys;
          for (const req of queued) handle(req);
        },
        (err: unknown) => {
          waiting = undefined;
          fail(new StatusError(grpc.status.UNAVAILABLE, `authentication could not be done: ${(err as Error).message}`));
        },
      );
    };
    call.on('data', (req: object) => {
      if (stream.isEnded) return;
      if (!rate.take()) {
        const reason = `more than ${this.limits.requestBurst} requests at once or ${this.limits.requestsPerSecond} per second`;
        return fail(new LimitExceeded(grpc.status.RESOURCE_EXHAUSTED, `closed by the relay: ${reason}`));
      }
      if (admitted) return handle(req);
      if (!waiting) return admit(req);
      if (waiting.length >= MAX_REQUESTS_BEFORE_ADMISSION)
        return fail(new LimitExceeded(grpc.status.RESOURCE_EXHAUSTED, 'too many requests before authentication'));
      waiting.push(req);
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

/** The node id a (not yet handled) request claims, bounded, for the record of a refused stream. */
function claimedNodeId(req: object | undefined): string {
  const id = (req as { node?: { id?: unknown } } | undefined)?.node?.id;
  return typeof id === 'string' ? id.slice(0, 1024) : '';
}
