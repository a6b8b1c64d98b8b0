/**
 * The /debug/proxies view: the xDS server's per-proxy status plus, per type, the one-word state
 * `istioctl proxy-status` shows (SYNCED, NOT SENT, STALE, NACKED), keyed by the short type names
 * it uses (CDS, EDS, LDS, RDS).
 */
import { XDS_TYPE_URL, XDS_TYPES, type XdsType } from '../xds/type-urls.js';
import type { ProxyStatus } from './types.js';

export type SyncState = 'SYNCED' | 'NOT SENT' | 'STALE' | 'NACKED';

const SHORT: Readonly<Record<XdsType, string>> = { clusters: 'CDS', endpoints: 'EDS', listeners: 'LDS', routes: 'RDS' };

export function syncStates(p: ProxyStatus): Record<string, SyncState> {
  const out: Record<string, SyncState> = {};
  for (const type of XDS_TYPES) {
    const t = p.types[XDS_TYPE_URL[type]];
    out[SHORT[type]] =
      t?.sent === undefined ? 'NOT SENT' : t.nack && t.nack.version === t.sent && t.acked !== t.sent ? 'NACKED' : t.acked === t.sent ? 'SYNCED' : 'STALE';
  }
  return out;
}

export function proxiesView(statuses: readonly ProxyStatus[]): (ProxyStatus & { readonly sync: Record<string, SyncState> })[] {
  return [...statuses].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : a.streamId < b.streamId ? -1 : 1)).map((p) => ({ ...p, sync: syncStates(p) }));
}
