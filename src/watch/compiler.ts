/**
 * How the watcher turns its inputs into a snapshot: in process (full, or incremental when only
 * endpoints changed) or remotely (`--compile-url`, remote-compile.ts). Every strategy must give
 * the snapshot a full local compile of the same objects gives.
 */
import type { Diagnostic } from '../model/diagnostics.js';
import { buildInputSet, type ReadDocument } from '../inputs/load.js';
import { buildStoredInputs } from '../snapshot/stored-inputs/index.js';
import { compileInputSet } from '../pipeline.js';
import type { BuiltSnapshot, ObjectSpool } from '../snapshot/build.js';
import type { Hasher } from '../snapshot/digest.js';
import { ResourceEncoder } from '../snapshot/encoder.js';
import type { CachedObject } from './object-cache.js';

export interface CompileRequest {
  /** Every object to compile (last-known-good versions already substituted), sorted by key. The watcher computes it on first read. */
  readonly objects: readonly CachedObject[];
  /** Keys (`Kind/ns/name`) changed since the previous compile. */
  readonly changed: ReadonlySet<string>;
  /** One object to compile by key (what `objects` holds under it), without materializing `objects`. */
  readonly get?: (key: string) => CachedObject | undefined;
  /**
   * The digest of the stored inputs of `objects` (src/snapshot/stored-inputs/), which the watcher
   * keeps up to date per change: the snapshot's inputs digest. Computed from `objects` when absent.
   */
  readonly inputsDigest?: string;
  /**
   * Where a compile that lists every object (a first or full build) may put the objects' bytes
   * instead of memory (object-spool.ts); the caller keeps it open until the snapshot is stored.
   */
  readonly spool?: ObjectSpool;
}

export interface CompileResult {
  readonly snapshot: BuiltSnapshot;
  readonly diagnostics: readonly Diagnostic[];
  readonly mode: 'full' | 'incremental' | 'remote';
}

export interface SnapshotCompiler {
  compile(req: CompileRequest): Promise<CompileResult>;
  /**
   * The last snapshot returned may not have reached the store: the next one must carry every
   * object and document, not a delta of it (incremental compilers; others always do).
   */
  invalidate?(): void;
}

/** The inputs digest of a request: the watcher's, or computed from its objects. */
export const requestInputsDigest = (req: CompileRequest, hasher?: Hasher): string =>
  req.inputsDigest ?? buildStoredInputs(req.objects, hasher).digest;

/**
 * The objects as documents whose `object` is read from the cached object when the inputs layer
 * reads it (a cache entry parses its bytes then): a full compile's 50k parsed objects are not all
 * alive at once, each one is garbage as soon as it is validated.
 */
export const documentsOf = (objects: readonly CachedObject[]): ReadDocument[] =>
  objects.map((o) => ({
    file: `${o.key.kind}/${o.key.namespace}/${o.key.name}`,
    index: 0,
    read: o.read,
    get object() {
      return o.object;
    },
  }));

/**
 * Full compile in process. The ResourceEncoder lives as long as the watcher, so messages that did
 * not change are not encoded again (its cache is keyed by message identity and content).
 */
export class LocalCompiler implements SnapshotCompiler {
  private readonly encoder: ResourceEncoder;

  constructor(private readonly hasher?: Hasher) {
    this.encoder = new ResourceEncoder(hasher);
  }

  async compile(req: CompileRequest): Promise<CompileResult> {
    const inputs = buildInputSet(documentsOf(req.objects));
    const result = compileInputSet(inputs, requestInputsDigest(req, this.hasher), {
      encoder: this.encoder,
      ...(this.hasher ? { hasher: this.hasher } : {}),
    });
    return { snapshot: result.snapshot, diagnostics: result.diagnostics, mode: 'full' };
  }
}
