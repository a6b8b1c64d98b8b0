/**
 * `npm run bench`: compiles synthetic meshes of 1k, 5k and 10k services, each in a fresh child
 * process (so peak memory is per size), prints a Markdown table beside the targets and writes
 * bench-results/compile.json.
 *
 *   node --expose-gc dist/bench/run.js [--sizes 1000,5000] [--no-yaml] [--child N]
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatTable, TARGETS } from './report.js';
import type { SizeResult } from './measure.js';

const DEFAULT_SIZES = [1000, 5000, 10000];
const CHILD_TIMEOUT_MS = 120_000;

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const yaml = !process.argv.includes('--no-yaml');

async function child(services: number): Promise<void> {
  const { measureSize } = await import('./measure.js');
  process.stdout.write(JSON.stringify(measureSize(services, { yaml })) + '\n');
}

function runSize(services: number): SizeResult | { services: number; error: string } {
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(process.execPath, ['--expose-gc', self, '--child', String(services), ...(yaml ? [] : ['--no-yaml'])], { encoding: 'utf8', timeout: CHILD_TIMEOUT_MS, maxBuffer: 16 << 20 });
  const line = r.stdout?.trim().split('\n').pop();
  if (r.status !== 0 || !line) return { services, error: (r.error?.message ?? r.stderr?.trim().split('\n').slice(-5).join(' | ')) || `exit ${r.status}` };
  return JSON.parse(line) as SizeResult;
}

async function main(): Promise<void> {
  const childSize = argValue('--child');
  if (childSize) return child(Number(childSize));

  const sizes = (argValue('--sizes')?.split(',').map(Number) ?? DEFAULT_SIZES).filter((n) => Number.isInteger(n) && n > 0);
  const results: (SizeResult | { services: number; error: string })[] = [];
  for (const n of sizes) {
    process.stderr.write(`bench: ${n} services…\n`);
    results.push(runSize(n));
  }
  process.stdout.write(formatTable(results) + '\n');
  const dir = join(process.cwd(), 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'compile.json');
  writeFileSync(file, JSON.stringify({ node: process.version, platform: `${process.platform}/${process.arch}`, targets: TARGETS, results }, null, 2) + '\n');
  process.stderr.write(`bench: wrote ${file}\n`);
}

await main();
