/** `meshsnap audit [--since ISO|duration] [--proxy NODE_ID] [--json]`: publishes, operator actions, relay ACK/NACKs. */
import { auditTrail, parseSince, type TrailEvent } from '../../history/audit.js';
import { parse, storeOptions, UsageError } from '../args.js';
import { printJson } from '../output.js';
import { checkChannel, openStore } from '../store.js';

export const auditUsage = 'meshsnap audit [--since ISO|15m|2h|7d] [--proxy NODE_ID] [--channel NAME] [--json] [--store DIR]';

export async function auditCommand(argv: readonly string[]): Promise<number> {
  const { values } = parse(argv, { ...storeOptions, since: { type: 'string' }, proxy: { type: 'string' }, json: { type: 'boolean', default: false } }, { max: 0 });
  const channel = checkChannel(values.channel);
  let since: string | undefined;
  if (values.since !== undefined) {
    since = parseSince(values.since, new Date());
    if (since === undefined) throw new UsageError(`--since: not a time or duration: ${JSON.stringify(values.since)}`);
  }
  const events = await auditTrail(openStore(values.store), { channel, ...(since !== undefined ? { since } : {}), ...(values.proxy !== undefined ? { proxy: values.proxy } : {}) });
  for (const e of events) {
    if (values.json) printJson(e);
    else process.stdout.write(`${eventText(e)}\n`);
  }
  return 0;
}

function eventText(e: TrailEvent): string {
  const parts = [e.at, e.kind.padEnd(9)];
  if (e.version !== undefined) parts.push(`v${e.version}`);
  if (e.origin) parts.push(`(${e.origin.kind} from ${e.origin.from})`);
  if (e.source) parts.push(`rev ${e.source.revision.slice(0, 12)}${e.source.dirty ? ' (dirty)' : ''}`);
  if (e.nodeId) parts.push(e.nodeId, e.typeUrl?.replace(/^.*\./, '') ?? '');
  if (e.actor) parts.push(`by ${e.actor}`);
  else if (e.managers) parts.push(`by ${e.managers.join(', ')} (field managers)`);
  if (e.reason) parts.push(`— ${e.reason}`);
  if (e.error) parts.push(`error: ${e.error}`);
  if (e.detail) parts.push(JSON.stringify(e.detail));
  return parts.join(' ');
}
