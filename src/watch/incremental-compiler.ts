/**
 * In-process compile for the watcher, incremental where it can be.
 *
 * The InputSet is kept between rounds (map-backed, src/compile/incremental/inputs-patch.ts) and
 * edited per changed object: each changed object is validated alone — the inputs layer validates
 * objects independently, and watcher objects have unique keys, so this is what validating them
 * all would say — and replaced or deleted. `IncrementalCompiler.update` then recompiles only what
 * reads the changed endpoints when nothing else changed, else compiles in full. Either way the
 * snapshot equals a full compile of the same objects (test/watch/watcher-incremental.test.ts).
 */
import { IncrementalCompiler, applyCompileDelta, indexedInputs, withDeleted, withInputDiagnostics, withReplaced, type ChangedObject, type InputKind, type InputObjects } from '../compile/incremental.js';
import { isInputKind } from '../compile/incremental/inputs-patch.js';
import type { CompileOutput } from '../compile/types.js';
import { sortDiagnostics, type Diagnostic } from '../inputs/diagnostics.js';
import { buildInputSet } from '../inputs/load.js';
import { inputsDigest } from '../model/canonical-inputs.js';
import type { InputSet } from '../model/inputs.js';
import { parseKeyString } from '../model/stored-inputs.js';
import { SnapshotBuilder } from '../snapshot/build.js';
import type { Hasher } from '../snapshot/digest.js';
import { COMPILER } from '../version.js';
import { documentsOf, type CompileRequest, type CompileResult, type SnapshotCompiler } from './compiler.js';
import type { CachedObject } from './object-cache.js';

const LISTS: Readonly<Record<InputKind, keyof InputSet>> = {
  Service: 'services',
  EndpointSlice: 'endpointSlices',
  Endpoints: 'endpoints',
  Pod: 'pods',
  Namespace: 'namespaces',
  Node: 'nodes',
  VirtualService: 'virtualServices',
  DestinationRule: 'destinationRules',
};

const MESH_KINDS = new Set(['ConfigMap', 'MeshConfig']);

export class IncrementalLocalCompiler implements SnapshotCompiler {
  private readonly compiler = new IncrementalCompiler();
  /** Full builds each round, reusing encoded messages and hashed documents of the previous one. */
  private readonly builder: SnapshotBuilder;
  private inputs: InputSet | undefined;
  private output: CompileOutput | undefined;
  /** Validation diagnostics per object key, so the InputSet's diagnostics can be rebuilt after an edit. */
  private readonly diagnosticsByKey = new Map<string, readonly Diagnostic[]>();

  constructor(private readonly hasher?: Hasher) {
    this.builder = new SnapshotBuilder({ inputsDigest: '', compiler: COMPILER }, hasher ? { hasher } : {});
  }

  async compile(req: CompileRequest): Promise<CompileResult> {
    const edited = this.inputs && this.output ? this.edit(this.inputs, req) : undefined;
    if (!edited) return this.full(req.objects);
    const result = this.compiler.update(edited.inputs, edited.changed);
    const output = result.kind === 'delta' ? applyCompileDelta(this.output as CompileOutput, result.delta) : result.output;
    this.inputs = edited.inputs;
    this.output = output;
    const snapshot = this.builder.build(output, { inputsDigest: inputsDigest(edited.inputs, this.hasher) });
    return { snapshot, diagnostics: result.diagnostics, mode: result.kind === 'delta' ? 'incremental' : 'full' };
  }

  private full(objects: readonly CachedObject[]): CompileResult {
    const docs = documentsOf(objects);
    this.diagnosticsByKey.clear();
    for (const d of docs) {
      const own = buildInputSet([d]).diagnostics;
      if (own.length > 0) this.diagnosticsByKey.set(d.file, own);
    }
    const inputs = indexedInputs(buildInputSet(docs));
    const { output, diagnostics } = this.compiler.compileFull(inputs);
    this.inputs = inputs;
    this.output = output;
    const snapshot = this.builder.build(output, { inputsDigest: inputsDigest(inputs, this.hasher) });
    return { snapshot, diagnostics, mode: 'full' };
  }

  /** The kept InputSet with the round's changes applied, or undefined when a full compile is simpler (mesh config). */
  private edit(base: InputSet, req: CompileRequest): { inputs: InputSet; changed: ChangedObject[] } | undefined {
    const byKey = new Map<string, CachedObject | undefined>();
    for (const key of req.changed) byKey.set(key, undefined);
    for (const o of req.objects) {
      const k = `${o.key.kind}/${o.key.namespace}/${o.key.name}`;
      if (byKey.has(k)) byKey.set(k, o);
    }
    let next = base;
    const changed: ChangedObject[] = [];
    for (const [key, object] of byKey) {
      const id = parseKeyString(key);
      if (!id) return undefined;
      if (MESH_KINDS.has(id.kind)) return undefined;
      const validated = object ? buildInputSet(documentsOf([object])) : undefined;
      if (validated && validated.diagnostics.length > 0) this.diagnosticsByKey.set(key, validated.diagnostics);
      else this.diagnosticsByKey.delete(key);
      if (!isInputKind(id.kind)) continue; // a kind the compiler ignores: only its info diagnostic changes
      const kind = id.kind;
      const value = validated ? ((validated[LISTS[kind]] as readonly InputObjects[InputKind][])[0] as InputObjects[typeof kind] | undefined) : undefined;
      next = value ? withReplaced(next, kind, value) : withDeleted(next, kind, id.namespace, id.name);
      changed.push({ kind, namespace: id.namespace, name: id.name });
    }
    const diagnostics = sortDiagnostics([...this.diagnosticsByKey.values()].flat());
    next = withInputDiagnostics(next, diagnostics);
    return { inputs: next, changed };
  }
}
