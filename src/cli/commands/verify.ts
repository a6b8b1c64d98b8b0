/** `meshsnap verify [VERSION|--all]`: recompile from the stored inputs; the digest must be byte-identical. */
import { verifyVersion } from '../../history/verify.js';
import { nodeSha256Hex } from '../../snapshot/store/local.js';
import { selectArg } from '../history.js';
import { parseCommand, UsageError } from '../args.js';
import { note, printJson } from '../output.js';
import { checkChannel, openExistingStore } from '../store.js';
import { verifySpec } from '../specs/verify.js';

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
