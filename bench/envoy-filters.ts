/**
 * The EnvoyFilter benchmark: the synthetic mesh with three root-namespace EnvoyFilters of the kinds
 * meshes carry (a Lua filter before every inbound router, a MERGE of every outbound cluster, an
 * HCM MERGE of every outbound HTTP connection manager) next to the same mesh without them. Per size
 * and variant, in a fresh child process: the full compile (documents → built snapshot; the best of
 * three), peak RSS, groups, and the incremental compile of one endpoint change (an EDS service's
 * slice losing an endpoint; median of nine, with what kind of result each gave: a delta, or a full
 * compile). Writes bench-results/envoy-filters.json.
 *
 *   node --expose-gc dist/bench/run.js --envoy-filters [--sizes 1000]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { IncrementalCompiler, withReplaced } from '../src/compile/incremental.js';
import type { RawDocument } from '../src/inputs/parse.js';
import type { EndpointSlice } from '../src/model/k8s.js';
import { compileDocuments, Handoff, validatedDocuments, type PipelineResult } from '../src/pipeline.js';
import { nodeSha256Hex } from '../src/snapshot/store/local.js';
import { generateMesh } from './synthetic.js';
import { variantInChild } from './variant-child.js';

const RUNS = 3;
const CHANGES = 9;

export interface EnvoyFilterVariantResult {
  readonly services: number;
  readonly envoyFilters: number;
  readonly compileMs: number;
  readonly peakRssMB: number;
  readonly groups: number;
  /** Median incremental compile of one endpoint change, ms. */
  readonly endpointChangeMs: number;
  readonly endpointChangeKinds: { readonly delta: number; readonly full: number };
}

const ROUTER_MATCH = {
  context: 'SIDECAR_INBOUND',
  listener: {
    filterChain: {
      filter: {
        name: 'envoy.filters.network.http_connection_manager',
        subFilter: { name: 'envoy.filters.http.router' },
      },
    },
  },
};

/** Three root-namespace EnvoyFilters every sidecar gets. */
export function envoyFilterDocuments(): RawDocument[] {
  const ef = (name: string, configPatches: unknown[]) => ({
    apiVersion: 'networking.istio.io/v1alpha3',
    kind: 'EnvoyFilter',
    metadata: { name, namespace: 'istio-system' },
    spec: { configPatches },
  });
  return [
    ef('lua-inbound', [
      {
        applyTo: 'HTTP_FILTER',
        match: ROUTER_MATCH,
        patch: {
          operation: 'INSERT_BEFORE',
          value: {
            name: 'envoy.lua',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua',
              inlineCode: 'function envoy_on_request(h) h:headers():add("x-bench", "1") end',
            },
          },
        },
      },
    ]),
    ef('outbound-clusters', [
      {
        applyTo: 'CLUSTER',
        match: { context: 'SIDECAR_OUTBOUND' },
        patch: { operation: 'MERGE', value: { per_connection_buffer_limit_bytes: 65536 } },
      },
    ]),
    ef('outbound-hcm', [
      {
        applyTo: 'NETWORK_FILTER',
        match: {
          context: 'SIDECAR_OUTBOUND',
          listener: { filterChain: { filter: { name: 'envoy.filters.network.http_connection_manager' } } },
        },
        patch: {
          operation: 'MERGE',
          value: {
            typed_config: {
              '@type':
                'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
              common_http_protocol_options: { idle_timeout: '30s' },
            },
          },
        },
      },
    ]),
  ].map((object, index) => ({ file: 'envoy-filters.yaml', index, object }));
}

function measureVariant(services: number, withFilters: boolean): EnvoyFilterVariantResult {
  const mesh = generateMesh({ services }).docs;
  const extra = withFilters ? envoyFilterDocuments() : [];
  const docs = [...mesh, ...extra];
  let best = Infinity;
  let result: PipelineResult | undefined;
  for (let i = 0; i < RUNS; i++) {
    result = undefined;
    globalThis.gc?.();
    const t = performance.now();
    result = compileDocuments(docs, { hasher: nodeSha256Hex });
    best = Math.min(best, performance.now() - t);
  }
  const groups = Object.keys((result as PipelineResult).snapshot.content.groups).length;
  const diagnostics = (result as PipelineResult).diagnostics.filter((d) => d.kind === 'EnvoyFilter');
  if (diagnostics.length > 0) throw new Error(`EnvoyFilter diagnostics: ${JSON.stringify(diagnostics.slice(0, 3))}`);
  result = undefined;
  globalThis.gc?.();

  let inputs = validatedDocuments(new Handoff({ documents: docs, parseDiagnostics: [] }), {
    hasher: nodeSha256Hex,
  }).inputs.take();
  const ic = new IncrementalCompiler();
  ic.compileFull(inputs);
  const times: number[] = [];
  const kinds = { delta: 0, full: 0 };
  const slices = inputs.endpointSlices.filter((s) => s.endpoints.length > 1);
  for (let i = 0; i < CHANGES; i++) {
    const slice = slices[(i * 7919) % slices.length] as EndpointSlice;
    const moved = { ...slice, endpoints: slice.endpoints.slice(0, -1) };
    inputs = withReplaced(inputs, 'EndpointSlice', moved);
    const t = performance.now();
    const r = ic.update(inputs, [{ kind: 'EndpointSlice', namespace: slice.meta.namespace, name: slice.meta.name }]);
    times.push(performance.now() - t);
    kinds[r.kind]++;
  }
  times.sort((a, b) => a - b);
  return {
    services,
    envoyFilters: extra.length,
    compileMs: best,
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    groups,
    endpointChangeMs: times[Math.floor(times.length / 2)] as number,
    endpointChangeKinds: kinds,
  };
}

const inChild = (services: number, withFilters: boolean): EnvoyFilterVariantResult =>
  variantInChild<EnvoyFilterVariantResult>(import.meta.url, 'envoy-filter', services, withFilters);

export function runEnvoyFilterBench(sizes: readonly number[]): void {
  const results: EnvoyFilterVariantResult[] = [];
  const rows = [
    '| services | EnvoyFilters | full compile | peak RSS | groups | one endpoint change, incremental compile (median) | its results |',
    '|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const n of sizes) {
    for (const withFilters of [false, true]) {
      process.stderr.write(`bench envoy-filters: ${n} services, ${withFilters ? 'three EnvoyFilters' : 'none'}…\n`);
      const r = inChild(n, withFilters);
      results.push(r);
      rows.push(
        `| ${n} | ${r.envoyFilters} | ${r.compileMs.toFixed(0)} ms | ${r.peakRssMB.toFixed(0)} MB | ${r.groups} | ${r.endpointChangeMs.toFixed(1)} ms | ${r.endpointChangeKinds.delta} delta, ${r.endpointChangeKinds.full} full |`,
      );
    }
  }
  process.stdout.write(rows.join('\n') + '\n');
  const dir = join(process.cwd(), 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'envoy-filters.json');
  writeFileSync(file, JSON.stringify({ node: process.version, results }, null, 2) + '\n');
  process.stderr.write(`bench envoy-filters: wrote ${file}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const i = process.argv.indexOf('--child');
  if (i >= 0) {
    const result = measureVariant(Number(process.argv[i + 1]), process.argv[i + 2] === 'true');
    process.stdout.write(JSON.stringify(result) + '\n');
  }
}
