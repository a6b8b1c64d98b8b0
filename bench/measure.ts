/**
 * One benchmark size, measured inside its own process (run.ts starts one per size, so the peak
 * RSS belongs to that size alone). Prints one JSON line: a `SizeResult`.
 *
 * Node-side code: it may use node:* freely; what it times is the pure core.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { compileOwned } from '../src/compile/index.js';
import { buildInputSet, parseDocuments, type RawDocument } from '../src/inputs/index.js';
import { compileDocuments, Handoff } from '../src/pipeline.js';
import { buildSnapshotOnce } from '../src/snapshot/build.js';
import type { Hasher } from '../src/snapshot/digest.js';
import { nodeSha256Hex } from '../src/snapshot/store/local.js';
import { BENCH_COMPILER, compileState, type PublishableState, type Stages } from './compile-state.js';
import { inputSetAndStoredInputs } from '../src/snapshot/stored-inputs/index.js';
import { generateMesh, nthAddress, toYaml, withMovedEndpoint } from './synthetic.js';

export interface SizeResult {
  services: number;
  namespaces: number;
  pods: number;
  virtualServices: number;
  destinationRules: number;
  documents: number;
  /** Milliseconds, first (cold) run of the whole pipeline: documents → InputSet → compile → stored inputs tree (the inputs digest) → snapshot. */
  fullMs: number;
  /** The same pipeline again in the same process (JIT warm). */
  fullWarmMs: number;
  stagesMs: Stages;
  /** The one-shot snapshot build alone with the pure-JS noble SHA-256 (what workerd uses). */
  snapshotNobleMs: number;
  /** The watcher (src/watch/watcher.ts) fed the mesh without an API server, publishing to a LocalStore in a temp dir. */
  watcher: {
    /** Its first round: a full compile (IncrementalLocalCompiler, the watcher's compile time). */
    fullCompileMs: number;
    /** Median compile time of the endpoint changes below (incremental: InputSet patch, update, applyDelta). */
    incrementalCompileMs: number;
    /** Every object received, then the first round: cache, inputs tree, full compile, first publish. */
    firstRoundMs: number;
    firstRoundBytes: number;
    /**
     * A restart over the store that holds this state (a new watcher process, the same folder):
     * until every object was received (ready), and until its first round ended; what that round
     * published ('unchanged' expected) and wrote (0 expected); the restarted process's peak RSS.
     */
    restart: { readyMs: number; roundMs: number; publish: string; bytesWritten: number; peakRssMB: number };
  };
  endpointChange: {
    /**
     * Median over several changes, from the changed EndpointSlice object handed to the watcher to
     * the new head written in the LocalStore: object cache, last-known-good review, stored inputs
     * tree update, InputSet patch, IncrementalCompiler.update, SnapshotBuilder.applyDelta, publish
     * (inputs objects + documents, snapshot objects + documents, version record, head).
     */
    ms: number;
    /** Every change's ms, in order. */
    allMs: number[];
    /** Median bytes (objects + documents, inputs and snapshot) a change adds to the store. */
    bytesWritten: number;
    /** Median JSON size of the version record a change writes (it carries every diagnostic: O(diagnostics)). */
    recordBytes: number;
    documentsWritten: number;
    /** 'incremental' when every change compiled incrementally. */
    mode: string;
    /** Of the median change: receive (cache), inputs (LKG + inputs tree), compile, publish. */
    stagesMs: Stages;
    /** The last published snapshot equals a full compile of the changed documents (src/pipeline.ts). */
    matchesFullRecompile: boolean;
    fullRecompileMs: number;
  };
  /**
   * Config changes in the same watcher, after the endpoint changes and the restart: each compiled
   * in full and published as a delta (src/compile/incremental/output-diff.ts), from the changed
   * object handed to the watcher to the new head; the first new Service also builds the delta
   * consistency index. Each kind's median and every change's ms, in order; the watcher's RSS after them.
   */
  configChange: {
    virtualServiceMs: number[];
    destinationRuleMs: number[];
    newServiceMs: number[];
    /** A replica more: a pod of a shape its namespace has, with a new name and IP (an endpoint change). */
    newPodMs: number[];
    modes: string;
    rssAfterMB: number;
  };
  /** Peak RSS of the cold full compile (read right after it; the mesh's documents included). */
  peakRssMB: number;
  /**
   * Peak RSS of a process running only the watcher (its own child process, fed the mesh as the
   * informers' lists, which it holds as they would): first round and endpoint changes.
   */
  peakRssWatchMB: number;
  resources: number;
  objects: number;
  /** Stored bytes: every object plus every document of the snapshot tree. */
  snapshotBytes: number;
  /** Bytes of the tree's documents (the old single document was ~4.5 MB at 1k services). */
  contentBytes: number;
  treeDocuments: number;
  /** The largest document. */
  maxDocumentBytes: number;
  diagnostics: number;
  yaml: { bytes: number; parseMs: number; inputSetMs: number };
}

