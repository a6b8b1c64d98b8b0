/** Paths tests use: the repo (source, not dist) and the owners' shared fixtures beside it. */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRepoRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`package.json not found above ${start}`);
    dir = up;
  }
  return dir;
}

export const REPO = findRepoRoot(dirname(fileURLToPath(import.meta.url)));
export const FIXTURES = join(REPO, '..', 'shared', 'fixtures');
export const ISTIO_SAMPLES = join(FIXTURES, 'istio', 'samples');
export const BOOKINFO_STATE = join(FIXTURES, 'derived', 'bookinfo-cluster-state.yaml');
export const EXAMPLES = join(REPO, 'examples');
/** The CLI entry point (it loads the compiled dist/src/cli/main.js). */
export const BIN = join(REPO, 'bin', 'meshsnap.js');

/** The YAML files under `dir` (none when it does not exist), at any depth. */
export function yamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => /\.ya?ml$/.test(f))
    .map((f) => join(dir, f));
}

/** Every YAML file of the shared fixtures, the examples and the golden cases: real inputs of every shape. */
export const allYamlInputs = (): string[] => [
  ...yamlFiles(FIXTURES),
  ...yamlFiles(EXAMPLES),
  ...yamlFiles(join(REPO, 'test', 'golden')),
];
