/**
 * Where the API's heavy work runs: the pure compile of POST /compile and the diff of GET /diff.
 * The default runs them inline (the Worker and the Lambda have nothing else on their event loop);
 * `meshsnap serve` injects a worker-thread runner (worker-runner.ts) so the relay in the same
 * process keeps answering during a large compile. Inputs and outputs are plain data (structured
 * clone), so both runners give the same answers.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import { compileDocuments, parseTexts, type InputText, type PipelineOptions } from '../pipeline.js';
import type { BuiltSnapshot } from '../snapshot/build.js';
import type { VersionRecord } from '../snapshot/manifest.js';
import { storedDocument, type BuiltInputs, type StoredObject } from '../snapshot/stored-inputs/index.js';
import type { SnapshotStore } from '../snapshot/store/store.js';
import type { XdsType } from '../xds/type-urls.js';
import { boundDiff, type BoundedDiff, type DiffBound } from './diff-bound.js';
import type { HistoryOps } from './history-port.js';

export type CompileJobResult =
  /** Nothing in the request parsed: the parse diagnostics say why. */
  | { readonly parsed: false; readonly diagnostics: readonly Diagnostic[] }
  | {
      readonly parsed: true;
      readonly snapshot: BuiltSnapshot;
      readonly diagnostics: readonly Diagnostic[];
      readonly objects: readonly StoredObject[];
      readonly stored: BuiltInputs;
    };

export interface DiffJob {
  readonly from: VersionRecord;
  readonly to: VersionRecord;
  readonly node?: { readonly id: string; readonly metadata: Record<string, unknown> };
  readonly types?: readonly XdsType[];
  readonly bound: DiffBound;
}

export interface OffloadRunner {
  compile(files: readonly InputText[]): Promise<CompileJobResult>;
  /** The diff of two versions of `store` (a worker runner reads the store it was opened on). */
  diff(store: SnapshotStore, job: DiffJob): Promise<BoundedDiff>;
}

/** Input texts → parsed documents → compiled snapshot and stored inputs (pure). */
export function compileJob(files: readonly InputText[], opts: PipelineOptions): CompileJobResult {
  const { documents, parseDiagnostics } = parseTexts(files);
  if (documents.length === 0) return { parsed: false, diagnostics: parseDiagnostics };
  const result = compileDocuments(documents, opts, parseDiagnostics);
  const objects = documents.flatMap((d) => storedDocument(d.object, opts.hasher) ?? []);
  // Plain data for the structured clone: a full build packs its stored objects in a class of its
  // own (packed-objects.ts), which a clone would turn into a bare object.
  const stored = { ...result.stored, objects: new Map(result.stored.objects) };
  return { parsed: true, snapshot: result.snapshot, diagnostics: result.diagnostics, objects, stored };
}

export const diffOptions = (job: DiffJob) => ({
  ...(job.node ? { node: job.node } : {}),
  ...(job.types ? { types: job.types } : {}),
});

/** Runs on the caller's event loop. */
export function inlineRunner(history: HistoryOps, compile: PipelineOptions): OffloadRunner {
  return {
    compile: (files) => Promise.resolve(compileJob(files, compile)),
    diff: async (store, job) => boundDiff(await history.diff(store, job.from, job.to, diffOptions(job)), job.bound),
  };
}
