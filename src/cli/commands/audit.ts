/** `meshsnap audit [--since ISO|duration] [--proxy NODE_ID] [--json]`: publishes, operator actions, relay ACK/NACKs. */
import { auditTrail, parseSince } from '../../history/audit.js';
import { groupAcksPerPush, type GroupedEvent } from '../../history/audit-groups.js';
import { parseCommand, UsageError } from '../args.js';
import { printJson, printText } from '../output.js';
import { checkChannel, openExistingStore } from '../store.js';
import { auditSpec } from '../specs/audit.js';

export async function auditCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseCommand(auditSpec, argv);
  const channel = checkChannel(values.channel);
  let since: string | undefined;
  if (values.since !== undefined) {
    since = parseSince(values.since, new Date());
    if (since === undefined) throw new UsageError(`--since: not a time or duration: ${JSON.stringify(values.since)}`);
  }
  const events = await auditTrail(openExistingStore(values.store), {
    channel,
    ...(since !== undefined ? { since } : {}),
    ...(values.proxy !== undefined ? { proxy: values.proxy } : {}),
  });
  if (values.json) for (const e of events) printJson(e);
  else for (const e of groupAcksPerPush(events)) printText(eventText(e));
  return 0;
}

const shortType = (typeUrl: string): string => typeUrl.replace(/^.*\./, '');

function eventText(e: GroupedEvent): string {
  const parts = [e.at, e.kind.padEnd(9)];
  // Candidates are already named `candidate:N`.
  if (e.version !== undefined) parts.push(typeof e.version === 'number' ? `v${e.version}` : e.version);
  if (e.origin) parts.push(`(${e.origin.kind} from ${e.origin.from})`);
  if (e.source) parts.push(`rev ${e.source.revision.slice(0, 12)}${e.source.dirty ? ' (dirty)' : ''}`);
  if (e.nodeId) parts.push(e.nodeId);
  if (e.typeUrls) parts.push(e.typeUrls.map(shortType).join(','));
  else if (e.typeUrl) parts.push(shortType(e.typeUrl));
  if (e.actor) parts.push(`by ${e.actor}`);
  else if (e.managers) parts.push(`by ${e.managers.join(', ')} (field managers)`);
  if (e.reason) parts.push(`— ${e.reason}`);
  if (e.error) parts.push(`error: ${e.error}`);
  if (e.detail) parts.push(JSON.stringify(e.detail));
  return parts.join(' ');
}
