/**
 * The Sidecar benchmark: the synthetic mesh with a namespace-wide Sidecar in every namespace
 * (egress `./*` and `istio-system/*`, istiod's recommended shape) next to the same mesh without
 * Sidecars. Per size and variant, in a fresh child process (so peak memory is its own): the full
 * compile time (documents → built snapshot; the best of three), peak RSS, stored bytes (objects
 * and documents of the snapshot) and the bytes one sidecar of `ns-0` is served. Writes
 * bench-results/sidecars.json.
 *
 *   node --expose-gc dist/bench/run.js --sidecars [--sizes 1000]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RawDocument } from '../src/inputs/parse.js';
import type { PipelineResult } from '../src/pipeline.js';
import { resourcesForClass } from '../src/snapshot/classify.js';
import type { Hasher } from '../src/snapshot/digest.js';
import { nodeSha256Hex } from '../src/snapshot/store/local.js';
import { XDS_TYPES } from '../src/xds/type-urls.js';
import { bestCompile } from './best-compile.js';
import { generateMesh } from './synthetic.js';
import { variantInChild } from './variant-child.js';

// The hasher `meshsnap compile` and `meshsnap watch` use (node:crypto's one-shot hash).
const sha256: Hasher = nodeSha256Hex;

export interface SidecarVariantResult {
  readonly services: number;
  readonly sidecars: boolean;
  readonly compileMs: number;
  readonly peakRssMB: number;
  readonly storedBytes: number;
  /** Bytes of the resources one selector-less sidecar of ns-0 receives (every type). */
  readonly proxyBytes: number;
  readonly groups: number;
}

/** One namespace-wide Sidecar per namespace of the mesh. */
export function sidecarDocuments(mesh: readonly RawDocument[]): RawDocument[] {
  const namespaces = new Set<string>();
  for (const d of mesh) {
    const ns = (d.object as { metadata?: { namespace?: string } }).metadata?.namespace;
    if (ns) namespaces.add(ns);
  }
  return [...namespaces].sort().map((namespace, index) => ({
    file: 'sidecars.yaml',
    index,
    object: {
      apiVersion: 'networking.istio.io/v1',
      kind: 'Sidecar',
      metadata: { name: 'default', namespace },
      spec: { egress: [{ hosts: ['./*', 'istio-system/*'] }] },
    },
  }));
}

function proxyBytes(result: PipelineResult): number {
  const table = resourcesForClass(result.snapshot.content, 'sidecar/ns-0/_');
  if (!table) throw new Error('no class sidecar/ns-0/_');
  let bytes = 0;
  for (const type of XDS_TYPES)
    for (const digest of table[type].values()) bytes += result.snapshot.objects.get(digest)?.byteLength ?? 0;
  return bytes;
}

function measureVariant(services: number, sidecars: boolean): SidecarVariantResult {
  const mesh = generateMesh({ services }).docs;
  const docs = sidecars ? [...mesh, ...sidecarDocuments(mesh)] : mesh;
  const { ms: best, result: r } = bestCompile(docs, sha256);
  let storedBytes = 0;
  for (const b of r.snapshot.objects.values()) storedBytes += b.byteLength;
  for (const d of r.snapshot.documents) storedBytes += d.bytes.byteLength;
  return {
    services,
    sidecars,
    compileMs: best,
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    storedBytes,
    proxyBytes: proxyBytes(r),
    groups: Object.keys(r.snapshot.content.groups).length,
  };
}

const inChild = (services: number, sidecars: boolean): SidecarVariantResult =>
  variantInChild<SidecarVariantResult>(import.meta.url, 'sidecar', services, sidecars);

const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;

export function runSidecarBench(sizes: readonly number[]): void {
  const results: SidecarVariantResult[] = [];
  const rows = [
    '| services | Sidecars | full compile | peak RSS | stored | one ns-0 sidecar | groups |',
    '|---:|---|---:|---:|---:|---:|---:|',
  ];
  for (const n of sizes) {
    for (const sidecars of [false, true]) {
      process.stderr.write(`bench sidecars: ${n} services, ${sidecars ? 'a Sidecar per namespace' : 'no Sidecar'}…\n`);
      const r = inChild(n, sidecars);
      results.push(r);
      rows.push(
        `| ${n} | ${sidecars ? './* + istio-system/*' : 'none'} | ${r.compileMs.toFixed(0)} ms | ${r.peakRssMB.toFixed(0)} MB | ${kib(r.storedBytes)} | ${kib(r.proxyBytes)} | ${r.groups} |`,
      );
    }
  }
  process.stdout.write(rows.join('\n') + '\n');
  const dir = join(process.cwd(), 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'sidecars.json');
  writeFileSync(file, JSON.stringify({ node: process.version, results }, null, 2) + '\n');
  process.stderr.write(`bench sidecars: wrote ${file}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const i = process.argv.indexOf('--child');
  if (i >= 0) {
    const result = measureVariant(Number(process.argv[i + 1]), process.argv[i + 2] === 'true');
    process.stdout.write(JSON.stringify(result) + '\n');
  }
}
