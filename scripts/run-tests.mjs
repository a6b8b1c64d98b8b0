// Runs every compiled test file (dist/test/**/*.test.js) with Node's test runner.
// Each test is bounded in time (--test-timeout below); README.md, Tests, says what each folder covers.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', 'dist', 'test');
const files = [];
const walk = (dir) => {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.js')) files.push(p);
  }
};
walk(root);
const only = process.argv.slice(2);
const selected = only.length ? files.filter((f) => only.some((o) => f.includes(o))) : files;
if (selected.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const r = spawnSync(
  process.execPath,
  ['--test', '--test-timeout=300000', '--test-concurrency=2', '--test-reporter=spec', ...selected],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
