/**
 * `meshsnap show [VERSION|latest|tag:NAME|candidate:N] --node NODE_ID [--metadata JSON] [--type clusters|endpoints|listeners|routes]`
 *
 * Exactly what that proxy would be served, shaped like Envoy's /config_dump.
 */
import { servedConfig } from '../../api/served-config.js';
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import { selectArg } from '../history.js';
import { parse, storeOptions, UsageError } from '../args.js';
import { note, printJson } from '../output.js';
import { checkChannel, openStore } from '../store.js';

export const showUsage = 'meshsnap show [VERSION|latest|tag:NAME|candidate:N] --node NODE_ID [--metadata JSON] [--type clusters|endpoints|listeners|routes] [--channel NAME] [--store DIR]';

export function parseMetadata(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--metadata is not JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError('--metadata must be a JSON object');
  return value as Record<string, unknown>;
}

export function parseTypes(value: string | undefined): readonly XdsType[] {
  if (value === undefined) return XDS_TYPES;
  const types = value.split(',');
  for (const t of types) if (!(XDS_TYPES as readonly string[]).includes(t)) throw new UsageError(`--type must be one of ${XDS_TYPES.join(', ')}`);
  return types as XdsType[];
}

export async function showCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...storeOptions, node: { type: 'string' }, metadata: { type: 'string' }, type: { type: 'string' } }, { max: 1 });
  if (values.node === undefined) throw new UsageError('show needs --node NODE_ID');
  const types = parseTypes(values.type);
  const metadata = parseMetadata(values.metadata);
  const channel = checkChannel(values.channel);
  const store = openStore(values.store);
  const record = await selectArg(store, channel, positionals[0]);
  const served = await servedConfig(store, record.digest, String(record.version), { id: values.node, metadata }, types);
  note(`version ${record.version} (${record.digest}), proxy class ${served.classId}`);
  printJson(served.dump);
  return 0;
}

// The pure core lives beside the HTTP API (GET …/snapshots/:v/config answers the same).
export { servedConfig } from '../../api/served-config.js';
