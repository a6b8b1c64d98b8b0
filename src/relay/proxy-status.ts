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
      t?.sent === undefined
        ? 'NOT SENT'
        : t.nack && t.nack.version === t.sent && t.acked !== t.sent
          ? 'NACKED'
          : t.acked === t.sent
            ? 'SYNCED'
            : 'STALE';
  }
  return out;
}

export function proxiesView(
  statuses: readonly ProxyStatus[],
): (ProxyStatus & { readonly sync: Record<string, SyncState> })[] {
  return [...statuses].sort(byNodeThenStream).map((p) => ({ ...p, sync: syncStates(p) }));
}

/** A page of proxiesView: `limit` entries after `cursor` (opaque; from the previous page's `nextCursor`). */
export function proxiesPage(
  statuses: readonly ProxyStatus[],
  page: { readonly limit: number; readonly cursor?: string },
): { readonly total: number; readonly proxies: ReturnType<typeof proxiesView>; readonly nextCursor?: string } {
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor);
  if (page.cursor !== undefined && after === undefined)
    throw new RangeError('cursor: not one this relay returned as nextCursor');
  const sorted = [...statuses].sort(byNodeThenStream);
  const start = after === undefined ? 0 : sorted.findIndex((p) => byNodeThenStream(p, after) > 0);
  const slice = start < 0 ? [] : sorted.slice(start, start + page.limit);
  const last = slice.at(-1);
  const more = start >= 0 && start + page.limit < sorted.length;
  return {
    total: statuses.length,
    proxies: proxiesView(slice),
    ...(more && last ? { nextCursor: encodeCursor(last) } : {}),
  };
}

type Key = Pick<ProxyStatus, 'nodeId' | 'streamId'>;

function byNodeThenStream(a: Key, b: Key): number {
  return a.nodeId < b.nodeId
    ? -1
    : a.nodeId > b.nodeId
      ? 1
      : a.streamId < b.streamId
        ? -1
        : a.streamId > b.streamId
          ? 1
          : 0;
}

const encodeCursor = (k: Key): string => Buffer.from(JSON.stringify([k.nodeId, k.streamId])).toString('base64url');

/** undefined for a cursor this relay did not make. */
function decodeCursor(cursor: string): Key | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string')
      return { nodeId: v[0], streamId: v[1] };
  } catch {
    // not ours
  }
  return undefined;
}
