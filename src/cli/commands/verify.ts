/** `meshsnap verify [VERSION|--all]`: recompile from the stored inputs; the digest must be byte-identical. */
import { verifyVersion } from '../../history/verify.js';
import { nodeSha256Hex } from '../../snapshot/store/local.js';
import { selectArg } from '../history.js';
import { command, parseCommand, storeOptions, UsageError } from '../args.js';
import { note, printJson } from '../output.js';
import { checkChannel, openExistingStore } from '../store.js';

export const verifySpec = command({
  name: 'verify',
  summary: 'recompile a version from its stored inputs and check the digest is identical',
  args: '[VERSION|latest|tag:NAME|candidate:N]',
  positionals: { max: 1 },
  options: { ...storeOptions, all: { type: 'boolean', default: false, help: 'verify every version of the channel' } },
  examples: ['meshsnap verify latest', 'meshsnap verify --all'],
});

export async function verifyCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(verifySpec, argv);
  if (values.all && positionals.length > 0) throw new UsageError('--all takes no VERSION');
  const channel = checkChannel(values.channel);
  const store = openExistingStore(values.store);
  const records = values.all
    ? await Promise.all((await store.listVersions(channel)).map((n) => selectArg(store, channel, String(n))))
    : [await selectArg(store, channel, positionals[0] ?? 'latest')];
  let failed = 0;
  for (const record of records) {
    const r = await verifyVersion(store, record, nodeSha256Hex);
    printJson(r);
    if (!r.ok) {
      failed++;
      note(`version ${r.version}: NOT reproducible: ${r.reasons.join('; ')}`);
    }
  }
  return failed > 0 ? 1 : 0;
}
