/** `meshsnap gc` (flags: gcSpec): retention over the whole store. */
import { gc } from '../../history/gc.js';
import { command, parseCommand, UsageError } from '../args.js';
import { actorOptions, historyContext } from '../history.js';
import { printJson } from '../output.js';

export const gcSpec = command({
  name: 'gc',
  summary: 'delete old versions and unreferenced data (tagged, pinned, current are kept)',
  options: {
    keep: { type: 'string', value: 'N', help: 'keep the newest N versions per channel, N ≥ 1 (default: 10)' },
    'keep-days': { type: 'string', value: 'D', help: 'also keep versions younger than D days' },
    'audit-days': { type: 'string', value: 'D', help: 'delete relay audit batches older than D days (default: 30; operator actions are kept)' },
    'grace-minutes': { type: 'string', value: 'M', help: 'delete unreferenced data only when older than M minutes (default: 60)' },
    'dry-run': { type: 'boolean', default: false, help: 'say what would be deleted; delete nothing' },
    ...actorOptions,
  },
  examples: ['meshsnap gc --keep 20 --dry-run', 'meshsnap gc --keep-days 30 --store s3://bucket/meshsnap'],
});

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
  const opts = { ...(keep !== undefined ? { keep } : {}), ...(keepDays !== undefined ? { keepDays } : {}), ...(auditDays !== undefined ? { auditDays } : {}), ...(grace !== undefined ? { graceMs: grace * 60_000 } : {}), dryRun: values['dry-run'] };
  const r = await gc(ctx, opts).catch((err: unknown) => {
    if (err instanceof RangeError) throw new UsageError(err.message); // grace shorter than the store's freshen interval
    throw err;
  });
  printJson(r);
  return 0;
}
