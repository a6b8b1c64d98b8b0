/** `meshsnap pin [VERSION]`: serve this version's config (default: the current one) until unpinned. */
import { pin } from '../../history/pin.js';
import { command, parseCommand } from '../args.js';
import { historyContext, historyOptions } from '../history.js';
import { note, printJson } from '../output.js';

export const pinSpec = command({
  name: 'pin',
  summary: 'keep serving a version’s config; config changes become candidates',
  args: '[VERSION|latest]',
  positionals: { max: 1 },
  options: historyOptions,
  examples: ["meshsnap pin --reason 'freeze during the sale'", 'meshsnap pin 7'],
});

export async function pinCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(pinSpec, argv);
  const ctx = historyContext(values);
  const p = await pin(ctx, positionals[0] ?? 'latest');
  printJson({ channel: ctx.channel, pinned: p });
  note(`channel ${ctx.channel} pinned to the config of version ${p.version}; config changes now become candidates`);
  return 0;
}
