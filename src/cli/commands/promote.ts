/** `meshsnap promote <candidate:N|VERSION>`: serve a candidate (its config + the current endpoints). */
import { promote } from '../../history/promote.js';
import { command, parseCommand } from '../args.js';
import { historyContext, historyOptions } from '../history.js';
import { note, printJson } from '../output.js';

export const promoteSpec = command({
  name: 'promote',
  summary: 'serve a candidate recorded while pinned',
  args: '<candidate:N|VERSION>',
  positionals: { min: 1, max: 1 },
  options: { ...historyOptions, force: { type: 'boolean', default: false, help: 'even when clusters that have endpoints in the target would be served none' } },
  examples: ["meshsnap promote candidate:3 --reason 'reviewed in #1234'"],
});

export async function promoteCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(promoteSpec, argv);
  const ctx = historyContext(values);
  const r = await promote(ctx, positionals[0] as string, { force: values.force });
  printJson({ version: r.version, digest: r.digest, from: r.from, status: r.result.status, pinned: r.pin.version, actor: ctx.actor });
  note(`channel ${ctx.channel}: ${r.from} is served as version ${r.version}; the channel stays pinned to it`);
  return 0;
}
