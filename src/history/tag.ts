/** Tags: names (e.g. a git SHA) for versions, selectable as `tag:NAME` or plain NAME. */
import { updateChannelState } from './channel-state.js';
import type { HistoryContext } from './context.js';
import { recordEvent } from './audit.js';
import { HistoryError } from './errors.js';
import { selectVersion } from './select.js';

/** Not a number (that selects a version), no ':' (prefixes), plain path-safe text. */
const TAG_RE = /^(?![0-9]+$)(?!latest$)[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/;
export const TAG_NAME_RULE = `letters, digits, '.', '_', '/', '-', not a number, not "latest"`;
export const isTagName = (name: string): boolean => TAG_RE.test(name);

export async function tag(ctx: HistoryContext, spec: string, name: string): Promise<number> {
  if (!isTagName(name)) throw new HistoryError(`bad tag name ${JSON.stringify(name)}: ${TAG_NAME_RULE}`);
  const record = await selectVersion(ctx.store, ctx.channel, spec);
  if (record.status === 'candidate') throw new HistoryError('candidates cannot be tagged: promote first');
  await updateChannelState(ctx.store, ctx.channel, (s) => (s.tags.get(name) === record.version ? undefined : { ...s, tags: new Map(s.tags).set(name, record.version) }));
  await recordEvent(ctx, { kind: 'tag', version: record.version, digest: record.digest, detail: { tag: name } });
  return record.version;
}

export async function untag(ctx: HistoryContext, name: string): Promise<number | undefined> {
  let was: number | undefined;
  await updateChannelState(ctx.store, ctx.channel, (s) => {
    was = s.tags.get(name);
    if (was === undefined) return undefined;
    const tags = new Map(s.tags);
    tags.delete(name);
    return { ...s, tags };
  });
  if (was !== undefined) await recordEvent(ctx, { kind: 'untag', version: was, detail: { tag: name } });
  return was;
}
