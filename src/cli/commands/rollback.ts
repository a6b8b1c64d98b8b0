/** `meshsnap rollback <VERSION>`: N's config layer + the current endpoints as a new version; pins the channel. */
import { rollback } from '../../history/rollback.js';
import { parseCommand } from '../args.js';
import { historyContext } from '../history.js';
import { note, printJson } from '../output.js';
import { rollbackSpec } from '../specs/rollback.js';

export async function rollbackCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(rollbackSpec, argv);
  const ctx = historyContext(values);
  const r = await rollback(ctx, positionals[0] as string, { force: values.force });
  printJson({
    version: r.version,
    digest: r.digest,
    from: r.from,
    status: r.result.status,
    pinned: r.pin.version,
    actor: ctx.actor,
    ...(ctx.reason !== undefined ? { reason: ctx.reason } : {}),
  });
  note(
    `channel ${ctx.channel}: version ${r.version} serves the config of ${r.from} with the current endpoints; pinned (meshsnap unpin to follow the cluster again)`,
  );
  return 0;
}
