/** `meshsnap log [--channel NAME] [--store DIR] [--limit N]`: versions, newest first, one JSON line each (with origin, actor and reason when recorded). */
import { shownCounts } from '../../history/mesh-summary.js';
import { recordDiagnosticCounts } from '../../snapshot/manifest.js';
import { command, intFlag, parseCommand, storeOptions } from '../args.js';
import { printJson } from '../output.js';
import { checkChannel, openExistingStore } from '../store.js';

export const logSpec = command({
  name: 'log',
  summary: 'list a channel’s versions, newest first',
  options: { ...storeOptions, limit: { type: 'string', value: 'N', help: 'print at most N versions (a whole number ≥ 1)' } },
  examples: ['meshsnap log --limit 5', 'meshsnap log --channel staging --store s3://bucket/meshsnap'],
});

export async function logCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseCommand(logSpec, argv);
  const channel = checkChannel(values.channel);
  const limit = values.limit === undefined ? Infinity : intFlag('limit', values.limit, 1);
  const store = openExistingStore(values.store);
  const versions = (await store.listVersions(channel)).slice(0, limit);
  for (const n of versions) {
    const r = await store.getVersion(channel, n);
    if (!r) continue;
    printJson({
      version: r.version,
      digest: r.digest,
      parent: r.parent,
      createdAt: r.createdAt,
      inputsDigest: r.inputsDigest,
      compiler: r.compiler,
      resources: shownCounts(r.counts),
      diagnostics: errorsAndWarnings(r),
      // History fields, when the record has them (rollbacks, pinned rounds, who and why).
      ...(r.origin !== undefined ? { origin: r.origin } : {}),
      ...(r.actor !== undefined ? { actor: r.actor } : {}),
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
      ...(r.source !== undefined ? { source: r.source } : {}),
    });
  }
  return 0;
}

/** `{error, warning}`, as `meshsnap compile` prints them. */
function errorsAndWarnings(r: Parameters<typeof recordDiagnosticCounts>[0]): { error: number; warning: number } {
  const { error, warning } = recordDiagnosticCounts(r);
  return { error, warning };
}
