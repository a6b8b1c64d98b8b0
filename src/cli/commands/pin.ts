/** `meshsnap pin [VERSION]`: serve this version's config (default: the current one) until unpinned. */
import { pin } from '../../history/pin.js';
import { parse } from '../args.js';
import { historyContext, historyOptions } from '../history.js';
import { note, printJson } from '../output.js';

export const pinUsage = 'meshsnap pin [VERSION|latest] [--channel NAME] [--reason TEXT] [--actor WHO] [--store DIR]';

export async function pinCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, historyOptions, { max: 1 });
  const ctx = historyContext(values);
  const p = await pin(ctx, positionals[0] ?? 'latest');
  printJson({ channel: ctx.channel, pinned: p });
  note(`channel ${ctx.channel} pinned to the config of version ${p.version}; config changes now become candidates`);
  return 0;
}
