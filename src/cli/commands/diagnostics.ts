/** `meshsnap diagnostics [VERSION|latest|tag:NAME|candidate:N] [--channel NAME] [--store DIR]`: one JSON line per diagnostic. */
import { recordDiagnostics } from '../../snapshot/manifest.js';
import { selectArg } from '../history.js';
import { command, parseCommand, storeOptions } from '../args.js';
import { printJson } from '../output.js';
import { checkChannel, openExistingStore } from '../store.js';

export const diagnosticsSpec = command({
  name: 'diagnostics',
  summary: 'print a version’s diagnostics, one JSON line each',
  args: '[VERSION|latest|tag:NAME|candidate:N]',
  positionals: { max: 1 },
  options: storeOptions,
  examples: ['meshsnap diagnostics latest', 'meshsnap diagnostics 7 --channel staging'],
});

export async function diagnosticsCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(diagnosticsSpec, argv);
  const channel = checkChannel(values.channel);
  const store = openExistingStore(values.store);
  const record = await selectArg(store, channel, positionals[0]);
  for (const d of await recordDiagnostics(store, record)) printJson(d);
  return 0;
}
