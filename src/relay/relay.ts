/**
 * The relay process, minus the command line: a grpc-js server carrying the xDS services (XdsServer),
 * the store follower feeding it verified snapshots, the HTTP side (health, readiness, debug,
 * metrics) and the audit log. Several relays may serve one store side by side: they share nothing
 * but the store, and each writes its own audit batches.
 */
import * as grpc from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { RelayStore } from '../snapshot/store/store.js';
import { AuditLog } from './audit.js';
import { SnapshotFollower, type FollowerStatus } from './follower.js';
import { forLog } from './client-text.js';
import { startHttpServer } from './http.js';
import { errorMessage, silentLogger, type RelayLogger } from './log.js';
import { RelayMetrics } from './metrics.js';
import { proxiesPage } from './proxy-status.js';
import { connectionAuditor } from './connection-audit.js';
import { SecretResolver } from './sds/secret-resolver.js';
import type { SecretSource } from './sds/secret-source.js';
import { RelaySecurity, type RelaySecurityOptions, type SecurityStatus } from './security/relay-security.js';
import type { LoadedSnapshot } from './snapshot/served-snapshot.js';
import type { ProxyStatus, XdsEvent } from './types.js';
import type { ClientLimits } from './xds/limits.js';
import { XdsServer } from './xds/server.js';

const round = (ms: number): number => Math.round(ms * 10) / 10;

export interface KeepaliveOptions {
  /** Server pings an idle connection after this long. Default 30 s. */
  readonly timeMs?: number;
  /** …and drops it when the ping is not answered in this long. Default 10 s. */
  readonly timeoutMs?: number;
  /** Minimum client ping interval without data before the server complains. Default 10 s. */
  readonly minPingIntervalMs?: number;
  /** Close connections older than this (rebalances proxies across relays). Default: never. */
  readonly maxConnectionAgeMs?: number;
}

export interface RelayOptions {
  readonly store: RelayStore;
  readonly channel?: string;
  /** xDS gRPC port; 0 picks a free one. Default 15010. */
  readonly port?: number;
  /** HTTP port; 0 picks a free one. Default 15014. */
  readonly httpPort?: number;
  /** Default 0.0.0.0. */
  readonly host?: string;
  /** Channel head polling. Default 1000 ms. */
  readonly pollMs?: number;
  readonly maxBackoffMs?: number;
  /** xDS streams beyond this get RESOURCE_EXHAUSTED. */
  readonly maxStreams?: number;
  /** Response writes in flight across all streams. */
  readonly writeConcurrency?: number;
  /** A response write unfinished after this long gives back its shared slot. Default 250 ms. */
  readonly slowWriteMs?: number;
  /** A stream that has not read a response after this long is closed. Default 10 s. */
  readonly writeTimeoutMs?: number;
  /** Bounds on what xDS clients send (README "Limits"). */
  readonly limits?: Partial<ClientLimits>;
  /** /readyz turns 503 after this many failed store polls in a row. Default: never (a field says it). */
  readonly unreadyAfterStoreFailures?: number;
  readonly keepalive?: KeepaliveOptions;
  readonly auditFlushMs?: number;
  readonly auditMaxBatch?: number;
  /** Names this relay in logs and audit records. Default `<hostname>-<random>`. */
  readonly relayId?: string;
  /** How long close() lets streams end before forcing. Default 5 s. */
  readonly drainTimeoutMs?: number;
  readonly log?: RelayLogger;
  /** TLS, authentication, insecure mode, debug token (README "Relay security"). Default: insecure, said loudly. */
  readonly security?: RelaySecurityOptions;
  /** Kubernetes Secrets for SDS (gateway credentials); without it, secret names are not served. */
  readonly secrets?: SecretSource;
}

export interface RelayStatus {
  readonly relay: string;
  readonly channel: string;
  readonly draining: boolean;
  readonly streams: number;
  readonly snapshot: FollowerStatus;
  readonly audit: { readonly pending: number; readonly written: number };
  readonly security: SecurityStatus;
}

