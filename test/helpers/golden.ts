/**
 * Golden files: compare a value with a JSON file, or rewrite the file when UPDATE_GOLDEN=1. A
 * rewritten golden must be reviewed by hand before it is committed.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

export const UPDATE = process.env.UPDATE_GOLDEN === '1';

const REGENERATE =
  'run the tests with UPDATE_GOLDEN=1 (e.g. `UPDATE_GOLDEN=1 node scripts/run-tests.mjs test/golden/`), review the diff, commit';

export function assertGolden(file: string, actual: unknown): void {
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (UPDATE) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return;
  }
  assert.ok(existsSync(file), `golden file ${file} is missing: ${REGENERATE}`);
  const expected = readFileSync(file, 'utf8');
  if (expected !== text) {
    assert.deepEqual(
      JSON.parse(text),
      JSON.parse(expected),
      `output differs from ${file} (UPDATE_GOLDEN=1 rewrites it)`,
    );
    assert.equal(text, expected, `output differs from ${file} in formatting/order`);
  }
}

/** Every file under `dir`, as paths relative to it, sorted. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

function removeEmptyFolders(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const sub = join(dir, e.name);
    removeEmptyFolders(sub);
    if (readdirSync(sub).length === 0) rmdirSync(sub);
  }
}

/**
 * A folder of golden files that a test owns entirely: `check` compares one file, `finish` then
 * deals with files no check named (a node or type no longer asked for, a leftover of an older
 * layout). With UPDATE_GOLDEN=1 they are deleted; otherwise they fail the test, since a stale
 * golden file reads as if it were still checked.
 */
export class GoldenFolder {
  private readonly checked = new Set<string>();

  constructor(readonly dir: string) {}

  /** Compares `actual` with `<dir>/<path>` (a relative path with `/` separators). */
  check(path: string, actual: unknown): void {
    this.checked.add(join(path));
    assertGolden(join(this.dir, path), actual);
  }

  finish(): void {
    const stale = filesUnder(this.dir).filter((f) => !this.checked.has(f));
    if (UPDATE) {
      for (const f of stale) rmSync(join(this.dir, f));
      if (existsSync(this.dir)) removeEmptyFolders(this.dir);
      return;
    }
    assert.deepEqual(
      stale,
      [],
      `${this.dir} holds golden files the test no longer produces: ${REGENERATE} (it removes them)`,
    );
  }
}
