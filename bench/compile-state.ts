/**
 * The full pure pipeline as `meshsnap compile --store DIR` runs it (src/pipeline.ts
 * compileTextsToPublish), stage by stage: documents → InputSet and the stored inputs tree from
 * scratch, whose root is the inputs digest, from one validation pass (the stored objects' bytes
 * spooled) → compile (the InputSet is let go after it) → the one-shot snapshot build, whose objects go to a spool file as the CLI's do
 * (src/snapshot/store/file-spool.ts; here in a temp folder removed at once), with the CLI's full
 * collections (src/full-gc.ts: after the validation, after the compile, in the build). Its own module,
 * importing only what the pipeline does: a process measuring the pipeline's peak RSS loads what
 * `meshsnap compile` loads, not the watcher and the Kubernetes client (bench/incremental.ts, ~80 MB RSS more).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { RawDocument } from '../src/inputs/parse.js';
import type { Diagnostic } from '../src/model/diagnostics.js';
import type { InputSet } from '../src/model/inputs.js';
import { fullGc } from '../src/full-gc.js';
import { compileHanded, Handoff, validatedDocuments } from '../src/pipeline.js';
import { buildSnapshotOnce, type BuiltSnapshot } from '../src/snapshot/build.js';
import type { Hasher } from '../src/snapshot/digest.js';
import { FileSpool } from '../src/snapshot/store/file-spool.js';

export const BENCH_COMPILER = { name: 'meshsnap-bench', version: '0' } as const;

/** A full compile's InputSet, diagnostics and snapshot (the watcher's path keeps all three: bench/incremental.ts). */
export interface CompiledState {
  readonly inputs: InputSet;
  readonly diagnostics: readonly Diagnostic[];
  readonly snapshot: BuiltSnapshot;
}

/**
 * What `meshsnap compile` has alive at its end, before publishing: the snapshot (its objects in
 * the spool) and the diagnostics; the InputSet was let go, the compile output taken apart by the build.
 */
export interface PublishableState {
  readonly diagnostics: readonly Diagnostic[];
  readonly snapshot: BuiltSnapshot;
  /** Closes the spool: the snapshot's objects cannot be read after. */
  close(): void;
}

export interface Stages {
  [stage: string]: number;
}

/**
 * The full pipeline as `meshsnap compile` runs it (the snapshot built one-shot into a spool), stage
 * by stage. The documents are handed over, as the CLI's parse hands its own on: when the caller
 * keeps no other reference, they die with the validation, as in `meshsnap compile`.
 */
export function compileState(
  docs: Handoff<readonly RawDocument[]>,
  hasher: Hasher,
): { state: PublishableState; stages: Stages } {
  const dir = mkdtempSync(join(tmpdir(), 'meshsnap-bench-spool-'));
  const spool = FileSpool.open(dir);
  const removeDir = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    removeDir(); // the spool file left its folder when opened (where an open file cannot be removed: on close)
  } catch {
    // removed on close
  }
  const collect = fullGc();
  const t0 = performance.now();
  // One validation pass: the InputSet and the stored inputs (whose root is the inputs digest; their
  // objects' bytes spooled, as the CLI's).
  const validated = validatedDocuments(new Handoff({ documents: docs.take(), parseDiagnostics: [] }), {
    hasher,
    spool,
  });
  const { digest: inputsDigest } = validated.stored;
  collect();
  const t1 = performance.now();
  // As the CLI: the InputSet is not kept through the build (no frame here holds it).
  const { output, diagnostics } = compileHanded(validated.inputs, collect);
  collect();
  const t3 = performance.now();
  const snapshot = buildSnapshotOnce(output, { inputsDigest, compiler: BENCH_COMPILER }, { hasher, spool, collect });
  const t4 = performance.now();
  const close = (): void => {
    spool.close();
    removeDir();
  };
  return {
    state: { diagnostics, snapshot, close },
    stages: { inputs: t1 - t0, compile: t3 - t1, snapshot: t4 - t3 },
  };
}
