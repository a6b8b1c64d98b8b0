/** The audit log (operations and relay ACK/NACKs) and per-proxy status. */
import type { ApiApp, ApiDeps, Guard } from '../context.js';
import { badRequest } from '../../errors.js';
import type { AuditEntry, HistoryOps } from '../history-port.js';
import { proxyStatuses } from '../proxies.js';
import { intQuery, sinceQuery } from '../request.js';
import { isValidChannel } from '../../snapshot/manifest.js';

const AUDIT_MAX = 5000;

function channelQuery(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!isValidChannel(value)) throw badRequest(`invalid channel name ${JSON.stringify(value)}`);
  return value;
}

export function auditRoutes(app: ApiApp, deps: ApiDeps, history: HistoryOps, read: Guard): void {
  const { store } = deps;

  app.get('/api/v1/audit', read, async (c) => {
    const since = sinceQuery(c, deps.clock());
    const channel = channelQuery(c.req.query('channel'));
    const proxy = c.req.query('proxy') || undefined;
    const limit = intQuery(c, 'limit', 1, AUDIT_MAX) ?? 1000;
    const channels = channel ? [channel] : await history.channels(store);
    const entries: AuditEntry[] = [];
    for (const ch of channels)
      for (const e of await history.audit(store, {
        channel: ch,
        ...(since ? { since } : {}),
        ...(proxy ? { proxy } : {}),
      }))
        entries.push(e);
    // Newest first (an operation and the version it published share a time: the operation first).
    entries.reverse().sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
    return c.json({ entries: entries.slice(0, limit), truncated: entries.length > limit });
  });

  app.get('/api/v1/proxies', read, async (c) => {
    const channel = channelQuery(c.req.query('channel'));
    const since = sinceQuery(c, deps.clock());
    return c.json({ proxies: await proxyStatuses(store.readAudit(since ? { since } : {}), channel) });
  });
}
