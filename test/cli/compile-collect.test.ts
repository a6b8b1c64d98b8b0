/**
 * `meshsnap compile` runs a full collection once the compile's result is counted, before the
 * publish stores anything (src/cli/commands/compile.ts): the publish starts from the live data.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseCommand } from '../../src/cli/args.js';
import { compileAndPublish } from '../../src/cli/commands/compile.js';
import { compileSpec } from '../../src/cli/specs/compile.js';
import { openStore } from '../../src/cli/store.js';
import { compileTexts, compileTextsToPublish } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { BOOKINFO_STATE } from '../helpers/paths.js';

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-compile-collect-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** The JSON lines `run` prints on stdout (the CLI's result line), kept here instead of printed. */
async function printedBy(run: () => Promise<number>): Promise<{ code: number; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const write = process.stdout.write.bind(process.stdout);
  // The test runner writes its own (binary) reports to stdout meanwhile: those pass through.
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: never[]): boolean => {
    if (typeof chunk !== 'string' || !chunk.startsWith('{')) return write(chunk, ...rest);
    lines.push(JSON.parse(chunk) as Record<string, unknown>);
    return true;
  }) as typeof process.stdout.write;
  try {
    return { code: await run(), lines };
  } finally {
    process.stdout.write = write;
  }
}

test('meshsnap compile collects once before the publish stores anything, and publishes the same snapshot', async () => {
  const dir = join(tmp, 'store');
  const files = [{ file: BOOKINFO_STATE, text: readFileSync(BOOKINFO_STATE, 'utf8') }];
  const expected = compileTexts(files, { hasher: nodeSha256Hex }).snapshot.digest;
  const { values, positionals } = parseCommand(compileSpec, [BOOKINFO_STATE, '--store', dir, '--quiet']);
  const storedAtCollection: number[] = [];
  const collect = (): void => {
    storedAtCollection.push(existsSync(dir) ? readdirSync(dir, { recursive: true }).length : 0);
  };
  const result = compileTextsToPublish(files, { hasher: nodeSha256Hex });
  const { code, lines } = await printedBy(() =>
    compileAndPublish(result, openStore(dir), values.channel, values, positionals, collect),
  );
  assert.equal(code, 0);
  assert.deepEqual(storedAtCollection, [0], 'one collection, with nothing stored yet');
  assert.equal(lines.length, 1);
  assert.equal(lines[0]?.status, 'published');
  assert.equal(lines[0]?.digest, expected);
  assert.ok(readdirSync(dir, { recursive: true }).length > 0, 'then the publish stored the version');
});
