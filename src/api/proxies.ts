/**
 * Per-proxy status from the relays' audit records: for each node, its class, the version it last
 * ACKed per xDS type, its last NACK (with the proxy's error), and whether it is connected: the
 * relays record each stream's connect and disconnect (detail.stream), and a node is connected
 * while one of its streams is open. Records are read oldest first, so a later record simply
 * overwrites an earlier one. Pure.
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
  /** When its newest stream opened (null when no relay recorded the connect). */
  connectedAt: string | null;
  /** When its last open stream closed, or it was refused; null while connected. */
  disconnectedAt: string | null;
  /** type URL → { version (xDS version_info), snapshotVersion, at }. */
  acked: Record<string, { version: string; snapshotVersion: number; digest?: string; at: string }>;
  lastNack: { typeUrl: string; version: string; snapshotVersion: number; error: string; at: string } | null;
  /** The channel version every type was last ACKed at, when they agree. */
  ackedVersion: number | null;
}

const RELAY_KINDS: ReadonlySet<string> = new Set(['ack', 'nack', 'connect', 'disconnect', 'rejected']);

export async function proxyStatuses(records: AsyncIterable<AuditRecord>, channel?: string): Promise<ProxyStatus[]> {
  const byNode = new Map<string, ProxyStatus>();
  /** Open streams per node key (`relay stream`); absent for a node whose relay records no connects. */
  const openStreams = new Map<string, Set<string>>();
  for await (const r of records) {
    // The same log holds operator actions (pin, tag, …): only relay records describe proxies.
    if (!RELAY_KINDS.has(r.kind) || r.nodeId === '') continue;
    if (channel !== undefined && r.channel !== channel) continue;
    const key = `${r.channel}\u0000${r.nodeId}`;
    let p = byNode.get(key);
    if (!p) {
      p = {
        nodeId: r.nodeId,
        channel: r.channel,
        classId: r.classId,
        relay: r.relay,
        lastSeen: r.at,
        connected: false,
        connectedAt: null,
        disconnectedAt: null,
        acked: {},
        lastNack: null,
        ackedVersion: null,
      };
      byNode.set(key, p);
    }
    if (r.at >= p.lastSeen) p.lastSeen = r.at;
    if (r.classId) p.classId = r.classId;
    p.relay = r.relay;
    const stream = typeof r.detail?.stream === 'string' ? `${r.relay} ${r.detail.stream}` : undefined;
    const open = openStreams.get(key);
    switch (r.kind) {
      case 'ack':
        p.acked[r.typeUrl] = {
          version: r.version,
          snapshotVersion: r.snapshotVersion,
          ...(r.digest ? { digest: r.digest } : {}),
          at: r.at,
        };
        if (!open) p.connected = true; // a relay that records no connects: an ACK is all it says
        break;
      case 'nack':
        p.lastNack = {
          typeUrl: r.typeUrl,
          version: r.version,
          snapshotVersion: r.snapshotVersion,
          error: r.error ?? '',
          at: r.at,
        };
        if (!open) p.connected = true;
        break;
      case 'connect':
        openStreams.set(key, new Set([...(open ?? []), ...(stream !== undefined ? [stream] : [])]));
        p.connected = true;
        p.connectedAt = r.at;
        p.disconnectedAt = null;
        break;
      case 'disconnect':
        if (stream !== undefined) open?.delete(stream);
        if (!open || open.size === 0 || stream === undefined) {
          openStreams.set(key, new Set());
          p.connected = false;
          p.disconnectedAt = r.at;
        }
        break;
      case 'rejected':
        p.connected = false;
        p.disconnectedAt = r.at;
        break;
    }
  }
  const out = [...byNode.values()];
  for (const p of out) {
    const versions = new Set(Object.values(p.acked).map((a) => a.snapshotVersion));
    p.ackedVersion = versions.size === 1 ? ([...versions][0] as number) : null;
  }
  return out.sort((a, b) =>
    a.channel === b.channel ? (a.nodeId < b.nodeId ? -1 : 1) : a.channel < b.channel ? -1 : 1,
  );
}
