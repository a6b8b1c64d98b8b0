/**
 * `meshsnap compile <file|dir>... [--store DIR] [--channel NAME] [--strict] [--dry-run] [--mesh-config FILE]`
 *
 * Prints one JSON line: {"version":N,"digest":"sha256:…","resources":{…},"diagnostics":{"error":n,"warning":n}}
 * plus `"status"`: `published`, `unchanged` (same digest as the channel head: nothing new stored)
 * or `dry-run` (nothing stored; version is the one a publish would get).
 */
import { countBySeverity, formatDiagnostic } from '../../inputs/diagnostics.js';
import { readInputFiles } from '../../inputs/files.js';
import { putStoredInputs, withRecordFields } from '../../model/stored-inputs.js';
import { compileTexts } from '../../pipeline.js';
import { nodeSha256Hex } from '../../snapshot/store/local.js';
import { publishSnapshot } from '../../snapshot/store/publish.js';
import { parse, storeOptions, UsageError } from '../args.js';
import { note, printJson } from '../output.js';
import { checkChannel, openStore } from '../store.js';

export const compileUsage = 'meshsnap compile <file|dir>... [--store DIR] [--channel NAME] [--strict] [--dry-run] [--mesh-config FILE] [--quiet]';

export async function compileCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...storeOptions,
    strict: { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
    'mesh-config': { type: 'string' },
    quiet: { type: 'boolean', short: 'q', default: false },
  });
  if (positionals.length === 0) throw new UsageError('compile needs at least one file or directory');
  const channel = checkChannel(values.channel);

  const files = await readInputFiles(values['mesh-config'] !== undefined ? [...positionals, values['mesh-config']] : positionals);
  const result = compileTexts(files, { hasher: nodeSha256Hex });
  const counts = countBySeverity(result.diagnostics);
  if (!values.quiet) for (const d of result.diagnostics) if (d.severity !== 'info') note(formatDiagnostic(d));

  const c = result.snapshot.counts;
  const resources = { clusters: c.clusters, endpoints: c.endpoints, listeners: c.listeners, routes: c.routes };
  const line = { digest: result.snapshot.digest, resources, classes: c.classes, diagnostics: counts };

  if (values.strict && counts.error > 0) {
    printJson({ version: null, ...line, status: 'failed' });
    note(`--strict: ${counts.error} error diagnostic(s); nothing stored`);
    return 1;
  }
  const store = openStore(values.store);
  if (values['dry-run']) {
    const head = await store.readChannel(channel);
    printJson({ version: head ? head.version + (head.digest === result.snapshot.digest ? 0 : 1) : 1, ...line, status: 'dry-run' });
    return 0;
  }
  // The inputs go in first, so a version record never names inputs that are not stored.
  // Their digest is the snapshot's inputs digest.
  const head = await store.readChannel(channel);
  if (head?.digest !== result.snapshot.digest) await putStoredInputs(store, result.stored);
  const published = await publishSnapshot(withRecordFields(store, { inputs: result.stored.digest }), channel, result.snapshot, {
    createdAt: new Date().toISOString(),
    diagnostics: result.diagnostics,
  });
  if (published.status === 'unchanged') {
    printJson({ version: published.head.version, ...line, status: 'unchanged' });
    note(`unchanged: channel ${channel} is already at ${published.head.digest} (version ${published.head.version}); nothing new stored`);
  } else {
    printJson({ version: published.record.version, ...line, status: 'published', objectsWritten: published.objectsWritten });
  }
  return 0;
}
