/**
 * Golden files: compare a value with `test/golden/<case>/expected/<name>.json`, or rewrite the file
 * when UPDATE_GOLDEN=1. A rewritten golden must be reviewed by hand before it is committed.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const UPDATE = process.env.UPDATE_GOLDEN === '1';

export function assertGolden(file: string, actual: unknown): void {
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (UPDATE) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return;
  }
  assert.ok(existsSync(file), `golden file ${file} is missing: run the tests with UPDATE_GOLDEN=1, review, commit`);
  const expected = readFileSync(file, 'utf8');
  if (expected !== text) {
    assert.deepEqual(JSON.parse(text), JSON.parse(expected), `output differs from ${file} (UPDATE_GOLDEN=1 rewrites it)`);
    assert.equal(text, expected, `output differs from ${file} in formatting/order`);
  }
}
