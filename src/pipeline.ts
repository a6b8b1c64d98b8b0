/**
 * The whole pure pipeline in one call: input texts → documents → stored inputs + InputSet →
 * compile → snapshot. The CLI, the Worker, the Lambda and the watcher all go through here (the
 * watcher's incremental path keeps the same pieces alive between changes), so they produce the
 * same digest for the same inputs.
 *
 * The snapshot's `inputsDigest` is the root of the stored inputs tree of the documents
 * (src/snapshot/stored-inputs/): the same objects in any file layout or order give the same one.
 */
import { compileOwned } from './compile/index.js';
import { releaseInternTables } from './compile/intern.js';
import { buildInputSet, parseDocuments, type RawDocument } from './inputs/index.js';
import { sortDiagnostics, type Diagnostic } from './model/diagnostics.js';
import type { InputSet } from './model/inputs.js';
import { inputSetAndStoredInputs, type BuiltInputs } from './snapshot/stored-inputs/index.js';

import { buildSnapshot, buildSnapshotOnce, type BuiltSnapshot, type ObjectSpool } from './snapshot/build.js';
import type { OwnedCompileOutput } from './compile/types.js';
import type { Hasher } from './snapshot/digest.js';
import type { ResourceEncoder } from './snapshot/encoder.js';
import { INPUT_LIMITS, mib, TOO_LARGE } from './inputs/limits.js';
import { COMPILER } from './version.js';

export interface InputText {
  readonly file: string;
  readonly text: string;
}

export interface PipelineOptions {
  readonly hasher?: Hasher;
  readonly encoder?: ResourceEncoder;
  /**
   * Where the one-shot build puts the objects' bytes (object-spool.ts; not with `encoder`), and
   * compileTextsToPublish the stored inputs' bytes. Default: in memory.
   */
  readonly spool?: ObjectSpool;
  /**
   * A full garbage collection (src/full-gc.ts), for a process that exits when done and whose peak
   * memory matters (`meshsnap compile`): compileTextsToPublish runs it once the inputs are
   * validated (the texts and documents just died) and after the compile (the compiler's state and
   * the InputSet), the one-shot build after its consistency check and twice in its groups
   * (one-shot.ts). Not with `encoder`. Default: none, V8 decides alone.
   */
  readonly collect?: () => void;
}

export interface CompiledInputs {
  readonly inputs: InputSet;
  readonly snapshot: BuiltSnapshot;
  /** Parse, validation and compile diagnostics, in canonical order. */
  readonly diagnostics: readonly Diagnostic[];
}

export interface PipelineResult extends CompiledInputs {
  /** The stored inputs (every object and document); `snapshot.inputsDigest` is their digest. */
  readonly stored: BuiltInputs;
}

export interface ParsedTexts {
  readonly documents: RawDocument[];
  readonly parseDiagnostics: Diagnostic[];
}

/** Texts → documents; inputs beyond the bounds of src/inputs/limits.ts give no documents and one `too-large` error. */
export function parseTexts(files: readonly InputText[]): ParsedTexts {
  const documents: RawDocument[] = [];
  const parseDiagnostics: Diagnostic[] = [];
  const totalBytes = files.reduce((n, f) => n + f.text.length, 0);
  if (totalBytes > INPUT_LIMITS.maxInputBytes) {
    const message = `inputs total ${mib(totalBytes)}, more than the ${mib(INPUT_LIMITS.maxInputBytes)} one compile accepts; refused`;
    return { documents, parseDiagnostics: [{ severity: 'error', code: TOO_LARGE, message }] };
  }
  for (const f of files) {
    const parsed = parseDocuments(f.text, f.file);
    if (documents.length + parsed.docs.length > INPUT_LIMITS.maxDocuments) {
      const message = `more than ${INPUT_LIMITS.maxDocuments} documents in one compile (reached in this file); refused`;
      return { documents: [], parseDiagnostics: [{ severity: 'error', code: TOO_LARGE, message, file: f.file }] };
    }
    // One by one: a spread of a huge file's documents would overflow the call stack.
    for (const d of parsed.docs) documents.push(d);
    for (const d of parsed.diagnostics) parseDiagnostics.push(d);
  }
  return { documents, parseDiagnostics };
}

/** The InputSet of input texts, parse diagnostics included. */
export function parseInputTexts(files: readonly InputText[]): InputSet {
  const { documents, parseDiagnostics } = parseTexts(files);
  const inputs = buildInputSet(documents);
  return { ...inputs, diagnostics: [...parseDiagnostics, ...inputs.diagnostics] };
}

/**
 * Compiles an InputSet whose stored inputs have the digest `inputsDigest`. The snapshot is built
 * one-shot (the output's messages are let go group by group) unless an encoder is given to be
 * reused across compiles: then the builder's path, which fills its cache.
 */
