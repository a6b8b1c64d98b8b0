/**
 * The full pure pipeline as src/pipeline.ts runs it, stage by stage (documents → InputSet and the
 * stored inputs tree from scratch, whose root is the inputs digest, from one validation pass →
 * compile → the one-shot snapshot build). Its own module, importing only what the
 * pipeline does: a process measuring the pipeline's peak RSS loads what `meshsnap compile` loads,
 * not the watcher and the Kubernetes client (bench/incremental.ts, ~80 MB RSS more).
 */
import { performance } from 'node:perf_hooks';
import { compileOwned } from '../src/compile/index.js';
import type { RawDocument } from '../src/inputs/parse.js';
import type { Diagnostic } from '../src/model/diagnostics.js';
import type { InputSet } from '../src/model/inputs.js';
import { buildSnapshotOnce, type BuiltSnapshot } from '../src/snapshot/build.js';
import type { Hasher } from '../src/snapshot/digest.js';
import { inputSetAndStoredInputs } from '../src/snapshot/stored-inputs/index.js';

export const BENCH_COMPILER = { name: 'meshsnap-bench', version: '0' } as const;

/**
 * The result of a full compile, stage by stage: what src/pipeline.ts has alive at its end (the
 * compile context dies inside `compile`; the compile output is taken apart by the one-shot build).
 */
export interface CompiledState {
  readonly inputs: InputSet;
  readonly diagnostics: readonly Diagnostic[];
  readonly snapshot: BuiltSnapshot;
}

export interface Stages {
  [stage: string]: number;
}

/** The full pipeline as src/pipeline.ts runs it (the snapshot built one-shot), stage by stage. */
export function compileState(docs: readonly RawDocument[], hasher: Hasher): { state: CompiledState; stages: Stages } {
  const t0 = performance.now();
  // One validation pass: the InputSet and the stored inputs (whose root is the inputs digest).
  const { inputs, stored } = inputSetAndStoredInputs(docs, hasher);
  const t1 = performance.now();
  const { output, diagnostics } = compileOwned(inputs);
  const t3 = performance.now();
  const snapshot = buildSnapshotOnce(output, { inputsDigest: stored.digest, compiler: BENCH_COMPILER }, { hasher });
  const t4 = performance.now();
  return {
    state: { inputs, diagnostics, snapshot },
    stages: { inputs: t1 - t0, compile: t3 - t1, snapshot: t4 - t3 },
  };
}
