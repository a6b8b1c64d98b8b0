/** `meshsnap gc` (flags: gcSpec): retention over the whole store. */
import { gc } from '../../history/gc.js';
import { parseCommand, UsageError } from '../args.js';
import { historyContext } from '../history.js';
import { printJson } from '../output.js';
import { gcSpec } from '../specs/gc.js';

const count = (v: string | undefined, what: string, min: number): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^[0-9]+(\.[0-9]+)?$/.test(v) || Number(v) < min) throw new UsageError(`${what} must be a number ≥ ${min}`);
  return Number(v);
};

export async function gcCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseCommand(gcSpec, argv);
  const ctx = historyContext(values);
  const keep = count(values.keep, '--keep', 1);
  const keepDays = count(values['keep-days'], '--keep-days', 0);
  const grace = count(values['grace-minutes'], '--grace-minutes', 0);
  const auditDays = count(values['audit-days'], '--audit-days', 0);
  const opts = {
    ...(keep !== undefined ? { keep } : {}),
    ...(keepDays !== undefined ? { keepDays } : {}),
    ...(auditDays !== undefined ? { auditDays } : {}),
    ...(grace !== undefined ? { graceMs: grace * 60_000 } : {}),
    dryRun: values['dry-run'],
  };
  const r = await gc(ctx, opts).catch((err: unknown) => {
    if (err instanceof RangeError) throw new UsageError(err.message); // grace shorter than the store's freshen interval
    throw err;
  });
  printJson(r);
  return 0;
}
