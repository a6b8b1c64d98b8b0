/**
 * The GitOps revision of `compile`'s inputs: `--source-revision`/`--source-url`, else the git
 * commit of the first input when it lies in a git work tree (dirty when `git status --porcelain`
 * lists changes there). The CLI edge only: the API and the functions take it from the request.
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { VersionSource } from '../snapshot/manifest.js';

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-C', cwd, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: 10_000,
  }).trim();

export function sourceOf(
  inputs: readonly string[],
  revision: string | undefined,
  url: string | undefined,
): VersionSource | undefined {
  if (revision !== undefined) return { revision, ...(url !== undefined ? { url } : {}) };
  const first = inputs[0];
  if (first === undefined) return undefined;
  const path = resolve(first);
  let dir: string;
  try {
    dir = statSync(path).isDirectory() ? path : dirname(path);
  } catch {
    return undefined;
  }
  try {
    const head = git(dir, 'rev-parse', 'HEAD');
    const dirty = git(dir, 'status', '--porcelain', '--', '.') !== '';
    let remote = url;
    if (remote === undefined) {
      try {
        remote = git(dir, 'config', '--get', 'remote.origin.url') || undefined;
      } catch {
        remote = undefined; // no remote
      }
    }
    return { revision: head, ...(remote !== undefined ? { url: remote } : {}), ...(dirty ? { dirty: true } : {}) };
  } catch {
    return undefined; // not a git work tree, or no git
  }
}
