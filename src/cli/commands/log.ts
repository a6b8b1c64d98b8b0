/** `meshsnap log [--channel NAME] [--store DIR] [--limit N]`: versions, newest first, one JSON line each (with origin, actor and reason when recorded). */
import { shownCounts } from '../../history/mesh-summary.js';
import { recordDiagnosticCounts } from '../../snapshot/manifest.js';
import { intFlag, parseCommand } from '../args.js';
import { printJson } from '../output.js';
import { checkChannel, openExistingStore } from '../store.js';
import { logSpec } from '../specs/log.js';

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