export function compileInputSet(inputs: InputSet, inputsDigest: string, opts: PipelineOptions = {}): CompiledInputs {
  const { output, diagnostics } = compileOwned(inputs);
  return { inputs, snapshot: snapshotOf(output, inputsDigest, opts), diagnostics: sortDiagnostics(diagnostics) };
}

function snapshotOf(output: OwnedCompileOutput, inputsDigest: string, opts: PipelineOptions): BuiltSnapshot {
  const info = { inputsDigest, compiler: COMPILER };
  return opts.encoder ? buildSnapshot(output, info, opts) : buildSnapshotOnce(output, info, opts);
}

/** Compiles raw documents; `parseDiagnostics` are those of the texts they were parsed from. */
export function compileDocuments(
  documents: readonly RawDocument[],
  opts: PipelineOptions = {},
  parseDiagnostics: readonly Diagnostic[] = [],
): PipelineResult {
  const { inputs, stored } = inputSetAndStoredInputs(documents, opts.hasher);
  return { ...compileInputSet(withParseDiagnostics(inputs, parseDiagnostics), stored.digest, opts), stored };
}

/** The InputSet with the diagnostics of the texts its documents were parsed from first. */
function withParseDiagnostics(inputs: InputSet, parseDiagnostics: readonly Diagnostic[]): InputSet {
  return parseDiagnostics.length > 0
    ? { ...inputs, diagnostics: [...parseDiagnostics, ...inputs.diagnostics] }
    : inputs;
}

export function compileTexts(files: readonly InputText[], opts: PipelineOptions = {}): PipelineResult {
  const { documents, parseDiagnostics } = parseTexts(files);
  return compileDocuments(documents, opts, parseDiagnostics);
}

/** What a publish needs of a compile (history's `Compiled`): no InputSet. */
export type PublishableResult = Omit<PipelineResult, 'inputs'>;

/**
 * A value handed over once: the receiver takes it out, and from then on only the receiver's own
 * frames hold it. An interpreted frame keeps every value it has loaded until it returns (even
 * after `x = undefined`: the argument registers stay), so a caller that passed the value on
 * directly would keep it alive through the whole call.
 */
export class Handoff<T> {
  private value: T | undefined;

  constructor(value: T) {
    this.value = value;
  }

  /** The value; a second take throws. */
  take(): T {
    const { value } = this;
    if (value === undefined) throw new Error('Handoff: the value was already taken');
    this.value = undefined;
    return value;
  }
}

/**
 * compileTexts for a caller that only publishes the result (`meshsnap compile`): the texts, the
 * documents and the InputSet are let go stage by stage, before the snapshot build, where the
 * pipeline's memory peaks. Each stage runs in a function of its own that returns only what the
 * next needs, so no frame below keeps an earlier stage's data. Same snapshot and diagnostics as
 * compileTexts; pass the texts as a Handoff so the caller's frame does not keep them either.
 */
export function compileTextsToPublish(
  files: Handoff<readonly InputText[]> | readonly InputText[],
  opts: PipelineOptions = {},
): PublishableResult {
  const validated = validatedDocuments(parsedTexts(files instanceof Handoff ? files : new Handoff(files)), opts);
  const { stored } = validated;
  opts.collect?.();
  const { output, diagnostics } = compileHanded(validated.inputs, opts.collect);
  opts.collect?.();
  return { snapshot: snapshotOf(output, stored.digest, opts), diagnostics: sortDiagnostics(diagnostics), stored };
}

/** Parses handed texts: once this returns, nothing of the pipeline's holds the texts. */
function parsedTexts(files: Handoff<readonly InputText[]>): Handoff<ParsedTexts> {
  return new Handoff(parseTexts(files.take()));
}

/**
 * Documents → the InputSet (parse diagnostics included, handed on) and the stored inputs, whose
 * objects' bytes go to the spool when there is one (~29 MB at 10k services, kept until published).
 */
export function validatedDocuments(
  parsed: Handoff<{ readonly documents: readonly RawDocument[]; readonly parseDiagnostics: readonly Diagnostic[] }>,
  opts: PipelineOptions,
): { inputs: Handoff<InputSet>; stored: BuiltInputs } {
  const { documents, parseDiagnostics } = parsed.take();
  const { inputs, stored } = inputSetAndStoredInputs(documents, opts.hasher, opts.spool);
  return { inputs: new Handoff(withParseDiagnostics(inputs, parseDiagnostics)), stored };
}

/**
 * Compiles a handed InputSet: once this returns, nothing of the pipeline's holds the InputSet, nor
 * the compiler's intern tables (releaseInternTables: the build that follows is the last use).
 */
export function compileHanded(inputs: Handoff<InputSet>, collect?: () => void): ReturnType<typeof compileOwned> {
  const compiled = compileOwned(inputs, collect ? { collect } : {});
  releaseInternTables();
  return compiled;
}
