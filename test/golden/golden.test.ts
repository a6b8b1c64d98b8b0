/**
 * Golden tests for the compiler: every test/golden/<case>/case.json names its inputs and the nodes
 * to look at, and the xDS types to look at for each. The test compiles, then compares with
 * test/golden/<case>/expected/:
 *
 *   diagnostics.json          what parsing, validation and the compiler reported
 *   model.json                the model stage (test/helpers/model-projection.ts)
 *   <node>/<type>.json        what the node is served of one xDS type (listeners, routes,
 *                             clusters, endpoints), as config_dump JSON with one section
 *
 * `UPDATE_GOLDEN=1 npm test` rewrites them and removes expected files no longer produced (review
 * the diff). A missing or stale expected file fails the test.
 *
 * Input references: `fixtures:<path>` (../shared/fixtures), `examples:<path>`, `case:<path>`.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import type { XdsType } from '../../src/xds/type-urls.js';
import { GoldenFolder } from '../helpers/golden.js';
import { BOOKINFO_NODES, compilePaths, servedDump, type TestNode } from '../helpers/mesh.js';
import { projectModel } from '../helpers/model-projection.js';
import { EXAMPLES, FIXTURES, REPO } from '../helpers/paths.js';

interface CaseFile {
  readonly description: string;
  readonly inputs: readonly string[];
  readonly nodes: readonly { name: string; node: keyof typeof BOOKINFO_NODES | TestNode; types: XdsType[] }[];
}

const GOLDEN = join(REPO, 'test', 'golden');
const cases = readdirSync(GOLDEN)
  .filter((d) => existsSync(join(GOLDEN, d, 'case.json')))
  .sort();

function resolveInput(ref: string, caseDir: string): string {
  const [scheme, ...rest] = ref.split(':');
  const path = rest.join(':');
  if (scheme === 'fixtures') return join(FIXTURES, path);
  if (scheme === 'examples') return join(EXAMPLES, path);
  if (scheme === 'case') return join(caseDir, path);
  throw new Error(`bad input reference ${ref}`);
}

/** File paths in diagnostics, made independent of where the repo is checked out. */
function portable(d: Diagnostic): Diagnostic {
  if (d.file === undefined) return d;
  const local = (text: string) =>
    text
      .split(FIXTURES)
      .join('fixtures:')
      .split(join(REPO, 'test', 'golden'))
      .join('golden:')
      .split(EXAMPLES)
      .join('examples:');
  return { ...d, file: local(d.file), message: local(d.message) };
}

for (const name of cases) {
  const dir = join(GOLDEN, name);
  const spec = JSON.parse(readFileSync(join(dir, 'case.json'), 'utf8')) as CaseFile;
  test(`golden ${name}`, async () => {
    const result = await compilePaths(spec.inputs.map((i) => resolveInput(i, dir)));
    const expected = new GoldenFolder(join(dir, 'expected'));
    expected.check('diagnostics.json', result.diagnostics.map(portable));
    expected.check('model.json', projectModel(result.inputs));
    for (const n of spec.nodes) {
      const node = typeof n.node === 'string' ? BOOKINFO_NODES[n.node] : n.node;
      assert.ok(node, `unknown node ${String(n.node)}`);
      for (const type of new Set(n.types)) {
        const { classId, dump } = servedDump(result, node, [type]);
        expected.check(`${n.name}/${type}.json`, { class: classId, ...dump });
      }
    }
    expected.finish();
  });
}
