/** `meshsnap unpin`: the watcher serves the cluster's config again from its next round. */
import { unpin } from '../../history/pin.js';
import { parseCommand } from '../args.js';
import { historyContext } from '../history.js';
import { note, printJson } from '../output.js';
import { unpinSpec } from '../specs/unpin.js';

export async function unpinCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseCommand(unpinSpec, argv);
  const ctx = historyContext(values);
  const was = await unpin(ctx);
  printJson({ channel: ctx.channel, unpinned: was ?? null });
  if (!was) note(`channel ${ctx.channel} was not pinned`);
  return 0;
}
