/** `meshsnap tag <VERSION> <NAME>`, `tag --delete NAME`, `tag` (list). */
import { readChannelState } from '../../history/channel-state.js';
import { isTagName, tag, TAG_NAME_RULE, untag } from '../../history/tag.js';
import { parseCommand, UsageError } from '../args.js';
import { historyContext } from '../history.js';
import { note, printJson } from '../output.js';
import { openExistingStore } from '../store.js';
import { tagSpec } from '../specs/tag.js';

export async function tagCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(tagSpec, argv);
  if (positionals.length === 1) throw new UsageError('tag needs VERSION and NAME (or no argument to list the tags)');
  if (values.delete !== undefined && positionals.length > 0) throw new UsageError('--delete takes no VERSION');
  const name = values.delete ?? positionals[1];
  if (name !== undefined && !isTagName(name))
    throw new UsageError(
      `${values.delete !== undefined ? '--delete' : 'NAME'}: bad tag name ${JSON.stringify(name)}: ${TAG_NAME_RULE}`,
    );
  openExistingStore(values.store);
  const ctx = historyContext(values);
  if (values.delete !== undefined) {
    const was = await untag(ctx, values.delete);
    printJson({ tag: values.delete, deleted: was !== undefined, version: was ?? null });
    if (was === undefined)
      note(`channel ${ctx.channel} has no tag ${JSON.stringify(values.delete)} (meshsnap tag lists them)`);
    return was === undefined ? 1 : 0;
  }
  if (positionals.length === 0) {
    const { state } = await readChannelState(ctx.store, ctx.channel);
    for (const [name, version] of [...state.tags].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      printJson({ tag: name, version });
    return 0;
  }
  const version = await tag(ctx, positionals[0] as string, positionals[1] as string, { force: values.force });
  printJson({ tag: positionals[1], version });
  return 0;
}
