/**
 * ConnectionPoolSettings, as a DestinationRule's traffic policy and a Sidecar's
 * `inboundConnectionPool` / `ingress[].connectionPool` write them (istiod's validateConnectionPool).
 */
import type { ConnectionPoolSettings, TcpKeepalive } from '../../model/istio.js';
import { duration } from './duration.js';
import { bool, compact, fields, get, int, str, type Raw, type Reader } from './reader.js';

const H2_UPGRADE = ['DEFAULT', 'DO_NOT_UPGRADE', 'UPGRADE'] as const;

export function connectionPool(r: Reader, v: unknown, path: string): ConnectionPoolSettings | undefined {
  const o = fields(r, v, path, ['tcp', 'http']);
  if (!o) return undefined;
  const u32 = (x: Raw, key: string, p: string): number | undefined =>
    int(r, get(x, key), `${p}.${key}`, 0, 2 ** 32 - 1);
  const t = fields(r, get(o, 'tcp'), `${path}.tcp`, [
    'maxConnections',
    'connectTimeout',
    'tcpKeepalive',
    'maxConnectionDuration',
    'idleTimeout',
  ]);
  const tp = `${path}.tcp`;
  const tcp = t
    ? compact({
        maxConnections: u32(t, 'maxConnections', tp),
        connectTimeoutMs: duration(r, get(t, 'connectTimeout'), `${tp}.connectTimeout`),
        tcpKeepalive: tcpKeepalive(r, get(t, 'tcpKeepalive'), `${tp}.tcpKeepalive`),
        maxConnectionDurationMs: duration(r, get(t, 'maxConnectionDuration'), `${tp}.maxConnectionDuration`),
        idleTimeoutMs: duration(r, get(t, 'idleTimeout'), `${tp}.idleTimeout`),
      })
    : undefined;
  const hp = `${path}.http`;
  const h = fields(r, get(o, 'http'), hp, [
    'http1MaxPendingRequests',
    'http2MaxRequests',
    'maxRequestsPerConnection',
    'maxRetries',
    'idleTimeout',
    'h2UpgradePolicy',
    'useClientProtocol',
    'maxConcurrentStreams',
    'http2KeepAlive',
  ]);
  let http: ConnectionPoolSettings['http'];
  if (h) {
    const upgrade = str(r, get(h, 'h2UpgradePolicy'), `${hp}.h2UpgradePolicy`);
    if (upgrade !== undefined && !(H2_UPGRADE as readonly string[]).includes(upgrade))
      r.error(`${hp}.h2UpgradePolicy`, `must be one of ${H2_UPGRADE.join(', ')}`);
    http = compact({
      http1MaxPendingRequests: u32(h, 'http1MaxPendingRequests', hp),
      http2MaxRequests: u32(h, 'http2MaxRequests', hp),
      maxRequestsPerConnection: u32(h, 'maxRequestsPerConnection', hp),
      maxRetries: u32(h, 'maxRetries', hp),
      idleTimeoutMs: duration(r, get(h, 'idleTimeout'), `${hp}.idleTimeout`),
      h2UpgradePolicy: upgrade as (typeof H2_UPGRADE)[number] | undefined,
      useClientProtocol: bool(r, get(h, 'useClientProtocol'), `${hp}.useClientProtocol`),
      maxConcurrentStreams: u32(h, 'maxConcurrentStreams', hp),
      http2KeepAlive: http2KeepAlive(r, get(h, 'http2KeepAlive'), `${hp}.http2KeepAlive`),
    });
  }
  if (!tcp && !http) r.error(path, 'connection pool must have at least one field', 'missing-field');
  return compact({ tcp, http });
}

/** istiod's validateConnectionPool: both durations required, at least 1 ms (Envoy's bound too). */
function http2KeepAlive(r: Reader, v: unknown, path: string): { intervalMs: number; timeoutMs: number } | undefined {
  const o = fields(r, v, path, ['interval', 'timeout']);
  if (!o) return undefined;
  const at = (key: 'interval' | 'timeout'): number | undefined => {
    const ms = duration(r, get(o, key), `${path}.${key}`);
    if (get(o, key) === undefined) r.error(`${path}.${key}`, `http2 keepalive ${key} is required`, 'missing-field');
    else if (ms !== undefined && ms < 1) r.error(`${path}.${key}`, 'must be at least 1ms');
    return ms;
  };
  const intervalMs = at('interval');
  const timeoutMs = at('timeout');
  return intervalMs !== undefined && timeoutMs !== undefined ? { intervalMs, timeoutMs } : undefined;
}

/** A TCP keepalive (a pool's, or the mesh config's `tcpKeepalive`). */
export function tcpKeepalive(r: Reader, v: unknown, path: string): TcpKeepalive | undefined {
  const ka = fields(r, v, path, ['probes', 'time', 'interval']);
  if (!ka) return undefined;
  return compact({
    probes: int(r, get(ka, 'probes'), `${path}.probes`, 0, 2 ** 32 - 1),
    timeMs: duration(r, get(ka, 'time'), `${path}.time`),
    intervalMs: duration(r, get(ka, 'interval'), `${path}.interval`),
  });
}
