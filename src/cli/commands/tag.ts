/** `meshsnap tag <VERSION> <NAME>`, `tag --delete NAME`, `tag` (list). */
import { readChannelState } from '../../history/channel-state.js';
import { tag, untag } from '../../history/tag.js';
import { parse, UsageError } from '../args.js';
import { historyContext, historyOptions } from '../history.js';
import { printJson } from '../output.js';

export const tagUsage = 'meshsnap tag [<VERSION> <NAME> [--force] | --delete NAME] [--channel NAME] [--actor WHO] [--store DIR]  (--force moves an existing tag)';

export async function tagCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...historyOptions, delete: { type: 'string' }, force: { type: 'boolean', default: false } }, { max: 2 });
  const ctx = historyContext(values);
  if (values.delete !== undefined) {
    if (positionals.length > 0) throw new UsageError('--delete takes no VERSION');
    const was = await untag(ctx, values.delete);
    printJson({ tag: values.delete, deleted: was !== undefined, version: was ?? null });
    return was === undefined ? 1 : 0;
  }
  if (positionals.length === 0) {
    const { state } = await readChannelState(ctx.store, ctx.channel);
    for (const [name, version] of Object.entries(state.tags).sort()) printJson({ tag: name, version });
    return 0;
  }
  if (positionals.length !== 2) throw new UsageError('tag needs VERSION and NAME');
  const version = await tag(ctx, positionals[0] as string, positionals[1] as string, { force: values.force });
  printJson({ tag: positionals[1], version });
  return 0;
}