export interface Relay {
  readonly port: number;
  readonly httpPort: number;
  readonly relayId: string;
  readonly xds: XdsServer;
  readonly follower: SnapshotFollower;
  readonly metrics: RelayMetrics;
  readonly audit: AuditLog;
  status(): RelayStatus;
  /** Graceful: stop accepting, end the streams (proxies reconnect to another relay), flush the audit log. Idempotent. */
  close(): Promise<void>;
}

export async function startRelay(opts: RelayOptions): Promise<Relay> {
  const log = opts.log ?? silentLogger;
  const channel = opts.channel ?? 'main';
  const host = opts.host ?? '0.0.0.0';
  const relayId = opts.relayId ?? `${hostname().replace(/[^A-Za-z0-9._-]/g, '_')}-${randomBytes(3).toString('hex')}`;
  let draining = false;

  // Digests of recent versions, for audit records (an ACK may arrive for the previous version).
  const digests = new Map<number, string>();
  // `server` is created below; the gauge only reads it at scrape time.
  const metrics = new RelayMetrics({ streams: () => server.streamCount, slowWrites: () => server.slowWrites });
  const audit = new AuditLog({
    store: opts.store,
    relayId,
    channel,
    ...(opts.auditFlushMs !== undefined ? { flushMs: opts.auditFlushMs } : {}),
    ...(opts.auditMaxBatch !== undefined ? { maxBatch: opts.auditMaxBatch } : {}),
    digestOf: (v) => digests.get(v),
    onError: () => metrics.auditErrors.inc(),
    onDropped: (n) => metrics.auditDropped.inc(n),
    log,
  });

  const secrets = opts.secrets
    ? new SecretResolver(opts.secrets, (ref, reason) =>
        log.log('warn', 'sds.invalid_secret', { namespace: ref.namespace, name: ref.name, reason }),
      )
    : undefined;
  const security = new RelaySecurity(opts.security ?? { insecure: true }, secrets, {
    onReload: (m) => log.log('info', 'relay.tls_reloaded', { fingerprint: m.fingerprint, notAfter: m.notAfter }),
    onError: (error) =>
      log.log('error', 'relay.tls_reload_failed', { error, keeping: security.provider?.current.fingerprint }),
  });

  const connections = connectionAuditor(relayId, channel);
  const onEvent = (e: XdsEvent): void => {
    metrics.observe(e);
    audit.observe(e);
    const connection = connections(e);
    if (connection) audit.add(connection);
    switch (e.kind) {
      case 'nack':
        log.log('warn', 'xds.nack', {
          node: forLog(e.nodeId),
          class: e.classId,
          type: e.typeUrl,
          version: e.version,
          snapshot: e.snapshotVersion,
          error: forLog(e.error, 1024),
        });
        break;
      case 'rejected':
        log.log('warn', 'xds.rejected', {
          node: forLog(e.nodeId),
          ...(e.identity !== undefined ? { identity: forLog(e.identity) } : {}),
          reason: forLog(e.reason, 1024),
        });
        break;
      case 'secret-denied':
        log.log('warn', 'sds.denied', {
          node: forLog(e.nodeId),
          ...(e.identity !== undefined ? { identity: forLog(e.identity) } : {}),
          name: forLog(e.name),
          reason: forLog(e.reason, 1024),
        });
        break;
      case 'connect':
        log.log('debug', 'xds.connect', {
          stream: e.streamId,
          node: forLog(e.nodeId),
          class: e.classId,
          protocol: e.protocol,
        });
        break;
      case 'disconnect':
        log.log('debug', 'xds.disconnect', { stream: e.streamId, node: forLog(e.nodeId) });
        break;
      default:
        break;
    }
  };
  const server = new XdsServer({
    onEvent,
    ...(opts.maxStreams !== undefined ? { maxStreams: opts.maxStreams } : {}),
    ...(opts.writeConcurrency !== undefined ? { writeConcurrency: opts.writeConcurrency } : {}),
    ...(opts.slowWriteMs !== undefined ? { slowWriteMs: opts.slowWriteMs } : {}),
    ...(opts.writeTimeoutMs !== undefined ? { writeTimeoutMs: opts.writeTimeoutMs } : {}),
    ...(opts.limits !== undefined ? { limits: opts.limits } : {}),
    onStalled: () => metrics.stalledStreams.inc(),
    onLimited: () => metrics.limitedStreams.inc(),
    log: (line) => log.log('info', 'xds.server', { message: line }),
    security: security.xdsSecurity(),
  });

  const follower = new SnapshotFollower({
    store: opts.store,
    channel,
    ...(opts.pollMs !== undefined ? { pollMs: opts.pollMs } : {}),
    ...(opts.maxBackoffMs !== undefined ? { maxBackoffMs: opts.maxBackoffMs } : {}),
    onSnapshot: (next: LoadedSnapshot) => {
      digests.set(next.version, next.digest);
      for (const v of digests.keys()) if (digests.size > 16 && v !== next.version) digests.delete(v);
      const started = performance.now();
      const cpu = process.cpuUsage();
      server.setSnapshot(next);
      metrics.snapshotServed(next.version);
      const queuedMs = performance.now() - started;
      const written = server.written();
      audit.holdUntil(written);
      void written.then(() => {
        // The process's CPU from the switch to the last write (ACKs handled meanwhile included).
        const used = process.cpuUsage(cpu);
        log.log('info', 'snapshot.pushed', {
          channel,
          version: next.version,
          streams: server.streamCount,
          queuedMs: round(queuedMs),
          writtenMs: round(performance.now() - started),
          cpuMs: round((used.user + used.system) / 1000),
        });
      });
    },
    onError: () => {
      metrics.storeErrors.inc();
      metrics.storeOk.set(0);
      metrics.storeFailures.set(follower.status().consecutiveFailures);
    },
    onPolled: () => {
      metrics.storeOk.set(1);
      metrics.storeFailures.set(0);
    },
    log,
  });

  const status = (): RelayStatus => ({
    relay: relayId,
    channel,
    draining,
    streams: server.streamCount,
    snapshot: follower.status(),
    audit: { pending: audit.pending, written: audit.written },
    security: security.status(),
  });

  // HTTP first: /healthz answers and /readyz says "loading" while the boot snapshot is verified.
  const http = await startHttpServer({
    host,
    port: opts.httpPort ?? 15014,
    log,
    ...(opts.security?.debugToken !== undefined ? { debugToken: opts.security.debugToken } : {}),
    sources: {
      readiness: () => ({
        ...readiness(follower.status(), draining, server.statuses(), opts.unreadyAfterStoreFailures),
        security: security.status(),
      }),
      proxies: (page) => ({
        relay: relayId,
        channel,
        snapshotVersion: follower.snapshot?.version ?? null,
        ...proxiesPage(server.statuses(), page),
      }),
      snapshot: status,
      metrics: () => metrics.render(),
      notify: (ch) => {
        if (ch !== undefined && ch !== channel) return false;
        follower.hint();
        return true;
      },
    },
  });

  // Boot: the channel head is loaded and every digest checked before anything is served.
  await follower.start();

  const grpcServer = new grpc.Server(grpcOptions(opts.keepalive));
  server.addTo(grpcServer);
  let port: number;
  try {
    port = await new Promise<number>((resolve, reject) =>
      grpcServer.bindAsync(`${host}:${opts.port ?? 15010}`, security.serverCredentials(), (err, bound) =>
        err ? reject(err) : resolve(bound),
      ),
    );
  } catch (e) {
    await follower.stop();
    await http.close();
    await opts.secrets?.close();
    throw e;
  }

  log.log('info', 'relay.listening', {
    relay: relayId,
    host,
    port,
    httpPort: http.port,
    channel,
    serving: follower.snapshot?.version ?? null,
    ready: follower.status().ready,
    tls: security.provider !== undefined,
    authentication: security.authenticators.map((a) => a.name),
    secrets: secrets !== undefined,
  });
  if (security.insecure) log.log('warn', 'relay.insecure', { relay: relayId, warning: security.status().warning });
  if (!secrets)
    log.log('info', 'relay.sds_off', {
      reason: 'no Kubernetes access configured: kubernetes:// secret names are not served',
    });

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      draining = true;
      const drainTimeoutMs = opts.drainTimeoutMs ?? 5000;
      log.log('info', 'relay.draining', { relay: relayId, streams: server.streamCount });
      await follower.stop();
      // Stop accepting new calls, then end the open streams with OK so proxies reconnect elsewhere.
      const shutdown = new Promise<void>((resolve) => grpcServer.tryShutdown(() => resolve()));
      await server.drain(drainTimeoutMs);
      const forced = await Promise.race([shutdown.then(() => false), delay(drainTimeoutMs).then(() => true)]);
      if (forced) grpcServer.forceShutdown();
      await audit.close();
      await opts.secrets?.close();
      await http.close();
      log.log('info', 'relay.closed', { relay: relayId, forced, auditWritten: audit.written });
    })().catch((e: unknown) => {
      log.log('error', 'relay.close_failed', { error: errorMessage(e) });
      grpcServer.forceShutdown();
    }));

  return { port, httpPort: http.port, relayId, xds: server, follower, metrics, audit, status, close };
}

