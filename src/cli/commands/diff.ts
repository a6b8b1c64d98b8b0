/** `meshsnap diff <A> <B> [--node ID --metadata JSON] [--type …] [--json]`. */
import { diffVersions, formatVersionDiff } from '../../history/diff/index.js';
import { selectArg } from '../history.js';
import { parse, storeOptions } from '../args.js';
import { printJson, printText } from '../output.js';
import { checkChannel, openStore } from '../store.js';
import { parseMetadata, parseTypes } from './show.js';

export const diffUsage = 'meshsnap diff <A> <B> [--node NODE_ID --metadata JSON] [--type clusters,endpoints,listeners,routes] [--json] [--channel NAME] [--store DIR]';

export async function diffCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...storeOptions, node: { type: 'string' }, metadata: { type: 'string' }, type: { type: 'string' }, json: { type: 'boolean', default: false } }, { min: 2, max: 2 });
  const channel = checkChannel(values.channel);
  const types = parseTypes(values.type);
  const store = openStore(values.store);
  const a = await selectArg(store, channel, positionals[0]);
  const b = await selectArg(store, channel, positionals[1]);
  const d = await diffVersions(store, a, b, { types, ...(values.node !== undefined ? { node: { id: values.node, metadata: parseMetadata(values.metadata) } } : {}) });
  if (values.json) printJson(d);
  else printText(formatVersionDiff(d));
  return 0;
}
