/**
 * POST /channels/:ch/compile — inputs in, snapshot out: { files: [{ file, text }], strict?, dryRun?, reason?, allowShrink?, sourceRevision?, sourceUrl? }.
 * Compiles through src/pipeline.ts (the same digest as the CLI, the Worker and the Lambda), stores
 * the inputs, and publishes through the history library: the record names the caller and the
 * reason; on a pinned channel the new config becomes a candidate and endpoints still follow.
 * Bad input is a 400 `invalid_inputs` with the diagnostics: when nothing parses at all, or when
 * `strict` and any error diagnostic exists. Otherwise invalid objects are skipped, as the CLI does.
 * A snapshot the publish guard refuses (it would empty or shrink the mesh) is a 409 `publish_guard`
 * naming what would disappear and the candidate it was recorded as; `allowShrink: true` publishes it.
 */
import { reservedChannelProblem } from '../../history/context.js';
import { countBySeverity } from '../../model/diagnostics.js';
import type { ApiApp, ApiDeps, Guard } from '../context.js';
import { badRequest } from '../../errors.js';
import { InvalidInputsError } from '../errors.js';
import type { HistoryOps } from '../history-port.js';
import { booleanField, channelParam, jsonBody, optionalString } from '../request.js';
import type { VersionSource } from '../../snapshot/manifest.js';

const MAX_FILES = 10_000;

interface InputFile {
  readonly file: string;
  readonly text: string;
}

function filesOf(value: unknown): InputFile[] {
  if (!Array.isArray(value) || value.length === 0)
    throw badRequest('files must be a non-empty array of { file, text }');
  if (value.length > MAX_FILES) throw badRequest(`at most ${MAX_FILES} files`);
  return value.map((f, i) => {
    const o = f as Record<string, unknown> | null;
    if (o === null || typeof o !== 'object' || typeof o.text !== 'string')
      throw badRequest(`files[${i}].text must be a string`);
    if (o.file !== undefined && (typeof o.file !== 'string' || o.file.length > 1024))
      throw badRequest(`files[${i}].file must be a string (a name for diagnostics)`);
    return { file: (o.file as string | undefined) ?? `files[${i}]`, text: o.text };
  });
}

/** `sourceRevision` (and `sourceUrl`): the GitOps revision the files come from, for the version record. */
export function sourceOfBody(body: Record<string, unknown>): VersionSource | undefined {
  const revision = optionalString(body, 'sourceRevision', 256);
  const url = optionalString(body, 'sourceUrl', 2048);
  if (revision === undefined) {
    if (url !== undefined) throw badRequest('sourceUrl needs sourceRevision');
    return undefined;
  }
  return { revision, ...(url !== undefined ? { url } : {}) };
}

export function compileRoutes(app: ApiApp, deps: ApiDeps, history: HistoryOps, write: Guard): void {
  const { store } = deps;
  app.post('/api/v1/channels/:ch/compile', write, async (c) => {
    const channel = channelParam(c);
    const reserved = reservedChannelProblem(channel);
    if (reserved) throw badRequest(reserved);
    const body = await jsonBody(c);
    const files = filesOf(body.files);
    const strict = booleanField(body, 'strict');
    const dryRun = booleanField(body, 'dryRun');
    const reason = optionalString(body, 'reason');
    const allowShrink = booleanField(body, 'allowShrink');
    const source = sourceOfBody(body);

    // Parse and compile run through the injected runner (off the event loop in `serve`).
    const result = await deps.offload.compile(files);
    if (!result.parsed) throw new InvalidInputsError('no document in the request parsed', result.diagnostics);
    const counts = countBySeverity(result.diagnostics);
    if (strict && counts.error > 0)
      throw new InvalidInputsError(`strict: ${counts.error} error diagnostic(s); nothing stored`, result.diagnostics);

    const snap = result.snapshot;
    const line = {
      channel,
      digest: snap.digest,
      counts: snap.counts,
      diagnosticCounts: counts,
      diagnostics: result.diagnostics,
    };
    if (dryRun) return c.json({ ...line, status: 'dry-run' });
    const { objects, stored } = result;
    const outcome = await history.publish(
      store,
      channel,
      { snapshot: snap, diagnostics: result.diagnostics, objects, stored },
      {
        actor: c.get('actor'),
        at: deps.clock(),
        ...(reason !== undefined ? { reason } : {}),
      },
      { allowShrink, packCache: deps.packCache, ...(source ? { source } : {}) },
    );
    return c.json({ ...line, ...outcome, inputs: stored.digest }, outcome.status === 'unchanged' ? 200 : 201);
  });
}