/**
 * What /readyz says. Ready (200) means: this relay has a verified snapshot loaded and every stream
 * that connects is served it. It does not mean every connected proxy runs it: `proxies` counts
 * those that ACKed the served version (`synced`) against those connected (`placed`). `store` says
 * whether the store still answers; after `unreadyAfter` failures in a row the relay is not ready
 * (it keeps serving the last good snapshot either way).
 */
export function readiness(
  s: FollowerStatus,
  draining: boolean,
  proxies: readonly ProxyStatus[],
  unreadyAfter: number | undefined,
): { readonly ready: boolean; readonly reason?: string; readonly [k: string]: unknown } {
  if (draining) return { ready: false, reason: 'relay is shutting down' };
  const store = {
    ok: s.consecutiveFailures === 0,
    consecutiveFailures: s.consecutiveFailures,
    ...(s.lastError ? { lastError: s.lastError } : {}),
  };
  if (!s.ready)
    return {
      ready: false,
      reason: s.reason ?? 'no snapshot loaded yet',
      ...(s.lastError ? { lastError: s.lastError } : {}),
      store,
    };
  const version = s.serving?.version;
  const placed = proxies.filter((p) => p.classId !== '');
  const counts = { placed: placed.length, synced: placed.filter((p) => p.snapshotVersion === version).length };
  const body = {
    version,
    digest: s.serving?.digest,
    ...(s.reason ? { warning: s.reason } : {}),
    store,
    proxies: counts,
  };
  if (unreadyAfter !== undefined && unreadyAfter > 0 && s.consecutiveFailures >= unreadyAfter) {
    return {
      ready: false,
      reason: `store failed ${s.consecutiveFailures} times in a row: ${s.lastError?.message ?? 'unknown error'}`,
      ...body,
    };
  }
  return { ready: true, ...body };
}

function grpcOptions(k: KeepaliveOptions = {}): grpc.ServerOptions {
  return {
    'grpc.keepalive_time_ms': k.timeMs ?? 30_000,
    'grpc.keepalive_timeout_ms': k.timeoutMs ?? 10_000,
    // Proxies keep streams open for hours with little data: allow their keepalive pings.
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.http2.min_ping_interval_without_data_ms': k.minPingIntervalMs ?? 10_000,
    ...(k.maxConnectionAgeMs !== undefined
      ? { 'grpc.max_connection_age_ms': k.maxConnectionAgeMs, 'grpc.max_connection_age_grace_ms': 10_000 }
      : {}),
    // Snapshots can be large (a big mesh's CDS); responses are bounded by what the compiler emits.
    'grpc.max_send_message_length': -1,
  };
}

const delay = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms).unref();
  });
