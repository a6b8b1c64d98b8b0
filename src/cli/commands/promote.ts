/** `meshsnap promote <candidate:N|VERSION>`: serve a candidate (its config + the current endpoints). */
import { promote } from '../../history/promote.js';
import { parseCommand } from '../args.js';
import { historyContext } from '../history.js';
import { note, printJson } from '../output.js';
import { promoteSpec } from '../specs/promote.js';

export async function promoteCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(promoteSpec, argv);
  const ctx = historyContext(values);
  const r = await promote(ctx, positionals[0] as string, { force: values.force });
  printJson({
    version: r.version,
    digest: r.digest,
    from: r.from,
    status: r.result.status,
    pinned: r.pin.version,
    actor: ctx.actor,
  });
  note(`channel ${ctx.channel}: ${r.from} is served as version ${r.version}; the channel stays pinned to it`);
  return 0;
}
