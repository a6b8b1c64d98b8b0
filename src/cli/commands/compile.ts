/**
 * `meshsnap compile <file|dir>... [--store DIR] [--channel NAME] [--strict] [--dry-run] [--mesh-config FILE] [--actor WHO] [--reason TEXT]`
 *
 * Prints one JSON line: {"version":N,"digest":"sha256:…","resources":{…},"diagnostics":{"error":n,"warning":n}}
 * plus `"status"`: `published`, `unchanged` (same digest as the channel head: nothing new stored),
 * `dry-run` (nothing stored; version is the one a publish would get) or, on a pinned channel whose
 * config differs, `candidate` (as a watcher round: the config is recorded as candidate N on
 * `<channel>.candidates`; the channel gets the pinned config with these endpoints as `version`).
 * The version records who (`--actor`, $MESHSNAP_ACTOR, the OS user) and why (`--reason`).
 */
import { countBySeverity, formatDiagnostic } from '../../model/diagnostics.js';
import { readInputFiles } from '../../inputs/files.js';
import { compileTexts } from '../../pipeline.js';
import { nodeSha256Hex } from '../../snapshot/store/local.js';
import { pinnedRound } from '../../history/pinned-round.js';
import { publishCompiled } from '../../history/publish.js';
import { command, parseCommand, UsageError } from '../args.js';
import { actorOf, historyOptions } from '../history.js';
import { note, printJson } from '../output.js';
import { checkChannel, openStore } from '../store.js';

export const compileSpec = command({
  name: 'compile',
  summary: 'compile Istio config + services into a stored snapshot',
  args: '<file|dir>...',
  positionals: { min: 1 },
  options: {
    ...historyOptions,
    strict: { type: 'boolean', default: false, help: 'exit 1 and store nothing when there is any error diagnostic' },
    'dry-run': { type: 'boolean', default: false, help: 'compile and print the line a publish would; store nothing' },
    'mesh-config': { type: 'string', value: 'FILE', help: 'a mesh config file (ConfigMap istio or kind: MeshConfig)' },
    quiet: { type: 'boolean', short: 'q', default: false, help: 'do not print the warning and error diagnostics on stderr (they are still stored and counted)' },
  },
  examples: ['meshsnap compile k8s/ istio/ --reason "reviews 50/50"', 'meshsnap compile mesh.yaml --strict --dry-run'],
});

export async function compileCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(compileSpec, argv);
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
  const createdAt = new Date().toISOString();
  const who = { actor: actorOf(values.actor), ...(values.reason !== undefined ? { reason: values.reason } : {}) };
  // A pinned channel keeps its config (src/history/pinned-round.ts), as in a watcher round.
  const round = await pinnedRound({ store, channel, stored: result.stored, snapshot: result.snapshot, diagnostics: result.diagnostics, createdAt, hasher: nodeSha256Hex, ...who });
  if (round) {
    const served = round.served.status === 'published' ? round.served.record.version : round.served.head.version;
    const candidate = round.candidate ? (round.candidate.status === 'published' ? round.candidate.record.version : round.candidate.head.version) : null;
    printJson({ version: served, ...line, status: 'candidate', candidate, pinned: round.pinnedVersion });
    note(`channel ${channel} is pinned to version ${round.pinnedVersion}: this config is ${candidate === null ? 'already a candidate' : `candidate ${candidate}`} (meshsnap promote candidate:N serves it); version ${served} serves the pinned config with these endpoints`);
    return 0;
  }
  // Stored inputs first (a version record never names inputs that are not stored), then the snapshot.
  const published = await publishCompiled(store, channel, result, who, createdAt);
  if (published.status === 'unchanged') {
    printJson({ version: published.head.version, ...line, status: 'unchanged' });
    note(`unchanged: channel ${channel} is already at ${published.head.digest} (version ${published.head.version}); nothing new stored`);
  } else {
    printJson({ version: published.record.version, ...line, status: 'published', objectsWritten: published.objectsWritten });
  }
  return 0;
}
