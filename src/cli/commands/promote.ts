/** `meshsnap promote <candidate:N|VERSION>`: serve a candidate (its config + the current endpoints). */
import { promote } from '../../history/promote.js';
import { parse } from '../args.js';
import { historyContext, historyOptions } from '../history.js';
import { note, printJson } from '../output.js';

export const promoteUsage = 'meshsnap promote <candidate:N|VERSION> [--force] [--channel NAME] [--reason TEXT] [--actor WHO] [--store DIR]  (--force: even when clusters would lose all their endpoints)';

export async function promoteCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...historyOptions, force: { type: 'boolean', default: false } }, { min: 1, max: 1 });
  const ctx = historyContext(values);
  const r = await promote(ctx, positionals[0] as string, { force: values.force });
  printJson({ version: r.version, digest: r.digest, from: r.from, status: r.result.status, pinned: r.pin.version, actor: ctx.actor });
  note(`channel ${ctx.channel}: ${r.from} is served as version ${r.version}; the channel stays pinned to it`);
  return 0;
}
