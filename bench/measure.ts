/**
 * One benchmark size, measured inside its own process (run.ts starts one per size, so the peak
 * RSS belongs to that size alone). Prints one JSON line: a `SizeResult`.
 *
 * Node-side code: it may use node:* freely; what it times is the pure core.
 */
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { compile } from '../src/compile/index.js';
import { buildInputSet } from '../src/inputs/index.js';
import { parseDocuments, type RawDocument } from '../src/inputs/parse.js';
import { buildSnapshot } from '../src/snapshot/build.js';
import type { Hasher } from '../src/snapshot/digest.js';
import { generateMesh, nthAddress, toYaml, withMovedEndpoint } from './synthetic.js';

export interface SizeResult {
  services: number;
  namespaces: number;
  pods: number;
  virtualServices: number;
  destinationRules: number;
  documents: number;
  /** Milliseconds, first (cold) run of the whole pipeline: inputs → compile → snapshot. */
  fullMs: number;
  /** The same pipeline again in the same process (JIT warm). */
  fullWarmMs: number;
  stagesMs: { inputs: number; compile: number; snapshot: number };
  /** buildSnapshot alone with the pure-JS noble SHA-256 (what workerd uses). */
  snapshotNobleMs: number;
  endpointChange: { ms: number; mode: 'incremental' | 'full-recompile'; encodes: number; digestChanged: boolean };
  peakRssMB: number;
  resources: number;
  objects: number;
  snapshotBytes: number;
  diagnostics: number;
  yaml: { bytes: number; parseMs: number; inputSetMs: number };
}

const nodeSha256: Hasher = (bytes) => createHash('sha256').update(bytes).digest('hex');
const COMPILER = { name: 'meshsnap-bench', version: '0' };
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

function pipeline(docs: RawDocument[], hasher: Hasher) {
  const t0 = performance.now();
  const inputs = buildInputSet(docs);
  const t1 = performance.now();
  const { output, diagnostics } = compile(inputs);
  const t2 = performance.now();
  const snapshot = buildSnapshot(output, { inputsDigest: inputsDigestOf(docs, hasher), compiler: COMPILER }, { hasher });
  const t3 = performance.now();
  return { inputs, output, diagnostics, snapshot, stages: { inputs: t1 - t0, compile: t2 - t1, snapshot: t3 - t2 }, total: t3 - t0 };
}

/** The bench has no files to digest; a cheap stand-in keeps the field meaningful. */
function inputsDigestOf(docs: readonly RawDocument[], hasher: Hasher): string {
  return `sha256:${hasher(new TextEncoder().encode(String(docs.length)))}`;
}

export function measureSize(services: number): SizeResult {
  const mesh = generateMesh({ services });
  gc();
  const cold = pipeline(mesh.docs, nodeSha256);
  gc();
  const warm = pipeline(mesh.docs, nodeSha256);

  const tn = performance.now();
  buildSnapshot(warm.output, { inputsDigest: 'sha256:' + '0'.repeat(64), compiler: COMPILER }, {});
  const snapshotNobleMs = performance.now() - tn;

  // One pod moves: its EndpointSlice gets a new address. Measured as a full recompile for now.
  const sliceIndex = Math.floor(services / 2);
  const moved = withMovedEndpoint(mesh.docs, sliceIndex, nthAddress([10, 250], 1));
  gc();
  const change = pipeline(moved.docs, nodeSha256);
  const endpointChange = { ms: change.total, mode: 'full-recompile' as const, encodes: 0, digestChanged: change.snapshot.digest !== warm.snapshot.digest };

  let resources = 0;
  for (const table of warm.output.groups.values()) for (const m of Object.values(table)) resources += (m as Map<string, unknown>).size;
  const { objects, bytes } = objectStats(warm.snapshot.objects);
  const peakRssMB = process.resourceUsage().maxRSS / 1024;

  // For information only, after the peak RSS was read: the same objects as YAML through the parser.
  const text = toYaml(mesh.docs);
  const ty0 = performance.now();
  const parsed = parseDocuments(text, 'synthetic.yaml');
  const ty1 = performance.now();
  buildInputSet(parsed.docs);
  const ty2 = performance.now();

  return {
    services,
    namespaces: mesh.namespaces,
    pods: mesh.pods,
    virtualServices: mesh.virtualServices,
    destinationRules: mesh.destinationRules,
    documents: mesh.docs.length,
    fullMs: cold.total,
    fullWarmMs: warm.total,
    stagesMs: cold.stages,
    snapshotNobleMs,
    endpointChange,
    peakRssMB,
    resources,
    objects,
    snapshotBytes: bytes,
    diagnostics: cold.diagnostics.length,
    yaml: { bytes: Buffer.byteLength(text), parseMs: ty1 - ty0, inputSetMs: ty2 - ty1 },
  };
}

function objectStats(objects: unknown): { objects: number; bytes: number } {
  let n = 0;
  let bytes = 0;
  const values = objects instanceof Map ? objects.values() : Array.isArray(objects) ? objects.values() : Object.values(objects as object).values();
  for (const v of values) {
    n++;
    const b = v instanceof Uint8Array ? v : (v as { bytes?: Uint8Array }).bytes;
    bytes += b?.byteLength ?? 0;
  }
  return { objects: n, bytes };
}
