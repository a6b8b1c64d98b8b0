/**
 * `meshsnap compile <file|dir>... [--store DIR] [--channel NAME] [--strict] [--dry-run] [--mesh-config FILE] [--actor WHO] [--reason TEXT]`
 *
 * Prints one JSON line: {"version":N,"digest":"sha256:…","resources":{…},"diagnostics":{"error":n,"warning":n}}
 * plus `"status"`: `published`, `unchanged` (same digest as the channel head: nothing new stored),
 * `dry-run` (nothing stored; version is the one a publish would get) or, on a pinned channel whose
 * config differs, `candidate` (as a watcher round: the config is recorded as candidate N on
 * `<channel>.candidates`; the channel gets the pinned config with these endpoints as `version`).
 * The version records who (`--actor`, $MESHSNAP_ACTOR, the OS user) and why (`--reason`).
 * The publish guard (src/history/guard.ts) refuses a snapshot that would empty or shrink the
 * mesh: `"status":"refused"`, exit 1, recorded as candidate N; `--allow-shrink` publishes it anyway.
 * `--source-revision`/`--source-url` (default: the inputs' git commit) go on the version record.
 */
import { countBySeverity, formatDiagnostic } from '../../model/diagnostics.js';
import { readInputFiles } from '../../inputs/files.js';
import { fullGc } from '../../full-gc.js';
import { compileTextsToPublish, Handoff, type InputText, type PublishableResult } from '../../pipeline.js';
import { FileSpool, spoolDirOf } from '../../snapshot/store/file-spool.js';
import type { SnapshotStore } from '../../snapshot/store/store.js';
import { nodeSha256Hex } from '../../snapshot/store/local.js';
import { pinnedRefusalMessage, pinnedRound } from '../../history/pinned-round.js';
import { publishGuarded, refusalMessage } from '../../history/guarded-publish.js';
import { countedSnapshot, shownCounts } from '../../history/mesh-summary.js';
import { resultVersion } from '../../history/publish.js';
import { parseCommand, UsageError } from '../args.js';
import { actorOf } from '../history.js';
import { sourceOf } from '../source-revision.js';
import { note, printJson } from '../output.js';
import { checkChannel, openStore } from '../store.js';
import { compileSpec } from '../specs/compile.js';

export async function compileCommand(argv: readonly string[]): Promise<number> {
  const { values, positionals } = parseCommand(compileSpec, argv);
  if (positionals.length === 0) throw new UsageError('compile needs at least one file or directory');
  const channel = checkChannel(values.channel);

  const files = await readHandedFiles(
    values['mesh-config'] !== undefined ? [...positionals, values['mesh-config']] : positionals,
  );
  const store = openStore(values.store);
  // The snapshot's objects wait in a temp file beside the store, not in memory, until published
  // (src/snapshot/store/file-spool.ts); closing it removes it, whatever the outcome. Full
  // collections where much has just died keep the process's peak near its live data.
  const spool = FileSpool.open(spoolDirOf(store));
  const collect = fullGc();
  try {
    return await compileAndPublish(
      compileTextsToPublish(files, { hasher: nodeSha256Hex, spool, collect }),
      store,
      channel,
      values,
      positionals,
      collect,
    );
  } finally {
    spool.close();
  }
}

/**
 * The input texts (~34 MB at 10k services), handed to the pipeline so that this command's frame,
 * which waits through the build and the publish, does not keep them alive.
 */
async function readHandedFiles(paths: readonly string[]): Promise<Handoff<readonly InputText[]>> {
  return new Handoff(await readInputFiles(paths));
}

export type CompileValues = ReturnType<typeof parseCommand<(typeof compileSpec)['options']>>['values'];

/** Publishes a compile's result as `meshsnap compile` does; `collect` runs once, before anything is stored. */
export async function compileAndPublish(
  result: PublishableResult,
  store: SnapshotStore,
  channel: string,
  values: CompileValues,
  positionals: readonly string[],
  collect: () => void,
): Promise<number> {
  const counts = countBySeverity(result.diagnostics);
  if (!values.quiet) for (const d of result.diagnostics) if (d.severity !== 'info') note(formatDiagnostic(d));

  // A full compile holds every object: endpoints are counted without the store.
  const c = await countedSnapshot(result.snapshot, async () => null);
  const line = { digest: result.snapshot.digest, resources: shownCounts(c), classes: c.classes, diagnostics: counts };

  if (values.strict && counts.error > 0) {
    printJson({ version: null, ...line, status: 'failed' });
    note(`--strict: ${counts.error} error diagnostic(s); nothing stored`);
    return 1;
  }
  if (values['dry-run']) {
    const head = await store.readChannel(channel);
    printJson({
      version: head ? head.version + (head.digest === result.snapshot.digest ? 0 : 1) : 1,
      ...line,
      status: 'dry-run',
    });
    return 0;
  }
  // The build's last groups and the counting just died: the publish (the pack, the guard) starts
  // from the live data, not from a heap limit set before them.
  collect();
  const createdAt = new Date().toISOString();
  const source = sourceOf(positionals, values['source-revision'], values['source-url']);
  const who = {
    actor: actorOf(values.actor),
    ...(values.reason !== undefined ? { reason: values.reason } : {}),
    ...(source ? { source } : {}),
  };
  // A pinned channel keeps its config (src/history/pinned-round.ts), as in a watcher round.
  const round = await pinnedRound({
    store,
    channel,
    stored: result.stored,
    snapshot: result.snapshot,
    diagnostics: result.diagnostics,
    createdAt,
    hasher: nodeSha256Hex,
    ...who,
    allowShrink: values['allow-shrink'],
  });
  if (round?.refused) {
    const { verdict } = round.refused;
    printJson({
      version: round.refused.served,
      ...line,
      status: 'refused',
      candidate: round.candidateVersion,
      pinned: round.pinnedVersion,
      problems: verdict.problems,
      lostServices: verdict.lostServices,
      lostNamespaces: verdict.lostNamespaces,
    });
    note(pinnedRefusalMessage(channel, round.refused));
    return 1;
  }
  if (round) {
    const served = resultVersion(round.served);
    printJson({
      version: served,
      ...line,
      status: 'candidate',
      candidate: round.candidateVersion,
      pinned: round.pinnedVersion,
    });
    note(
      `channel ${channel} is pinned to version ${round.pinnedVersion}: this config is ${round.candidate ? '' : 'already '}candidate ${round.candidateVersion} (meshsnap promote candidate:${round.candidateVersion} serves it); version ${served} serves the pinned config with these endpoints`,
    );
    return 0;
  }
  // Stored inputs first (a version record never names inputs that are not stored), then the snapshot.
  const published = await publishGuarded(store, channel, result, who, createdAt, {
    allowShrink: values['allow-shrink'],
  });
  if (published.status === 'refused') {
    printJson({
      version: published.served,
      ...line,
      status: 'refused',
      candidate: published.candidate,
      problems: published.verdict.problems,
      lostServices: published.verdict.lostServices,
      lostNamespaces: published.verdict.lostNamespaces,
    });
    note(refusalMessage(channel, published));
    return 1;
  }
  if (published.status === 'unchanged') {
    printJson({ version: published.head.version, ...line, status: 'unchanged' });
    note(
      `unchanged: channel ${channel} is already at ${published.head.digest} (version ${published.head.version}); nothing new stored`,
    );
  } else {
    printJson({
      version: published.record.version,
      ...line,
      status: 'published',
      objectsWritten: published.objectsWritten,
    });
  }
  return 0;
}
