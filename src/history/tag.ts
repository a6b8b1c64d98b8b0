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

/** The tag names another version already (API 409). */
export class TagExistsError extends HistoryError {
  override readonly name = 'TagExistsError';
}

/** `force` moves a tag that names another version. */
export async function tag(
  ctx: HistoryContext,
  spec: string,
  name: string,
  opts: { readonly force?: boolean } = {},
): Promise<number> {
  if (!isTagName(name)) throw new HistoryError(`bad tag name ${JSON.stringify(name)}: ${TAG_NAME_RULE}`);
  const record = await selectVersion(ctx.store, ctx.channel, spec);
  if (record.status === 'candidate') throw new HistoryError('candidates cannot be tagged: promote first');
  await updateChannelState(ctx.store, ctx.channel, (s) => {
    const was = s.tags.get(name);
    if (was === record.version) return undefined;
    if (was !== undefined && !opts.force)
      throw new TagExistsError(
        `tag ${name} already names version ${was}: pass --force (API: force: true) to move it to ${record.version}`,
      );
    return { ...s, tags: new Map(s.tags).set(name, record.version) };
  });
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
