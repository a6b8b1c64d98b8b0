/**
 * GET /channels/:ch/diff?from=A&to=B[&node=ID&metadata=JSON][&type=…][&limit=N]: hist's semantic
 * diff, bounded (diff-bound.ts): past the bound it answers `truncated: true` with what was left out.
 */
import { DIFF_LIMIT_DEFAULT, DIFF_LIMIT_MAX, DIFF_MAX_BYTES } from '../diff-bound.js';
import type { ApiApp, ApiDeps, Guard } from '../context.js';
import { badRequest } from '../../errors.js';
import type { HistoryOps } from '../history-port.js';
import { intQuery, knownChannel, metadataQuery, selectorOf, typesQuery } from '../request.js';

export function diffRoutes(app: ApiApp, deps: ApiDeps, history: HistoryOps, read: Guard): void {
  const { store } = deps;
  app.get('/api/v1/channels/:ch/diff', read, async (c) => {
    const channel = await knownChannel(c, deps);
    const fromQ = c.req.query('from');
    const toQ = c.req.query('to');
    if (!fromQ || !toQ) throw badRequest('diff needs from and to (version numbers, "latest" or tags)');
    const types = c.req.query('type') ? typesQuery(c) : undefined;
    const nodeId = c.req.query('node');
    const metadata = metadataQuery(c);
    const limit = intQuery(c, 'limit', 1, DIFF_LIMIT_MAX) ?? DIFF_LIMIT_DEFAULT;
    const from = await history.select(store, channel, selectorOf(fromQ, 'from'));
    const to = await history.select(store, channel, selectorOf(toQ, 'to'));
    const { diff, truncated, omitted } = await deps.offload.diff(store, {
      from,
      to,
      ...(nodeId ? { node: { id: nodeId, metadata } } : {}),
      ...(types ? { types } : {}),
      bound: { limit, maxBytes: DIFF_MAX_BYTES },
    });
    return c.json({ channel, from: from.version, to: to.version, diff, truncated, ...(truncated ? { omitted } : {}) });
  });
}
