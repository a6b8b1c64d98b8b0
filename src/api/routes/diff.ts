/** GET /channels/:ch/diff?from=A&to=B[&node=ID&metadata=JSON][&type=…]: hist's semantic diff. */
import type { ApiApp, ApiDeps, Guard } from '../context.js';
import { badRequest } from '../../errors.js';
import type { HistoryOps } from '../history-port.js';
import { knownChannel, metadataQuery, selectorOf, typesQuery } from '../request.js';

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
    const from = await history.select(store, channel, selectorOf(fromQ, 'from'));
    const to = await history.select(store, channel, selectorOf(toQ, 'to'));
    const diff = await history.diff(store, from, to, {
      ...(nodeId ? { node: { id: nodeId, metadata } } : {}),
      ...(types ? { types } : {}),
    });
    return c.json({ channel, from: from.version, to: to.version, diff });
  });
}
