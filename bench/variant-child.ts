/**
 * Runs a variant bench module in a fresh process (so its peak RSS is its own): `node --expose-gc
 * <module> --child <services> <flag>`, whose last stdout line is the JSON result.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export function variantInChild<T>(moduleUrl: string, what: string, services: number, flag: boolean | string): T {
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', '--max-old-space-size=3072', fileURLToPath(moduleUrl), '--child', String(services), String(flag)],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !line.startsWith('{'))
    throw new Error(`${what} bench child ${services}: ${r.stderr.trim().slice(-500)}`);
  return JSON.parse(line) as T;
}
