/** `meshsnap diagnostics [VERSION|latest|tag:NAME|candidate:N] [--channel NAME] [--store DIR]`: one JSON line per diagnostic. */
import { recordDiagnostics } from '../../snapshot/manifest.js';
import { selectArg } from '../history.js';
import { parseCommand } from '../args.js';
import { printJson } from '../output.js';
import { checkChannel, openExistingStore } from '../store.js';
import { diagnosticsSpec } from '../specs/diagnostics.js';

export async function diagnosticsCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(diagnosticsSpec, argv);
  const channel = checkChannel(values.channel);
  const store = openExistingStore(values.store);
  const record = await selectArg(store, channel, positionals[0]);
  for (const d of await recordDiagnostics(store, record)) printJson(d);
  return 0;
}
