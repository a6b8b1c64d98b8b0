/** `meshsnap tag <VERSION> <NAME>`, `tag --delete NAME`, `tag` (list). */
import { readChannelState } from '../../history/channel-state.js';
import { isTagName, tag, TAG_NAME_RULE, untag } from '../../history/tag.js';
import { command, parseCommand, UsageError } from '../args.js';
import { actorOptions, historyContext } from '../history.js';
import { note, printJson } from '../output.js';
import { openExistingStore } from '../store.js';

export const tagSpec = command({
  name: 'tag',
  summary: 'name a version (e.g. a git SHA); list or delete tags',
  args: '[<VERSION> <NAME>]',
  positionals: { max: 2 },
  options: { delete: { type: 'string', value: 'NAME', help: 'delete this tag (exit 1 when there is none)' }, force: { type: 'boolean', default: false, help: 'move a tag that already names another version' }, ...actorOptions },
  examples: ['meshsnap tag 7 3f9c2e1', 'meshsnap tag 8 3f9c2e1 --force', 'meshsnap tag', 'meshsnap tag --delete 3f9c2e1'],
});

export async function tagCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(tagSpec, argv);
  if (positionals.length === 1) throw new UsageError('tag needs VERSION and NAME (or no argument to list the tags)');
  if (values.delete !== undefined && positionals.length > 0) throw new UsageError('--delete takes no VERSION');
  const name = values.delete ?? positionals[1];
  if (name !== undefined && !isTagName(name)) throw new UsageError(`${values.delete !== undefined ? '--delete' : 'NAME'}: bad tag name ${JSON.stringify(name)}: ${TAG_NAME_RULE}`);
  openExistingStore(values.store);
  const ctx = historyContext(values);
  if (values.delete !== undefined) {
    const was = await untag(ctx, values.delete);
    printJson({ tag: values.delete, deleted: was !== undefined, version: was ?? null });
    if (was === undefined) note(`channel ${ctx.channel} has no tag ${JSON.stringify(values.delete)} (meshsnap tag lists them)`);
    return was === undefined ? 1 : 0;
  }
  if (positionals.length === 0) {
    const { state } = await readChannelState(ctx.store, ctx.channel);
    for (const [name, version] of [...state.tags].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) printJson({ tag: name, version });
    return 0;
  }
  const version = await tag(ctx, positionals[0] as string, positionals[1] as string, { force: values.force });
  printJson({ tag: positionals[1], version });
  return 0;
}
