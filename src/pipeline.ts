/**
 * The whole pure pipeline in one call: input texts → documents → InputSet → compile → snapshot.
 * The CLI, the Worker, the Lambda and the watcher all go through here, so they produce the same
 * digest for the same inputs.
 */
import { compile } from './compile/index.js';
import { sortDiagnostics, type Diagnostic } from './inputs/diagnostics.js';
import { buildInputSet, parseDocuments, type RawDocument } from './inputs/index.js';
import { inputsDigest } from './model/canonical-inputs.js';
import type { InputSet } from './model/inputs.js';
import { buildSnapshot, type BuiltSnapshot } from './snapshot/build.js';
import type { Hasher } from './snapshot/digest.js';
import type { ResourceEncoder } from './snapshot/encoder.js';
import { COMPILER } from './version.js';

export interface InputText {
  readonly file: string;
  readonly text: string;
}

export interface PipelineOptions {
  readonly hasher?: Hasher;
  readonly encoder?: ResourceEncoder;
}

export interface PipelineResult {
  readonly inputs: InputSet;
  readonly snapshot: BuiltSnapshot;
  /** Parse, validation and compile diagnostics, in canonical order. */
  readonly diagnostics: readonly Diagnostic[];
}

export function parseInputTexts(files: readonly InputText[]): InputSet {
  const docs: RawDocument[] = [];
  const parseDiagnostics: Diagnostic[] = [];
  for (const f of files) {
    const parsed = parseDocuments(f.text, f.file);
    docs.push(...parsed.docs);
    parseDiagnostics.push(...parsed.diagnostics);
  }
  const inputs = buildInputSet(docs);
  return { ...inputs, diagnostics: [...parseDiagnostics, ...inputs.diagnostics] };
}

export function compileInputSet(inputs: InputSet, opts: PipelineOptions = {}): PipelineResult {
  const { output, diagnostics } = compile(inputs);
  const snapshot = buildSnapshot(output, { inputsDigest: inputsDigest(inputs, opts.hasher), compiler: COMPILER }, opts);
  return { inputs, snapshot, diagnostics: sortDiagnostics(diagnostics) };
}

export function compileTexts(files: readonly InputText[], opts: PipelineOptions = {}): PipelineResult {
  return compileInputSet(parseInputTexts(files), opts);
}
