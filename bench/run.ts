/**
 * `npm run bench`: compiles synthetic meshes of 1k, 5k and 10k services, each in a fresh child
 * process (so peak memory is per size), prints a Markdown table beside the targets and writes
 * bench-results/compile.json.
 *
 *   node --expose-gc dist/bench/run.js [--sizes 1000,5000] [--no-yaml] [--child N]
 *   node --expose-gc dist/bench/run.js --relay-stalled     (only the stalled-readers relay bench)
 *   node --expose-gc dist/bench/run.js --e2e [--e2e-proxies 1000] [--e2e-changes 20]
 *                                                         (only the end-to-end bench, bench/e2e.ts)
 *   node --expose-gc dist/bench/run.js --gateway [--sizes 1000]   (only the ingress gateway bench)
 *   node --expose-gc dist/bench/run.js --sidecars [--sizes 1000]  (only the Sidecar bench, bench/sidecars.ts)
 *   node --expose-gc dist/bench/run.js --envoy-filters [--sizes 1000]  (only the EnvoyFilter bench, bench/envoy-filters.ts)
 *   node --expose-gc dist/bench/run.js --tracing [--sizes 1000]  (only the Telemetry tracing bench, bench/telemetry-tracing.ts)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatTable, TARGETS } from './report.js';
import type { SizeResult } from './measure.js';

const DEFAULT_SIZES = [1000, 5000, 10000];
// Guards for a shared machine: a size that needs more heap or time is reported as failed, and the
// larger sizes after it are skipped (they can only be worse), so `npm run bench` stays ~3 minutes.
const CHILD_TIMEOUT_MS = 900_000;
const CHILD_HEAP_MB = 3072;

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const yaml = !process.argv.includes('--no-yaml');

async function child(services: number): Promise<void> {
  const { measureSize } = await import('./measure.js');
  process.stdout.write(JSON.stringify(await measureSize(services, { yaml })) + '\n');
}

function runSize(services: number): SizeResult | { services: number; error: string } {
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      `--max-old-space-size=${CHILD_HEAP_MB}`,
      self,
      '--child',
      String(services),
      ...(yaml ? [] : ['--no-yaml']),
    ],
    { encoding: 'utf8', timeout: CHILD_TIMEOUT_MS, maxBuffer: 16 << 20 },
  );
  const line = r.stdout?.trim().split('\n').pop();
  if (r.error || r.signal === 'SIGTERM') return { services, error: `no result within ${CHILD_TIMEOUT_MS / 1000} s` };
  if (r.status !== 0 || !line) {
    const oom = /heap out of memory|Allocation failed/.test(r.stderr ?? '');
    return {
      services,
      error: oom
        ? `out of memory (heap limit ${CHILD_HEAP_MB} MB)`
        : r.stderr?.trim().split('\n').slice(-3).join(' / ') || `exit ${r.status}`,
    };
  }
  return JSON.parse(line) as SizeResult;
}

async function main(): Promise<void> {
  const childSize = argValue('--child');
  if (childSize) return child(Number(childSize));
  // measure.ts's own children: the watcher alone, and its restart over the store it left.
  const watcherSize = argValue('--child-watcher');
  if (watcherSize) {
    const { measureWatcher } = await import('./measure.js');
    process.stdout.write(JSON.stringify(await measureWatcher(Number(watcherSize))) + '\n');
    return;
  }
  const restartSize = argValue('--child-restart');
  if (restartSize) {
    const { measureRestart } = await import('./measure.js');
    const dir = process.argv[process.argv.indexOf('--child-restart') + 2] ?? '';
    process.stdout.write(JSON.stringify(await measureRestart(Number(restartSize), dir)) + '\n');
    return;
  }
  if (process.argv.includes('--gateway')) {
    const sizes = (argValue('--sizes')?.split(',').map(Number) ?? [1000]).filter((n) => Number.isInteger(n) && n > 0);
    (await import('./gateway.js')).runGatewayBench(sizes);
    return;
  }
  for (const [flag, variant] of [
    ['--envoy-filters', 'envoy-filters'],
    ['--tracing', 'telemetry-tracing'],
  ] as const)
    if (process.argv.includes(flag)) {
      const sizes = (argValue('--sizes')?.split(',').map(Number) ?? [1000]).filter((n) => Number.isInteger(n) && n > 0);
      (await import('./config-variant.js')).runConfigVariantBench(variant, sizes);
      return;
    }
  if (process.argv.includes('--sidecars')) {
    const sizes = (argValue('--sizes')?.split(',').map(Number) ?? [1000]).filter((n) => Number.isInteger(n) && n > 0);
    (await import('./sidecars.js')).runSidecarBench(sizes);
    return;
  }
  if (process.argv.includes('--e2e')) {
    const proxies = argValue('--e2e-proxies');
    const changes = argValue('--e2e-changes');
    await (
      await import('./e2e.js')
    ).runE2eAndReport({
      ...(proxies ? { proxies: Number(proxies) } : {}),
      ...(changes ? { changes: Number(changes) } : {}),
    });
    return;
  }
  if (process.argv.includes('--relay-stalled')) {
    await (await import('./relay-stalled.js')).runStalledBench();
    return;
  }

  const sizes = (argValue('--sizes')?.split(',').map(Number) ?? DEFAULT_SIZES).filter(
    (n) => Number.isInteger(n) && n > 0,
  );
  const results: (SizeResult | { services: number; error: string })[] = [];
  let failed: number | undefined;
  for (const n of sizes) {
    if (failed !== undefined) {
      results.push({ services: n, error: `skipped: ${failed} services already failed` });
      continue;
    }
    process.stderr.write(`bench: ${n} services…\n`);
    const r = runSize(n);
    results.push(r);
    if ('error' in r) failed = n;
  }
  process.stdout.write(formatTable(results) + '\n');
  const dir = join(process.cwd(), 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'compile.json');
  writeFileSync(
    file,
    JSON.stringify(
      { node: process.version, platform: `${process.platform}/${process.arch}`, targets: TARGETS, results },
      null,
      2,
    ) + '\n',
  );
  process.stderr.write(`bench: wrote ${file}\n`);
  // The relay benchmark (bench/relay.ts): streams held, RSS per stream, switch time → bench-results/relay.json.
  await (await import('./relay.js')).runRelayBench();
  // Healthy streams' switch time with 300 stalled readers connected (bench/relay-stalled.ts).
  await (await import('./relay-stalled.js')).runStalledBench();
}

await main();
