/**
 * The allowed imports between folders (eslint.architecture.js, README: Architecture): lint rejects
 * a forbidden import, accepts an allowed one, and the relay does not load the compiler at runtime.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';

const root = join(import.meta.dirname, '..', '..', '..');
const eslint = new ESLint({ cwd: root });

/** The rule ids lint reports for `code` written at `file` (a path inside the repository; the file need not exist). */
async function violations(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

const restricted = (messages: string[]): string[] => messages.filter((m) => m.startsWith('no-restricted-imports'));

test('lint rejects imports against the direction of the layers', { timeout: 60_000 }, async () => {
  const forbidden: [file: string, code: string][] = [
    ['src/relay/probe.ts', "import { compile } from '../compile/index.js';\nexport const x = compile;\n"],
    ['src/relay/xds/probe.ts', "import type { InputSet } from '../../model/inputs.js';\nexport type X = InputSet;\n"],
    ['src/relay/probe.ts', "import { parseDocuments } from '../inputs/parse.js';\nexport const x = parseDocuments;\n"],
    [
      'src/compile/probe.ts',
      "import { snapshotDigest } from '../snapshot/build.js';\nexport const x = snapshotDigest;\n",
    ],
    [
      'src/compile/route/probe.ts',
      "import type { SnapshotStore } from '../../snapshot/store/store.js';\nexport type X = SnapshotStore;\n",
    ],
    ['src/model/probe.ts', "import { parseDocuments } from '../inputs/parse.js';\nexport const x = parseDocuments;\n"],
    ['src/model/probe.ts', "export { storedObject } from '../snapshot/stored-inputs/index.js';\n"],
    ['src/snapshot/probe.ts', "import { putTree } from './store/put-tree.js';\nexport const x = putTree;\n"],
    ['functions/shared/probe.ts', "import { main } from '../../src/cli/main.js';\nexport const x = main;\n"],
  ];
  for (const [file, code] of forbidden)
    assert.equal(restricted(await violations(file, code)).length, 1, `${file}: ${code}`);
});

test('lint accepts imports along the direction of the layers', { timeout: 60_000 }, async () => {
  const allowed: [file: string, code: string][] = [
    [
      'src/snapshot/probe.ts',
      "import type { CompileOutput } from '../compile/types.js';\nexport type X = CompileOutput;\n",
    ],
    [
      'src/relay/snapshot/probe.ts',
      "import { classifyNode } from '../../snapshot/classify.js';\nexport const x = classifyNode;\n",
    ],
    [
      'src/compile/probe.ts',
      "import { sidecarClassId } from '../proxy-class/class-id.js';\nexport const x = sidecarClassId;\n",
    ],
    ['src/inputs/probe.ts', "import { canonicalJson } from '../canonical-json.js';\nexport const x = canonicalJson;\n"],
    [
      'src/snapshot/stored-inputs/probe.ts',
      "import { putTree } from '../store/put-tree.js';\nexport const x = putTree;\n",
    ],
  ];
  for (const [file, code] of allowed) assert.deepEqual(await violations(file, code), [], `${file}: ${code}`);
});

test('the table of allowed imports has no cycle', async () => {
  type Table = Record<string, string[]>;
  const arch = (await import(pathToFileURL(join(root, 'eslint.architecture.js')).href)) as {
    ALLOWED: Table;
    assertAcyclic: (t: Table) => void;
  };
  assert.doesNotThrow(() => arch.assertAcyclic(arch.ALLOWED));
  assert.throws(() => arch.assertAcyclic({ ...arch.ALLOWED, model: ['compile'] }), /import cycle/);
});

/** Every compiled module the relay entry points load, following static imports of project files. */
function loadedBy(entries: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const pending = [...entries];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s(?:[^'"]*?\sfrom\s)?['"](\.{1,2}\/[^'"]+)['"]/gm)) {
      const target = resolve(dirname(file), m[1] as string);
      if (existsSync(target)) pending.push(target);
    }
  }
  return seen;
}

test('the relay loads no compiler, model or inputs module at runtime', () => {
  const dist = join(root, 'dist', 'src');
  const loaded = [...loadedBy([join(dist, 'relay', 'relay.js'), join(dist, 'cli', 'commands', 'relay.js')])].map((f) =>
    relative(dist, f),
  );
  assert.ok(loaded.includes(join('snapshot', 'classify.js')), 'the walk follows the relay into the snapshot layer');
  assert.deepEqual(
    loaded.filter((f) => /^(compile|model|inputs)\//.test(f)),
    [],
  );
});

test('meshsnap relay (and --help of any command) loads no compiler, model or inputs module: main.js imports only the option tables statically', () => {
  const dist = join(root, 'dist', 'src');
  const main = join(dist, 'cli', 'main.js');
  const compilerModules = (entries: string[]) =>
    [...loadedBy(entries)].map((f) => relative(dist, f)).filter((f) => /^(compile|model|inputs)\//.test(f));
  // The walk does see the compiler where it is imported: compile's implementation reaches it.
  assert.ok(compilerModules([join(dist, 'cli', 'commands', 'compile.js')]).some((f) => f.startsWith('compile/')));
  // main.js names every implementation only in a dynamic import, which runs when that command does.
  const text = readFileSync(main, 'utf8');
  for (const name of ['compile', 'relay', 'watch', 'serve', 'demo', 'verify', 'diff'])
    assert.ok(text.includes(`import('./commands/${name}.js')`), name);
  const loaded = [...loadedBy([main])].map((f) => relative(dist, f));
  assert.ok(
    loaded.includes(join('cli', 'specs', 'relay.js')) && loaded.includes(join('cli', 'specs', 'compile.js')),
    'the walk reaches the option tables',
  );
  assert.deepEqual(
    loaded.filter((f) => f.startsWith(join('cli', 'commands'))),
    [],
    'no command implementation is imported statically',
  );
  assert.deepEqual(compilerModules([main, join(dist, 'cli', 'commands', 'relay.js')]), []);
});
