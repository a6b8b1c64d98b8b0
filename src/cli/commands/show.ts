/**
 * `meshsnap show [VERSION|latest|tag:NAME|candidate:N] --node NODE_ID [--metadata JSON] [--type clusters|endpoints|listeners|routes]`
 *
 * Exactly what that proxy would be served, shaped like Envoy's /config_dump, with the chosen proxy
 * class as `class` (a warning on stderr when it is the namespace's fallback `sidecar/<ns>/_`).
 */
import { servedConfig } from '../../api/served-config.js';
import { XDS_TYPES, type XdsType } from '../../xds/type-urls.js';
import { selectArg } from '../history.js';
import { parseCommand, UsageError } from '../args.js';
import { warnOnFallback } from '../node-class.js';
import { note, printJson } from '../output.js';
import { checkChannel, openExistingStore } from '../store.js';
import { showSpec } from '../specs/show.js';

/** The flags that say which proxy (show, diff). */

export function parseMetadata(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--metadata is not JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new UsageError('--metadata must be a JSON object');
  return value as Record<string, unknown>;
}

export function parseTypes(value: string | undefined): readonly XdsType[] {
  if (value === undefined) return XDS_TYPES;
  const types = value.split(',');
  for (const t of types)
    if (!(XDS_TYPES as readonly string[]).includes(t))
      throw new UsageError(`--type must be one of ${XDS_TYPES.join(', ')}`);
  return types as XdsType[];
}

export async function showCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(showSpec, argv);
  const node = { id: values.node as string, metadata: parseMetadata(values.metadata) };
  const types = parseTypes(values.type);
  const channel = checkChannel(values.channel);
  const store = openExistingStore(values.store);
  const record = await selectArg(store, channel, positionals[0]);
  const served = await servedConfig(store, record.digest, String(record.version), node, types);
  note(`version ${record.version} (${record.digest}), proxy class ${served.classId}`);
  warnOnFallback(served.classId, node);
  printJson({ class: served.classId, ...served.dump });
  return 0;
}

// The pure core lives beside the HTTP API (GET …/snapshots/:v/config answers the same).
export { servedConfig } from '../../api/served-config.js';
