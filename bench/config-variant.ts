/**
 * Benchmarks of the synthetic mesh with one kind of config added, next to the same mesh without it:
 * `--envoy-filters` (./envoy-filters.ts: three root-namespace EnvoyFilters) and `--tracing`
 * (./telemetry-tracing.ts: mesh-wide Telemetry tracing to an OpenTelemetry collector). Per size and
 * variant, in a fresh child process: the full compile (documents → built snapshot; the best of
 * three), peak RSS, groups, and the incremental compile of one endpoint change (an EDS service's
 * slice losing an endpoint; median of nine, with what kind of result each gave: a delta, or a full
 * compile) and of one that rebuilds an inbound group (a service whose targetPort names a container
 * port, its port moving; the mesh of both variants has it); and, in a child of its own, the peak RSS
 * of the path `meshsnap compile --store` takes up to the publish (./compile-state.ts: the CLI's
 * forced collections, objects spooled), which the 512 MB target is about. Writes
 * bench-results/<variant>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { IncrementalCompiler, withReplaced } from '../src/compile/incremental.js';
import type { RawDocument } from '../src/inputs/parse.js';
import type { InputSet } from '../src/model/inputs.js';
import type { EndpointSlice } from '../src/model/k8s.js';
import { Handoff, validatedDocuments } from '../src/pipeline.js';
import { bestCompile } from './best-compile.js';
import { compileState } from './compile-state.js';
import { nodeSha256Hex } from '../src/snapshot/store/local.js';
import { envoyFilterDocuments } from './envoy-filters.js';
import { generateMesh } from './synthetic.js';
import { tracingDocuments } from './telemetry-tracing.js';
import { variantInChild } from './variant-child.js';

const CHANGES = 9;

interface Variant {
  /** What the table's column says of the added config. */
  readonly label: string;
  readonly documents: () => RawDocument[];
  /** The kinds whose diagnostics mean the variant is not what it measures. */
  readonly kinds: readonly string[];
}

const VARIANTS = {
  'envoy-filters': { label: 'EnvoyFilters', documents: envoyFilterDocuments, kinds: ['EnvoyFilter'] },
  'telemetry-tracing': { label: 'Telemetry tracing', documents: tracingDocuments, kinds: ['Telemetry', 'MeshConfig'] },
} satisfies Record<string, Variant>;

export type VariantName = keyof typeof VARIANTS;

export interface ConfigVariantResult {
  readonly services: number;
  /** Documents added to the synthetic mesh (0: the mesh alone). */
  readonly added: number;
  readonly compileMs: number;
  readonly peakRssMB: number;
  /** Peak RSS of the CLI's path up to the publish, in a child of its own (cliPathPeak). */
  readonly cliPathPeakRssMB: number;
  readonly groups: number;
  /** Median incremental compile of one endpoint change, ms. */
  readonly endpointChangeMs: number;
  readonly endpointChangeKinds: { readonly delta: number; readonly full: number };
  /** The same for a named target port's move (its inbound group rebuilt). */
  readonly namedPortChangeMs: number;
  readonly namedPortChangeKinds: { readonly delta: number; readonly full: number };
}

/** A service whose targetPort names its pod's container port `http` (on `port`), with its pod and slice. */
function namedPortDocuments(port: number): RawDocument[] {
  const ip = '10.253.7.1';
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'named-port', namespace: 'ns-0' },
      spec: {
        clusterIP: '10.254.77.1',
        selector: { app: 'named-port' },
        ports: [{ name: 'http-web', port: 80, targetPort: 'http' }],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'named-port-0', namespace: 'ns-0', labels: { app: 'named-port' } },
      spec: { containers: [{ name: 'web', ports: [{ name: 'http', containerPort: port }] }] },
      status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'named-port-a', namespace: 'ns-0', labels: { 'kubernetes.io/service-name': 'named-port' } },
      addressType: 'IPv4',
      ports: [{ name: 'http-web', port, protocol: 'TCP' }],
      endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    },
  ].map((object, index) => ({ file: 'named-port.yaml', index, object }));
}

/** CHANGES endpoint rounds, each replacing the slice `sliceAt(i)` gives: the median time, the kinds of result, the inputs after. */
function medianChange(
  ic: IncrementalCompiler,
  start: InputSet,
  sliceAt: (i: number) => EndpointSlice,
): { readonly medianMs: number; readonly kinds: { delta: number; full: number }; readonly inputs: InputSet } {
  let inputs = start;
  const times: number[] = [];
  const kinds = { delta: 0, full: 0 };
  for (let i = 0; i < CHANGES; i++) {
    const slice = sliceAt(i);
    inputs = withReplaced(inputs, 'EndpointSlice', slice);
    const t = performance.now();
    const r = ic.update(inputs, [{ kind: 'EndpointSlice', namespace: slice.meta.namespace, name: slice.meta.name }]);
    times.push(performance.now() - t);
    kinds[r.kind]++;
  }
  times.sort((a, b) => a - b);
  return { medianMs: times[Math.floor(times.length / 2)] as number, kinds, inputs };
}

/** The best full compile's time and groups, its diagnostics about the variant's config refused. */
function compiledOnce(v: Variant, docs: readonly RawDocument[]): { readonly best: number; readonly groups: number } {
  const { ms, result } = bestCompile(docs, nodeSha256Hex);
  const diagnostics = result.diagnostics.filter((d) => d.severity !== 'info' && v.kinds.includes(d.kind ?? ''));
  if (diagnostics.length > 0) throw new Error(`${v.label} diagnostics: ${JSON.stringify(diagnostics.slice(0, 3))}`);
  return { best: ms, groups: Object.keys(result.snapshot.content.groups).length };
}

