/**
 * One benchmark size, measured inside its own process (run.ts starts one per size, so the peak
 * RSS belongs to that size alone). Prints one JSON line: a `SizeResult`.
 *
 * Node-side code: it may use node:* freely; what it times is the pure core.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildInputSet, parseDocuments } from '../src/inputs/index.js';
import { buildSnapshot } from '../src/snapshot/build.js';
import type { Hasher } from '../src/snapshot/digest.js';
import { LocalStore } from '../src/snapshot/store/local.js';
import { publishSnapshot } from '../src/snapshot/store/publish.js';
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
    /** Median over several changes, from the changed EndpointSlice to the new version published in a LocalStore. */
    ms: number;
    /** Median bytes (objects + documents) a change adds to the store. */
    bytesWritten: number;
    documentsWritten: number;
    mode: 'incremental';
    stagesMs: Stages;
    /** The incremental snapshot equals a full recompile of the changed documents. */
    matchesFullRecompile: boolean;
    fullRecompileMs: number;
  };
  peakRssMB: number;
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

const nodeSha256: Hasher = (bytes) => createHash('sha256').update(bytes).digest('hex');
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();
const sum = (s: Stages): number => Object.entries(s).reduce((t, [k, v]) => (k === 'encodes' ? t : t + v), 0);
const CHANGES = 7;

export async function measureSize(services: number, opts: { yaml?: boolean } = {}): Promise<SizeResult> {
  const mesh = generateMesh({ services });
  gc();
  const cold = compileState(mesh.docs, nodeSha256);
  gc();
  const warm = compileState(mesh.docs, nodeSha256);
  const { state } = warm;

  const tn = performance.now();
  buildSnapshot(state.output, { inputsDigest: state.snapshot.content.inputsDigest, compiler: BENCH_COMPILER }, {});
  const snapshotNobleMs = performance.now() - tn;

  // Pods move, one at a time: each change is a new EndpointSlice for one service, applied as a
  // snapshot delta and published to a local store (the first version is a full publish).
  const storeDir = mkdtempSync(join(tmpdir(), 'meshsnap-bench-'));
  const store = new LocalStore(join(storeDir, '.meshsnap'));
  await publishSnapshot(store, 'bench', state.snapshot, { createdAt: new Date().toISOString() });
  const runs: { ms: number; stages: Stages; bytes: number; documents: number }[] = [];
  let current = state;
  let docs = mesh.docs;
  for (let i = 0; i < CHANGES; i++) {
    const sliceIndex = Math.floor(((i + 1) * services) / (CHANGES + 1));
    const moved = withMovedEndpoint(docs, sliceIndex, nthAddress([10, 250], i));
    const changedDoc = moved.docs.find((d, k) => d !== docs[k]);
    if (!changedDoc) throw new Error('no changed document');
    const t0 = performance.now();
    const next = applyEndpointSlice(current, changedDoc);
    const t1 = performance.now();
    const published = await publishSnapshot(store, 'bench', next.state.snapshot, { createdAt: new Date().toISOString() });
    const t2 = performance.now();
    if (published.status !== 'published') throw new Error('an endpoint change did not publish');
    runs.push({ ms: t2 - t0, stages: { ...next.stages, store: t2 - t1 }, bytes: published.bytesWritten, documents: published.documentsWritten });
    current = next.state;
    docs = moved.docs;
  }
  rmSync(storeDir, { recursive: true, force: true });
  const median = [...runs].sort((a, b) => a.ms - b.ms)[Math.floor(runs.length / 2)] ?? { ms: NaN, stages: {}, bytes: NaN, documents: NaN };
  gc();
  const tf = performance.now();
  const full = compileState(docs, nodeSha256);
  const fullRecompileMs = performance.now() - tf;

  const counts = state.snapshot.counts;
  let bytes = 0;
  for (const b of state.snapshot.objects.values()) bytes += b.byteLength;
  let contentBytes = 0;
  let maxDocumentBytes = 0;
  for (const d of state.snapshot.documents) {
    contentBytes += d.bytes.byteLength;
    maxDocumentBytes = Math.max(maxDocumentBytes, d.bytes.byteLength);
  }
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
    endpointChange: {
      ms: median.ms,
      bytesWritten: [...runs].map((r) => r.bytes).sort((a, b) => a - b)[Math.floor(runs.length / 2)] ?? NaN,
      documentsWritten: median.documents,
      mode: 'incremental',
      stagesMs: median.stages,
      matchesFullRecompile: full.state.snapshot.digest === current.snapshot.digest,
      fullRecompileMs,
    },
    peakRssMB,
    resources: counts.clusters + counts.endpoints + counts.listeners + counts.routes,
    objects: counts.objects,
    snapshotBytes: bytes + contentBytes,
    contentBytes,
    treeDocuments: state.snapshot.documents.length,
    maxDocumentBytes,
    diagnostics: state.ctx.diags.all.length,
    yaml,
  };
}
