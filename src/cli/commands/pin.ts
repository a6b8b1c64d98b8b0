/**
 * `meshsnap pin [VERSION] [--force]`: keep serving the served config until unpinned. VERSION must
 * have the served config (else: use `rollback VERSION`, which serves it now and pins); `--force`
 * moves an existing pin.
 */
import { pin } from '../../history/pin.js';
import { parse } from '../args.js';
import { historyContext, historyOptions } from '../history.js';
import { note, printJson } from '../output.js';

export const pinUsage =
  'meshsnap pin [VERSION|latest] [--force] [--channel NAME] [--reason TEXT] [--actor WHO] [--store DIR]\n  pins what is served; VERSION must have the served config (to serve another config: meshsnap rollback VERSION); --force moves an existing pin';

export async function pinCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...historyOptions, force: { type: 'boolean', default: false } }, { max: 1 });
  const ctx = historyContext(values);
  const p = await pin(ctx, positionals[0] ?? 'latest', { force: values.force });
  printJson({ channel: ctx.channel, pinned: p });
  note(`channel ${ctx.channel} pinned to the config of version ${p.version}; config changes now become candidates`);
  return 0;
}
