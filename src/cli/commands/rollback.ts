/** `meshsnap rollback <VERSION>`: N's config layer + the current endpoints as a new version; pins the channel. */
import { rollback } from '../../history/rollback.js';
import { command, parseCommand } from '../args.js';
import { actorOptions, historyContext, reasonOption } from '../history.js';
import { note, printJson } from '../output.js';

export const rollbackSpec = command({
  name: 'rollback',
  summary: 'serve an earlier version’s config with the current endpoints (pins the channel)',
  args: '<VERSION|tag:NAME>',
  positionals: { min: 1, max: 1 },
  // --reason is required, as by the API's POST …/rollback.
  options: { ...reasonOption, reason: { ...reasonOption.reason, required: true }, ...actorOptions, force: { type: 'boolean', default: false, help: 'even when clusters that have endpoints in the target would be served none' } },
  examples: ["meshsnap rollback 6 --reason 'v7 broke checkout'", "meshsnap rollback tag:v1.2 --reason 'back to the release'"],
});

export async function rollbackCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(rollbackSpec, argv);
  const ctx = historyContext(values);
  const r = await rollback(ctx, positionals[0] as string, { force: values.force });
  printJson({ version: r.version, digest: r.digest, from: r.from, status: r.result.status, pinned: r.pin.version, actor: ctx.actor, ...(ctx.reason !== undefined ? { reason: ctx.reason } : {}) });
  note(`channel ${ctx.channel}: version ${r.version} serves the config of ${r.from} with the current endpoints; pinned (meshsnap unpin to follow the cluster again)`);
  return 0;
}