function variantDocuments(v: Variant, services: number, withConfig: boolean): { docs: RawDocument[]; added: number } {
  const mesh = [...generateMesh({ services }).docs, ...namedPortDocuments(8000)];
  const extra = withConfig ? v.documents() : [];
  return { docs: [...mesh, ...extra], added: extra.length };
}

/** The peak RSS of `meshsnap compile --store DIR`'s path up to the publish (compile-state.ts), in this process. */
function cliPathPeak(variant: VariantName, services: number, withConfig: boolean): { readonly peakRssMB: number } {
  const { state } = compileState(
    new Handoff(variantDocuments(VARIANTS[variant], services, withConfig).docs),
    nodeSha256Hex,
  );
  state.close();
  return { peakRssMB: process.resourceUsage().maxRSS / 1024 };
}

function measureVariant(
  variant: VariantName,
  services: number,
  withConfig: boolean,
): Omit<ConfigVariantResult, 'cliPathPeakRssMB'> {
  const v: Variant = VARIANTS[variant];
  const { docs, added } = variantDocuments(v, services, withConfig);
  const { best, groups } = compiledOnce(v, docs);
  // The compile's result is let go before the incremental compiler's.
  globalThis.gc?.();

  const inputs = validatedDocuments(new Handoff({ documents: docs, parseDiagnostics: [] }), {
    hasher: nodeSha256Hex,
  }).inputs.take();
  const ic = new IncrementalCompiler();
  ic.compileFull(inputs);
  const slices = inputs.endpointSlices.filter((s) => s.endpoints.length > 1);
  const eds = medianChange(ic, inputs, (i) => {
    const slice = slices[(i * 7919) % slices.length] as EndpointSlice;
    return { ...slice, endpoints: slice.endpoints.slice(0, -1) };
  });
  // The named port's slice on 9000, then on 8000 again: read once each.
  const [onNine, onEight] = [9000, 8000].map(
    (port) =>
      validatedDocuments(new Handoff({ documents: namedPortDocuments(port), parseDiagnostics: [] }), {
        hasher: nodeSha256Hex,
      }).inputs.take().endpointSlices[0] as EndpointSlice,
  );
  const named = medianChange(ic, eds.inputs, (i) => (i % 2 ? (onEight as EndpointSlice) : (onNine as EndpointSlice)));
  return {
    services,
    added,
    compileMs: best,
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    groups,
    endpointChangeMs: eds.medianMs,
    endpointChangeKinds: eds.kinds,
    namedPortChangeMs: named.medianMs,
    namedPortChangeKinds: named.kinds,
  };
}

export function runConfigVariantBench(variant: VariantName, sizes: readonly number[]): void {
  const { label } = VARIANTS[variant];
  const results: ConfigVariantResult[] = [];
  const rows = [
    `| services | ${label} (documents added) | full compile | peak RSS | the CLI's path: peak RSS | groups | one endpoint change, incremental compile (median) | its results | a named target port moving (median) | its results |`,
    '|---:|---:|---:|---:|---:|---:|---:|---|---:|---|',
  ];
  for (const n of sizes) {
    for (const withConfig of [false, true]) {
      process.stderr.write(`bench ${variant}: ${n} services, ${withConfig ? label : 'without'}…\n`);
      const measured = variantInChild<Omit<ConfigVariantResult, 'cliPathPeakRssMB'>>(
        import.meta.url,
        variant,
        n,
        `${variant}:${withConfig}`,
      );
      const cli = variantInChild<{ peakRssMB: number }>(import.meta.url, variant, n, `${variant}:${withConfig}:cli`);
      const r: ConfigVariantResult = { ...measured, cliPathPeakRssMB: cli.peakRssMB };
      results.push(r);
      rows.push(
        `| ${n} | ${r.added} | ${r.compileMs.toFixed(0)} ms | ${r.peakRssMB.toFixed(0)} MB | ${r.cliPathPeakRssMB.toFixed(0)} MB | ${r.groups} | ${r.endpointChangeMs.toFixed(1)} ms | ${r.endpointChangeKinds.delta} delta, ${r.endpointChangeKinds.full} full | ${r.namedPortChangeMs.toFixed(1)} ms | ${r.namedPortChangeKinds.delta} delta, ${r.namedPortChangeKinds.full} full |`,
      );
    }
  }
  process.stdout.write(rows.join('\n') + '\n');
  const dir = join(process.cwd(), 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${variant}.json`);
  writeFileSync(file, JSON.stringify({ node: process.version, results }, null, 2) + '\n');
  process.stderr.write(`bench ${variant}: wrote ${file}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const i = process.argv.indexOf('--child');
  if (i >= 0) {
    const [variant, withConfig, cli] = (process.argv[i + 2] ?? '').split(':');
    if (!variant || !Object.hasOwn(VARIANTS, variant)) throw new Error(`unknown variant ${variant}`);
    const services = Number(process.argv[i + 1]);
    const result =
      cli === 'cli'
        ? cliPathPeak(variant as VariantName, services, withConfig === 'true')
        : measureVariant(variant as VariantName, services, withConfig === 'true');
    process.stdout.write(JSON.stringify(result) + '\n');
  }
}
