/**
 * The history writes: rollback, pin, unpin, promote, tag. Each goes through the history library,
 * which records who (the caller's identity), when (the injected clock) and why in the audit log.
 */
import type { Context } from 'hono';
import type { ApiApp, ApiDeps, ApiEnv, Guard } from '../context.js';
import { badRequest } from '../../errors.js';
import type { HistoryOps, Operator } from '../history-port.js';
import { booleanField, knownChannel, jsonBody, optionalString, requiredString, selectorOf } from '../request.js';

export function actionRoutes(app: ApiApp, deps: ApiDeps, history: HistoryOps, write: Guard): void {
  const { store } = deps;
  const operator = (c: Context<ApiEnv>, reason: string | undefined): Operator => ({
    actor: c.get('actor'),
    at: deps.clock(),
    ...(reason !== undefined ? { reason } : {}),
  });
  const body = jsonBody;

  app.post('/api/v1/channels/:ch/rollback', write, async (c) => {
    const channel = await knownChannel(c, deps);
    const b = await body(c);
    const target = selectorOf(b.version, 'version');
    const result = await history.rollback(store, channel, target, operator(c, requiredString(b, 'reason')), {
      force: booleanField(b, 'force'),
    });
    return c.json({ channel, action: 'rollback', from: target, ...result });
  });

  app.post('/api/v1/channels/:ch/pin', write, async (c) => {
    const channel = await knownChannel(c, deps);
    const b = await body(c);
    const selector = b.version === undefined ? undefined : selectorOf(b.version, 'version');
    const result = await history.pin(store, channel, operator(c, requiredString(b, 'reason')), {
      force: booleanField(b, 'force'),
      ...(selector !== undefined ? { selector } : {}),
    });
    return c.json({ channel, action: 'pin', ...result });
  });

  app.post('/api/v1/channels/:ch/unpin', write, async (c) => {
    const channel = await knownChannel(c, deps);
    const b = await body(c);
    const result = await history.unpin(store, channel, operator(c, optionalString(b, 'reason')));
    return c.json({ channel, action: 'unpin', ...result });
  });

  app.post('/api/v1/channels/:ch/promote', write, async (c) => {
    const channel = await knownChannel(c, deps);
    const b = await body(c);
    const candidate = selectorOf(b.version, 'version');
    const result = await history.promote(store, channel, candidate, operator(c, requiredString(b, 'reason')), {
      force: booleanField(b, 'force'),
    });
    return c.json({ channel, action: 'promote', candidate, ...result });
  });

  app.post('/api/v1/channels/:ch/tags', write, async (c) => {
    const channel = await knownChannel(c, deps);
    const b = await body(c);
    const name = requiredString(b, 'name', 128);
    // A tag that looks like a number or `latest` could never be selected by name.
    if (!/^[A-Za-z][A-Za-z0-9._/-]{0,127}$/.test(name) || name === 'latest')
      throw badRequest('name must start with a letter, use letters, digits, . _ / -, and not be "latest"');
    const result = await history.tag(
      store,
      channel,
      selectorOf(b.version, 'version'),
      name,
      operator(c, optionalString(b, 'reason')),
      { force: booleanField(b, 'force') },
    );
    return c.json({ channel, action: 'tag', name, ...result }, 201);
  });
}