// The hasher `meshsnap compile` and `meshsnap watch` use (node:crypto's one-shot hash).
const nodeSha256: Hasher = nodeSha256Hex;
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const sum = (s: Stages): number => Object.entries(s).reduce((t, [k, v]) => (k === 'encodes' ? t : t + v), 0);
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const CHANGES = 9;

type WatcherResult = Pick<SizeResult, 'watcher' | 'endpointChange' | 'configChange' | 'peakRssWatchMB'> & {
  /** The watcher process's CPU time (user + system) and RSS after its rounds (`--child-watcher` output only). */
  readonly cpuWatchMs: number;
  readonly rssAfterRoundsMB: number;
};
type RestartResult = SizeResult['watcher']['restart'];

/** Runs run.js with `args` in a fresh process (so its peak RSS is its own); its last stdout line is the JSON result. */
function spawnJson<T>(args: readonly string[]): T {
  const run = fileURLToPath(new URL('./run.js', import.meta.url));
  const r = spawnSync(process.execPath, [...process.execArgv, run, ...args], {
    encoding: 'utf8',
    maxBuffer: 16 << 20,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const line = r.stdout?.trim().split('\n').pop();
  if (r.status !== 0 || !line)
    throw new Error(`bench child ${args.join(' ')} failed: ${r.stderr?.trim().slice(-2000)}`);
  return JSON.parse(line) as T;
}

/** The mesh after the benchmark's endpoint changes (deterministic: a restart process rebuilds it). */
/** The documents the endpoint changes write, one per change, in order (each moves one address of another slice). */
function endpointChanges(services: number): RawDocument[] {
  let docs: RawDocument[] = generateMesh({ services }).docs;
  const changed: RawDocument[] = [];
  for (let i = 0; i < CHANGES; i++) {
    const moved = changedDocs(services, docs, i);
    const doc = moved.find((d, k) => d !== docs[k]);
    if (!doc) throw new Error('no changed document');
    changed.push(doc);
    docs = moved;
  }
  return changed;
}

function changedDocs(services: number, docs: readonly RawDocument[], i: number): RawDocument[] {
  const sliceIndex = Math.floor(((i + 1) * services) / (CHANGES + 1));
  return withMovedEndpoint(docs, sliceIndex, nthAddress([10, 250], i)).docs;
}

/** The numbers the table shows of a built snapshot (read while its state is alive; the state is not kept). */
function snapshotStats(state: PublishableState) {
  const counts = state.snapshot.counts;
  let bytes = 0;
  for (const b of state.snapshot.objects.values()) bytes += b.byteLength;
  let contentBytes = 0;
  let maxDocumentBytes = 0;
  for (const d of state.snapshot.documents) {
    contentBytes += d.bytes.byteLength;
    maxDocumentBytes = Math.max(maxDocumentBytes, d.bytes.byteLength);
  }
  const treeDocuments = state.snapshot.documents.length;
  return { counts, bytes, contentBytes, maxDocumentBytes, treeDocuments, diagnostics: state.diagnostics.length };
}

/** A warm run: its numbers and its inputs digest (the noble build's input is compiled again from the documents, untimed). */
function warmRun(docs: readonly RawDocument[]) {
  const { state, stages } = compileState(new Handoff(docs), nodeSha256);
  const stats = snapshotStats(state);
  state.close();
  return { stages, stats, inputsDigest: state.snapshot.inputsDigest };
}

/**
 * The full pipeline, cold then warm; only numbers come out, so its state can be collected. The
 * peak RSS is read right after the cold run: it is the pipeline's own, not that of the warm run and
 * the noble build after it, which are only timed. The cold run is handed documents nothing else
 * holds, generated for it: `meshsnap compile` lets its parsed documents go once they are validated,
 * so a mesh kept alive here would count ~55 MB (10k services) the CLI does not hold.
 */
function measureFull(services: number) {
  gc();
  const cold = compileState(new Handoff(generateMesh({ services }).docs), nodeSha256);
  const peakRssMB = process.resourceUsage().maxRSS / 1024;
  cold.state.close();
  const coldStages = cold.stages;
  gc();
  const mesh = generateMesh({ services });
  const warm = warmRun(mesh.docs);
  const { output } = compileOwned(inputSetAndStoredInputs(mesh.docs, nodeSha256).inputs);
  gc();
  const tn = performance.now();
  buildSnapshotOnce(output, { inputsDigest: warm.inputsDigest, compiler: BENCH_COMPILER });
  const snapshotNobleMs = performance.now() - tn;
  return { mesh, coldStages, warmStages: warm.stages, snapshotNobleMs, ...warm.stats, peakRssMB };
}

export async function measureSize(services: number, opts: { yaml?: boolean } = {}): Promise<SizeResult> {
  const {
    mesh,
    coldStages,
    warmStages,
    snapshotNobleMs,
    counts,
    bytes,
    contentBytes,
    maxDocumentBytes,
    treeDocuments,
    diagnostics,
    peakRssMB,
  } = measureFull(services);

  // The watcher in a process of its own (a watcher process does not run the pipeline above).
  const watch = spawnJson<WatcherResult>(['--child-watcher', String(services)]);
  // For information only, after the peak RSS was read: the same objects as YAML through the parser.
  let yaml = { bytes: 0, parseMs: NaN, inputSetMs: NaN };
  if (opts.yaml !== false) {
    const text = toYaml(mesh.docs);
    const ty0 = performance.now();
    const parsed = parseDocuments(text, 'synthetic.yaml');
    const ty1 = performance.now();
    buildInputSet(parsed.docs);
    yaml = { bytes: Buffer.byteLength(text), parseMs: ty1 - ty0, inputSetMs: performance.now() - ty1 };
  }

  return {
    services,
    namespaces: mesh.namespaces,
    pods: mesh.pods,
    virtualServices: mesh.virtualServices,
    destinationRules: mesh.destinationRules,
    documents: mesh.docs.length,
    fullMs: sum(coldStages),
    fullWarmMs: sum(warmStages),
    stagesMs: coldStages,
    snapshotNobleMs,
    watcher: watch.watcher,
    endpointChange: watch.endpointChange,
    configChange: watch.configChange,
    peakRssMB,
    peakRssWatchMB: watch.peakRssWatchMB,
    resources: counts.clusters + counts.endpoints + counts.listeners + counts.routes,
    objects: counts.objects,
    snapshotBytes: bytes + contentBytes,
    contentBytes,
    treeDocuments,
    maxDocumentBytes,
    diagnostics,
    yaml,
  };
}

/**
 * The watcher alone (its own process, `--child-watcher`): the mesh as an informer's list, the
 * first (full) round, then pods move one at a time: each change is a new version of one
 * service's EndpointSlice, handed to the watcher and compiled and published as the watcher does
 * it. Then a restart over its store, in another process (`--child-restart`).
 */
export async function measureWatcher(services: number): Promise<WatcherResult> {
  const changes = endpointChanges(services);
  gc();
  // Loaded here: the size process, which measures the pipeline's peak RSS, does not load the watcher.
  const { WatchPath } = await import('./incremental.js');
  const path = new WatchPath(nodeSha256);
  // The API server holds the objects, not the watcher's process: the bench lets its copy of the
  // mesh go once the first round has received it, as a real watcher's informers cut theirs.
  const first = await path.initial(generateMesh({ services }).docs);
  if (first.round.publish !== 'published') throw new Error('the first round did not publish');
  const runs: {
    ms: number;
    stages: Stages;
    bytes: number;
    recordBytes: number;
    documents: number;
    mode: string;
    compileMs: number;
  }[] = [];
  for (const changedDoc of changes) {
    const { ms, receiveMs, round, recordBytes } = await path.change(changedDoc);
    if (round.publish !== 'published') throw new Error('an endpoint change did not publish');
    runs.push({
      ms,
      stages: { receive: receiveMs, inputs: round.inputsMs, compile: round.compileMs, publish: round.publishMs },
      bytes: round.bytesWritten,
      recordBytes,
      documents: round.documentsWritten,
      mode: round.mode,
      compileMs: round.compileMs,
    });
  }
  const peakRssWatchMB = process.resourceUsage().maxRSS / 1024;
  const cpu = process.cpuUsage();
  const rssAfterRoundsMB = process.memoryUsage().rss / 2 ** 20;
  const head = await path.store.readChannel('bench');
  const restart = spawnJson<RestartResult>(['--child-restart', String(services), path.dir]);
  const docs = changedMesh(services);
  const configChange = await measureConfigChanges(path, docs);
  path.close();
  const mid = [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)];
  const modes = [...new Set(runs.map((r) => r.mode))].join('+');
  gc();
  const tf = performance.now();
  const full = compileDocuments(docs, { hasher: nodeSha256 });
  const fullRecompileMs = performance.now() - tf;
  return {
    watcher: {
      fullCompileMs: first.round.compileMs,
      incrementalCompileMs: median(runs.map((r) => r.compileMs)),
      firstRoundMs: first.ms,
      firstRoundBytes: first.round.bytesWritten,
      restart,
    },
    endpointChange: {
      ms: mid?.ms ?? NaN,
      allMs: runs.map((r) => r.ms),
      bytesWritten: median(runs.map((r) => r.bytes)),
      recordBytes: median(runs.map((r) => r.recordBytes)),
      documentsWritten: median(runs.map((r) => r.documents)),
      mode: modes,
      stagesMs: mid?.stages ?? {},
      matchesFullRecompile: head?.digest === full.snapshot.digest,
      fullRecompileMs,
    },
    configChange,
    peakRssWatchMB,
    cpuWatchMs: (cpu.user + cpu.system) / 1000,
    rssAfterRoundsMB,
  };
}

const CONFIG_CHANGES = 3;

/**
 * VirtualService, DestinationRule and new-Service changes, in turns, `CONFIG_CHANGES` of each
 * (`docs`: the mesh the watcher holds): a route's timeout, a pool's connection limit, a copy of a
 * Service under a new name and cluster IP (its pods now selected by two services: new classes).
 */
async function measureConfigChanges(
  path: import('./incremental.js').WatchPath,
  docs: readonly RawDocument[],
): Promise<SizeResult['configChange']> {
  const of = (kind: string) => docs.filter((d) => (d.object as { kind?: string }).kind === kind);
  const [vss, drs, svcs, pods] = [of('VirtualService'), of('DestinationRule'), of('Service'), of('Pod')];
  const out: SizeResult['configChange'] = {
    virtualServiceMs: [],
    destinationRuleMs: [],
    newServiceMs: [],
    newPodMs: [],
    modes: '',
    rssAfterMB: 0,
  };
  const modes = new Set<string>();
  const pick = <T>(list: readonly T[], i: number): T => list[(i * 7919) % list.length] as T;
  for (let i = 0; i < CONFIG_CHANGES; i++) {
    const changes: [number[], RawDocument][] = [];
    const vs = structuredClone(pick(vss, i).object) as { spec: { http: { timeout?: string }[] } };
    (vs.spec.http[0] as { timeout?: string }).timeout = `${i + 3}s`;
    changes.push([out.virtualServiceMs, { ...pick(vss, i), object: vs }]);
    const dr = structuredClone(pick(drs, i).object) as {
      spec: { trafficPolicy: { connectionPool: { tcp: { maxConnections: number } } } };
    };
    dr.spec.trafficPolicy.connectionPool.tcp.maxConnections = 200 + i;
    changes.push([out.destinationRuleMs, { ...pick(drs, i), object: dr }]);
    const svc = structuredClone(pick(svcs, i).object) as {
      metadata: { name: string; uid?: string };
      spec: { clusterIP?: string; clusterIPs?: string[] };
    };
    svc.metadata.name = `${svc.metadata.name}-copy-${i}`;
    svc.metadata.uid = `bench-copy-${i}`;
    svc.spec.clusterIP = nthAddress([10, 255], i);
    svc.spec.clusterIPs = [svc.spec.clusterIP];
    changes.push([out.newServiceMs, { ...pick(svcs, i), object: svc }]);
    const pod = structuredClone(pick(pods, i).object) as {
      metadata: { name: string; uid?: string };
      status?: { podIP?: string; podIPs?: { ip: string }[] };
    };
    pod.metadata.name = `${pod.metadata.name}-replica-${i}`;
    pod.metadata.uid = `bench-replica-${i}`;
    const ip = nthAddress([10, 254], i);
    pod.status = { ...pod.status, podIP: ip, podIPs: [{ ip }] };
    changes.push([out.newPodMs, { ...pick(pods, i), object: pod }]);
    for (const [into, doc] of changes) {
      const { ms, round } = await path.change(doc);
      if (round.publish !== 'published' && into !== out.newPodMs) throw new Error('a config change did not publish');
      into.push(ms);
      modes.add(round.mode);
    }
  }
  out.modes = [...modes].join('+');
  out.rssAfterMB = process.memoryUsage().rss / 2 ** 20;
  return out;
}

/** The mesh after the endpoint changes `measureWatcher` published. */
function changedMesh(services: number): RawDocument[] {
  let docs: RawDocument[] = generateMesh({ services }).docs;
  for (let i = 0; i < CHANGES; i++) docs = changedDocs(services, docs, i);
  return docs;
}

/** A restarted watcher process (`--child-restart`): the store `dir` holds the state `measureWatcher` left. */
export async function measureRestart(services: number, dir: string): Promise<RestartResult> {
  const { WatchPath } = await import('./incremental.js');
  const path = WatchPath.over(dir, nodeSha256);
  gc();
  // Made in the call: this frame does not hold the list while the round runs (WatchPath.restart).
  const restart = await path.restart(changedMesh(services));
  return {
    readyMs: restart.readyMs,
    roundMs: restart.ms,
    publish: restart.round.publish,
    bytesWritten: restart.round.bytesWritten,
    peakRssMB: process.resourceUsage().maxRSS / 1024,
  };
}
