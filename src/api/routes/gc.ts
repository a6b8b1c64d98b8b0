/**
 * POST /api/v1/gc — retention over the whole store, as `meshsnap gc`:
 * `{ keep?, keepDays?, graceMinutes?, dryRun?, reason? }` → the GcResult with `action: "gc"`.
 * Through the history port, so the audit record (kind `gc`, filed under the default channel)
 * names the caller, the injected clock's time and the reason.
 */
import { graceProblem } from '../../history/gc.js';
import { GC_GRACE_MINUTES_DEFAULT, gcOptions, type GcSettings } from '../gc-settings.js';
import type { ApiApp, ApiDeps, Guard } from '../context.js';
import { badRequest } from '../../errors.js';
import type { HistoryOps } from '../history-port.js';
import { booleanField, jsonBody, onlyFields, optionalNumber, optionalString } from '../request.js';

const FIELDS = ['keep', 'keepDays', 'graceMinutes', 'dryRun', 'reason'] as const;

export function gcRoutes(app: ApiApp, deps: ApiDeps, history: HistoryOps, write: Guard): void {
  const { store } = deps;
  app.post('/api/v1/gc', write, async (c) => {
    const body = await jsonBody(c);
    onlyFields(body, FIELDS);
    const keep = optionalNumber(body, 'keep', 1, { integer: true });
    const keepDays = optionalNumber(body, 'keepDays', 0);
    const settings: GcSettings = {
      ...(keep !== undefined ? { keep } : {}),
      ...(keepDays !== undefined ? { keepDays } : {}),
      graceMinutes: optionalNumber(body, 'graceMinutes', 0) ?? GC_GRACE_MINUTES_DEFAULT,
      dryRun: booleanField(body, 'dryRun'),
    };
    const reason = optionalString(body, 'reason');
    const problem = graceProblem(settings.graceMinutes * 60_000, store, 'graceMinutes');
    if (problem !== undefined) throw badRequest(problem);
    const op = { actor: c.get('actor'), at: deps.clock(), ...(reason !== undefined ? { reason } : {}) };
    const result = await history.gc(store, deps.channelDefault, gcOptions(settings), op);
    return c.json({ action: 'gc', ...result });
  });
}
