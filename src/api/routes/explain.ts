/**
 * GET /channels/:ch/snapshots/:v/explain?(node=ID[&metadata=JSON]|pod=NS/NAME)&to=HOST:PORT[&path=…]
 * [&method=…][&header=NAME=VALUE…][&tls=true][&sni=…][&protocol=…][&inbound=true][&across=A..B]:
 * where the request goes and why (src/explain/), the same JSON as `meshsnap explain`. With
 * `across`, the versions A..B are asked (the path's version is then not used: write `latest`).
 */
import type { Context } from 'hono';
import type { ApiApp, ApiDeps, ApiEnv, Guard } from '../context.js';
import { badRequest } from '../../errors.js';
import { explainAcross, explainVersion } from '../explain.js';
import { parseExplainQuery, parseRange, type ExplainQueryFields } from '../explain-query.js';
import type { HistoryOps } from '../history-port.js';
import { knownChannel, metadataQuery, selectorOf } from '../request.js';

function boolQuery(c: Context<ApiEnv>, name: string): boolean {
  const v = c.req.query(name);
  if (v === undefined || v === 'false' || v === '0') return false;
  if (v === '' || v === 'true' || v === '1') return true;
  throw badRequest(`${name} must be true or false`);
}

function fieldsOf(c: Context<ApiEnv>): ExplainQueryFields {
  const q = (name: string) => c.req.query(name);
  const optional = (name: keyof ExplainQueryFields & string) => {
    const v = q(name);
    return v === undefined ? {} : { [name]: v };
  };
  return {
    ...optional('node'),
    ...(q('metadata') !== undefined ? { metadata: metadataQuery(c) } : {}),
    ...optional('pod'),
    ...optional('to'),
    ...optional('path'),
    ...optional('method'),
    ...optional('sni'),
    ...optional('protocol'),
    headers: c.req.queries('header') ?? [],
    tls: boolQuery(c, 'tls'),
    inbound: boolQuery(c, 'inbound'),
  };
}

export function explainRoutes(app: ApiApp, deps: ApiDeps, history: HistoryOps, read: Guard): void {
  const { store } = deps;
  app.get('/api/v1/channels/:ch/snapshots/:v/explain', read, async (c) => {
    const channel = await knownChannel(c, deps);
    const query = parseExplainQuery(fieldsOf(c));
    const acrossQ = c.req.query('across');
    if (acrossQ !== undefined) {
      const range = parseRange(acrossQ);
      selectorOf(range.from, 'across');
      selectorOf(range.to, 'across');
      return c.json(await explainAcross(store, channel, range, query));
    }
    const record = await history.select(store, channel, selectorOf(c.req.param('v'), 'version'));
    return c.json({ channel, ...(await explainVersion(store, record, query)) });
  });
}
