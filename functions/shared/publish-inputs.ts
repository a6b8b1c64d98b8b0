/**
 * Input files → compile → publish to a channel, as the API's compile route does, for callers that
 * are not HTTP requests (the S3 inputs handler). Publishing goes through the history library, so a
 * pinned channel records a candidate instead, and the record names who and why. Pure.
 */
import { defaultHistory } from '../../src/api/history-binding.js';
import type { HistoryOps, Operator } from '../../src/api/history-port.js';
import { PublishRefusedError } from '../../src/history/guarded-publish.js';
import { PinnedRefusedError } from '../../src/history/pinned-round.js';
import { countBySeverity, type Diagnostic } from '../../src/model/diagnostics.js';
import { storedDocument } from '../../src/snapshot/stored-inputs/index.js';
import { reservedChannelProblem } from '../../src/history/context.js';
import { compileDocuments, parseTexts, type InputText, type PipelineOptions } from '../../src/pipeline.js';
import type { SnapshotStore } from '../../src/snapshot/store/store.js';

export interface PublishInputsOptions {
  readonly compile?: PipelineOptions;
  /** Publish nothing when any error diagnostic exists (as `meshsnap compile --strict`). */
  readonly strict?: boolean;
  readonly history?: HistoryOps;
}

export interface PublishInputsResult {
  readonly channel: string;
  /** published | candidate | unchanged (from the history library), refused (by the publish guard: recorded as candidate `candidate`), or failed (nothing stored). */
  readonly status: string;
  readonly version: number | null;
  readonly digest: string | null;
  readonly diagnosticCounts: { readonly error: number; readonly warning: number };
  readonly diagnostics: readonly Diagnostic[];
  readonly message?: string;
  readonly candidate?: number;
}

export async function publishInputs(
  store: SnapshotStore,
  channel: string,
  files: readonly InputText[],
  op: Operator,
  opts: PublishInputsOptions = {},
): Promise<PublishInputsResult> {
  const history = opts.history ?? defaultHistory;
  const hasher = opts.compile?.hasher;
  const reserved = reservedChannelProblem(channel);
  if (reserved)
    return {
      channel,
      status: 'failed',
      version: null,
      digest: null,
      diagnosticCounts: { error: 0, warning: 0 },
      diagnostics: [],
      message: reserved,
    };
  const { documents, parseDiagnostics } = parseTexts(files);
  if (documents.length === 0) {
    return {
      channel,
      status: 'failed',
      version: null,
      digest: null,
      diagnosticCounts: countBySeverity(parseDiagnostics),
      diagnostics: parseDiagnostics,
      message: 'no document parsed',
    };
  }
  const result = compileDocuments(documents, opts.compile ?? {}, parseDiagnostics);
  const counts = countBySeverity(result.diagnostics);
  const base = { channel, digest: result.snapshot.digest, diagnosticCounts: counts, diagnostics: result.diagnostics };
  if (opts.strict && counts.error > 0)
    return {
      ...base,
      status: 'failed',
      version: null,
      message: `strict: ${counts.error} error diagnostic(s); nothing stored`,
    };
  const objects = documents.flatMap((d) => storedDocument(d.object, hasher) ?? []);
  try {
    const outcome = await history.publish(
      store,
      channel,
      { snapshot: result.snapshot, diagnostics: result.diagnostics, objects, stored: result.stored },
      op,
    );
    return { ...base, status: outcome.status, version: outcome.version };
  } catch (err) {
    // Not a failure to retry: the same inputs would be refused again.
    if (err instanceof PinnedRefusedError)
      return { ...base, status: 'refused', version: err.refused.served, message: err.message };
    if (!(err instanceof PublishRefusedError)) throw err;
    return {
      ...base,
      status: 'refused',
      version: err.refused.served,
      candidate: err.refused.candidate,
      message: err.message,
    };
  }
}
