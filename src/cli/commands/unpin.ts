/** `meshsnap unpin`: the watcher serves the cluster's config again from its next round. */
import { unpin } from '../../history/pin.js';
import { parse } from '../args.js';
import { historyContext, historyOptions } from '../history.js';
import { note, printJson } from '../output.js';

export const unpinUsage = 'meshsnap unpin [--channel NAME] [--reason TEXT] [--actor WHO] [--store DIR]';

export async function unpinCommand(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, historyOptions, { max: 0 });
  const ctx = historyContext(values);
  const was = await unpin(ctx);
  printJson({ channel: ctx.channel, unpinned: was ?? null });
  if (!was) note(`channel ${ctx.channel} was not pinned`);
  return 0;
}
