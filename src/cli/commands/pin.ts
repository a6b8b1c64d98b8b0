/**
 * `meshsnap pin [VERSION] [--force]`: keep serving the served config until unpinned. VERSION must
 * have the served config (else: use `rollback VERSION`, which serves it now and pins); `--force`
 * moves an existing pin.
 */
import { pin } from '../../history/pin.js';
import { command, parseCommand } from '../args.js';
import { historyContext, historyOptions } from '../history.js';
import { note, printJson } from '../output.js';

export const pinSpec = command({
  name: 'pin',
  summary: 'pin what is served (VERSION must have the served config; to serve another: rollback VERSION); config changes become candidates',
  args: '[VERSION|latest]',
  positionals: { max: 1 },
  options: { ...historyOptions, force: { type: 'boolean', default: false, help: 'move an existing pin' } },
  examples: ["meshsnap pin --reason 'freeze during the sale'", 'meshsnap pin 7'],
});

export async function pinCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(pinSpec, argv);
  const ctx = historyContext(values);
  const p = await pin(ctx, positionals[0] ?? 'latest', { force: values.force });
  printJson({ channel: ctx.channel, pinned: p });
  note(`channel ${ctx.channel} pinned to the config of version ${p.version}; config changes now become candidates`);
  return 0;
}
