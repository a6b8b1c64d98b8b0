/**
 * `meshsnap pin [VERSION] [--force]`: keep serving the served config until unpinned. VERSION must
 * have the served config (else: use `rollback VERSION`, which serves it now and pins); `--force`
 * moves an existing pin.
 */
import { pin } from '../../history/pin.js';
import { parseCommand } from '../args.js';
import { historyContext } from '../history.js';
import { note, printJson } from '../output.js';
import { pinSpec } from '../specs/pin.js';

export async function pinCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(pinSpec, argv);
  const ctx = historyContext(values);
  const p = await pin(ctx, positionals[0] ?? 'latest', { force: values.force });
  printJson({ channel: ctx.channel, pinned: p });
  note(`channel ${ctx.channel} pinned to the config of version ${p.version}; config changes now become candidates`);
  return 0;
}
