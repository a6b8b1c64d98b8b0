/**
 * The two paths the benchmark times:
 *
 * - `compileState`: the full pure pipeline, stage by stage (documents → InputSet and the stored
 *   inputs tree from scratch, whose root is the inputs digest, from one validation pass → compile →
 *   snapshot build), as src/pipeline.ts runs it;
 * - `WatchPath`: the watcher's own code (src/watch/watcher.ts, `IncrementalLocalCompiler`) fed
 *   without an API server, publishing to a LocalStore. Its first round is the watcher's full
 *   compile; after it, `endpointChange` times "one endpoint change reaches the store" exactly as
 *   the watcher does it: the changed EndpointSlice object → object cache (canonical form, digest)
 *   → last-known-good review → stored inputs tree update → InputSet patch (`withReplaced`) →
 *   `IncrementalCompiler.update` → `SnapshotBuilder.applyDelta` → publish (inputs objects and
 *   documents, snapshot objects and documents, version record, head) in the LocalStore.
 *
 * Only the debounce wait is left out (the watcher's quiet period is a choice, not work).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { KubeConfig } from '@kubernetes/client-node';
import { compile } from '../src/compile/index.js';
import type { CompileOutput } from '../src/compile/types.js';
import type { RawDocument } from '../src/inputs/parse.js';
import { inputSetAndStoredInputs } from '../src/snapshot/stored-inputs/index.js';
import { SnapshotBuilder } from '../src/snapshot/build.js';
import type { Hasher } from '../src/snapshot/digest.js';
import { ResourceEncoder } from '../src/snapshot/encoder.js';
import { LocalStore } from '../src/snapshot/store/local.js';
import { fullGc } from '../src/full-gc.js';
import { ManualClock } from '../src/watch/clock.js';
import { Watcher, type RoundResult } from '../src/watch/watcher.js';
import { BENCH_COMPILER, type CompiledState } from './compile-state.js';

export { BENCH_COMPILER, compileState, type CompiledState, type Stages } from './compile-state.js';

/** A full compile built by a SnapshotBuilder, kept with its builder, encoder and output (for deltas). */
export interface BuilderState extends CompiledState {
  readonly output: CompileOutput;
  readonly encoder: ResourceEncoder;
  readonly builder: SnapshotBuilder;
}

/** The same compile with a SnapshotBuilder whose state is kept, for what applies deltas after it. */
export function builderState(docs: readonly RawDocument[], hasher: Hasher): BuilderState {
  const { inputs, stored } = inputSetAndStoredInputs(docs, hasher);
  const { output, diagnostics } = compile(inputs);
  const encoder = new ResourceEncoder(hasher);
  const builder = new SnapshotBuilder({ inputsDigest: stored.digest, compiler: BENCH_COMPILER }, { encoder });
  const snapshot = builder.build(output);
  return { inputs, diagnostics, output, encoder, builder, snapshot };
}

const kindOf = (d: RawDocument): string => String(d.object['kind']);

/**
 * Resolves on a fresh stack: a round run synchronously from `initial(docs)` would keep the caller's
 * frames, and so the whole list (~60 MB of heap at 10k, traced by every full collection of the
 * round), alive, where a real watcher's round runs from its debounce timer and its informers keep
 * of each object only its name and resourceVersion (src/watch/informers.ts keepIdentityOnly).
 */
const afterTheCaller = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** The watcher, fed by hand, publishing to a LocalStore in a temp dir. */
export class WatchPath {
  readonly dir: string;
  store: LocalStore;
  watcher: Watcher;

  constructor(
    private readonly hasher: Hasher,
    readonly channel = 'bench',
    dir?: string,
  ) {
    this.dir = dir ?? mkdtempSync(join(tmpdir(), 'meshsnap-bench-watch-'));
    this.store = new LocalStore(join(this.dir, '.meshsnap'));
    this.watcher = this.newWatcher();
  }

  /** A watcher over the folder another WatchPath published to (a restarted watcher process). */
  static over(dir: string, hasher: Hasher, channel = 'bench'): WatchPath {
    return new WatchPath(hasher, channel, dir);
  }

  private newWatcher(): Watcher {
    // A clock that never moves: no debounced round ever fires; rounds run by `compileNow`.
    return new Watcher({
      kubeConfig: new KubeConfig(),
      store: this.store,
      channel: this.channel,
      clock: new ManualClock(),
      timerClock: new ManualClock(),
      hasher: this.hasher,
      collect: fullGc(),
    });
  }

  /**
   * A restart: a new watcher (and store handle) over the same folder, fed `docs` (the state the
   * head was published from) as its informers' initial list, then its first round. `readyMs`: until
   * every object was received (the watcher's /readyz turns ready when its informers synced).
   */
  restart(docs: readonly RawDocument[]): Promise<{ readyMs: number; ms: number; round: RoundResult }> {
    const t0 = performance.now();
    this.store = new LocalStore(this.store.root);
    this.watcher = this.newWatcher();
    this.receiveAll(docs);
    const readyMs = performance.now() - t0;
    return this.roundSince(t0).then(({ ms, round }) => ({ readyMs, ms, round }));
  }

  /** Every document as an informer's initial list, then the watcher's first (full) round. */
  initial(docs: readonly RawDocument[]): Promise<{ ms: number; round: RoundResult }> {
    const t0 = performance.now();
    this.receiveAll(docs);
    return this.roundSince(t0);
  }

  /** The round, on a fresh stack that does not hold the list received (see afterTheCaller). */
  private async roundSince(t0: number): Promise<{ ms: number; round: RoundResult }> {
    await afterTheCaller();
    const round = await this.watcher.compileNow();
    return { ms: performance.now() - t0, round };
  }

  /** Every document as an informer delivers it. */
  private receiveAll(docs: readonly RawDocument[]): void {
    for (const d of docs) this.watcher.receive(d.object, kindOf(d));
  }

  /** One changed object, from its arrival to the head written; `recordBytes`: the JSON size of the version record it wrote (read back afterwards, untimed). */
  async change(doc: RawDocument): Promise<{ ms: number; receiveMs: number; round: RoundResult; recordBytes: number }> {
    const t0 = performance.now();
    this.watcher.receive(doc.object, kindOf(doc));
    const t1 = performance.now();
    const round = await this.watcher.compileNow();
    const ms = performance.now() - t0;
    const record = await this.store.getVersion(this.channel, round.version);
    return { ms, receiveMs: t1 - t0, round, recordBytes: record ? JSON.stringify(record).length : 0 };
  }

  close(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
