/**
 * Per-proxy status from the relays' audit records: for each node, its class, the version it last
 * ACKed per xDS type, and its last NACK (with the proxy's error). Records are read oldest first, so
 * a later record simply overwrites an earlier one. Pure.
 */
import type { AuditRecord } from '../snapshot/audit.js';

export interface ProxyStatus {
  nodeId: string;
  channel: string;
  classId: string;
  relay: string;
  /** Last event of any kind. */
  lastSeen: string;
  connected: boolean;
  /** type URL → { version (xDS version_info), snapshotVersion, at }. */
  acked: Record<string, { version: string; snapshotVersion: number; digest?: string; at: string }>;
  lastNack: { typeUrl: string; version: string; snapshotVersion: number; error: string; at: string } | null;
  /** The channel version every type was last ACKed at, when they agree. */
  ackedVersion: number | null;
}

const RELAY_KINDS: ReadonlySet<string> = new Set(['ack', 'nack', 'connect', 'disconnect', 'rejected']);

export async function proxyStatuses(records: AsyncIterable<AuditRecord>, channel?: string): Promise<ProxyStatus[]> {
  const byNode = new Map<string, ProxyStatus>();
  for await (const r of records) {
    // The same log holds operator actions (pin, tag, …): only relay records describe proxies.
    if (!RELAY_KINDS.has(r.kind) || r.nodeId === '') continue;
    if (channel !== undefined && r.channel !== channel) continue;
    const key = `${r.channel}\u0000${r.nodeId}`;
    let p = byNode.get(key);
    if (!p) {
      p = { nodeId: r.nodeId, channel: r.channel, classId: r.classId, relay: r.relay, lastSeen: r.at, connected: false, acked: {}, lastNack: null, ackedVersion: null };
      byNode.set(key, p);
    }
    if (r.at >= p.lastSeen) p.lastSeen = r.at;
    if (r.classId) p.classId = r.classId;
    p.relay = r.relay;
    switch (r.kind) {
      case 'ack':
        p.acked[r.typeUrl] = { version: r.version, snapshotVersion: r.snapshotVersion, ...(r.digest ? { digest: r.digest } : {}), at: r.at };
        p.connected = true;
        break;
      case 'nack':
        p.lastNack = { typeUrl: r.typeUrl, version: r.version, snapshotVersion: r.snapshotVersion, error: r.error ?? '', at: r.at };
        p.connected = true;
        break;
      case 'connect':
        p.connected = true;
        break;
      case 'disconnect':
      case 'rejected':
        p.connected = false;
        break;
    }
  }
  const out = [...byNode.values()];
  for (const p of out) {
    const versions = new Set(Object.values(p.acked).map((a) => a.snapshotVersion));
    p.ackedVersion = versions.size === 1 ? ([...versions][0] as number) : null;
  }
  return out.sort((a, b) => (a.channel === b.channel ? (a.nodeId < b.nodeId ? -1 : 1) : a.channel < b.channel ? -1 : 1));
}
