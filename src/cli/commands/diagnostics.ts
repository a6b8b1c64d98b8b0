/** `meshsnap diagnostics [VERSION|latest|tag:NAME|candidate:N] [--channel NAME] [--store DIR]`: one JSON line per diagnostic. */
import { recordDiagnostics } from '../../snapshot/manifest.js';
import { selectArg } from '../history.js';
import { parse, storeOptions } from '../args.js';
import { printJson } from '../output.js';
import { checkChannel, openStore } from '../store.js';

export const diagnosticsUsage = 'meshsnap diagnostics [VERSION|latest|tag:NAME|candidate:N] [--channel NAME] [--store DIR]';

export async function diagnosticsCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, storeOptions, { max: 1 });
  const channel = checkChannel(values.channel);
  const store = openStore(values.store);
  const record = await selectArg(store, channel, positionals[0]);
  for (const d of await recordDiagnostics(store, record)) printJson(d);
  return 0;
}
