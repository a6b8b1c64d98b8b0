/** `meshsnap diagnostics [VERSION|latest] [--channel NAME] [--store DIR]`: one JSON line per diagnostic. */
import { parse, parseVersionArg, storeOptions } from '../args.js';
import { printJson } from '../output.js';
import { checkChannel, openStore, resolveVersion } from '../store.js';

export const diagnosticsUsage = 'meshsnap diagnostics [VERSION|latest] [--channel NAME] [--store DIR]';

export async function diagnosticsCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, storeOptions, { max: 1 });
  const channel = checkChannel(values.channel);
  const record = await resolveVersion(openStore(values.store), channel, parseVersionArg(positionals[0]));
  for (const d of record.diagnostics) printJson(d);
  return 0;
}
