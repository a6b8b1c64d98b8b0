/**
 * One benchmark size, measured inside its own process (run.ts starts one per size, so the peak
 * RSS belongs to that size alone). Prints one JSON line: a `SizeResult`.
 *
 * Node-side code: it may use node:* freely; what it times is the pure core.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { buildInputSet, parseDocuments } from '../src/inputs/index.js';
import { buildSnapshot, snapshotCounts } from '../src/snapshot/build.js';
import { snapshotContentBytes } from '../src/snapshot/content.js';
import type { Hasher } from '../src/snapshot/digest.js';
import { applyEndpointSlice, BENCH_COMPILER, compileState, type Stages } from './incremental.js';
import { generateMesh, nthAddress, toYaml, withMovedEndpoint } from './synthetic.js';

export interface SizeResult {
  services: number;
  namespaces: number;
  pods: number;
  virtualServices: number;
  destinationRules: number;
  documents: number;
  /** Milliseconds, first (cold) run of the whole pipeline: documents → InputSet → compile → inputs digest → snapshot. */
  fullMs: number;
  /** The same pipeline again in the same process (JIT warm). */
  fullWarmMs: number;
  stagesMs: Stages;
  /** buildSnapshot alone with the pure-JS noble SHA-256 (what workerd uses), fresh encoder. */
  snapshotNobleMs: number;
  endpointChange: {
    /** Median over several changes. */
    ms: number;
    mode: 'incremental';
    stagesMs: Stages;
    /** The incremental snapshot equals a full recompile of the changed documents. */
    matchesFullRecompile: boolean;
    fullRecompileMs: number;
  };
  peakRssMB: number;
  resources: number;
  objects: number;
  /** Stored bytes: every object plus the snapshot document. */
  snapshotBytes: number;
  contentBytes: number;
  diagnostics: number;
  yaml: { bytes: number; parseMs: number; inputSetMs: number };
}

const nodeSha256: Hasher = (bytes) => createHash('sha256').update(bytes).digest('hex');
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const sum = (s: Stages): number => Object.entries(s).reduce((t, [k, v]) => (k === 'encodes' ? t : t + v), 0);
const CHANGES = 7;

export function measureSize(services: number, opts: { yaml?: boolean } = {}): SizeResult {
  const mesh = generateMesh({ services });
  gc();
  const cold = compileState(mesh.docs, nodeSha256);
  gc();
  const warm = compileState(mesh.docs, nodeSha256);
  const { state } = warm;

  const tn = performance.now();
  buildSnapshot(state.output, { inputsDigest: state.snapshot.content.inputsDigest, compiler: BENCH_COMPILER }, {});
  const snapshotNobleMs = performance.now() - tn;

  // Pods move, one at a time: each change is a new EndpointSlice for one service.
  const runs: { ms: number; stages: Stages }[] = [];
  let current = state;
  let docs = mesh.docs;
  for (let i = 0; i < CHANGES; i++) {
    const sliceIndex = Math.floor(((i + 1) * services) / (CHANGES + 1));
    const moved = withMovedEndpoint(docs, sliceIndex, nthAddress([10, 250], i));
    const changedDoc = moved.docs.find((d, k) => d !== docs[k]);
    if (!changedDoc) throw new Error('no changed document');
    const t0 = performance.now();
    const next = applyEndpointSlice(current, changedDoc);
    runs.push({ ms: performance.now() - t0, stages: next.stages });
    current = next.state;
    docs = moved.docs;
  }
  const median = [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)] ?? { ms: NaN, stages: {} };
  gc();
  const tf = performance.now();
  const full = compileState(docs, nodeSha256);
  const fullRecompileMs = performance.now() - tf;

  const counts = snapshotCounts(state.snapshot.content);
  let bytes = 0;
  for (const b of state.snapshot.objects.values()) bytes += b.byteLength;
  const contentBytes = snapshotContentBytes(state.snapshot.content).byteLength;
  const peakRssMB = process.resourceUsage().maxRSS / 1024;

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
    fullMs: sum(cold.stages),
    fullWarmMs: sum(warm.stages),
    stagesMs: cold.stages,
    snapshotNobleMs,
    endpointChange: { ms: median.ms, mode: 'incremental', stagesMs: median.stages, matchesFullRecompile: full.state.snapshot.digest === current.snapshot.digest, fullRecompileMs },
    peakRssMB,
    resources: counts.clusters + counts.endpoints + counts.listeners + counts.routes,
    objects: counts.objects,
    snapshotBytes: bytes + contentBytes,
    contentBytes,
    diagnostics: state.ctx.diags.all.length,
    yaml,
  };
}
