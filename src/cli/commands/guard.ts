/** `meshsnap guard [--max-shrink PERCENT]`: show or set the channel's publish guard threshold (src/history/guard.ts). */
import { guardPolicy, setGuardPolicy } from '../../history/guarded-publish.js';
import { parseShrinkPercent } from '../../history/guard.js';
import { parseCommand, UsageError } from '../args.js';
import { historyContext } from '../history.js';
import { printJson } from '../output.js';
import { guardSpec } from '../specs/guard.js';

export async function guardCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseCommand(guardSpec, argv);
  const ctx = historyContext(values);
  const text = values['max-shrink'];
  if (text === undefined) {
    printJson({ channel: ctx.channel, guard: await guardPolicy(ctx.store, ctx.channel) });
    return 0;
  }
  const maxShrinkPercent = parseShrinkPercent(text);
  if (maxShrinkPercent === undefined)
    throw new UsageError(`--max-shrink takes a percentage from 0 to 100, not ${JSON.stringify(text)}`);
  printJson({ channel: ctx.channel, guard: await setGuardPolicy(ctx, { maxShrinkPercent }) });
  return 0;
}
