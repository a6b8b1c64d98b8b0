/**
 * The YAML fast path (src/inputs/yaml-fast.ts) against the `yaml` library: whatever it reads, it
 * reads exactly as the library does (values and document indices, empty documents included), for
 * every YAML file of the fixtures and examples, the synthetic mesh and crafted texts; whatever it
 * does not handle (anchors, block scalars, duplicate keys, errors…) goes to the library, so the
 * diagnostics are the library's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { queryObjects } from 'node:v8';
import { stringify } from 'yaml';
import { generateMesh, toYaml } from '../../bench/synthetic.js';
import { INPUT_LIMITS } from '../../src/inputs/limits.js';
import { parseDocuments, parseYaml } from '../../src/inputs/parse.js';
import { parseYamlFast } from '../../src/inputs/yaml-fast.js';
import { allYamlInputs } from '../helpers/paths.js';

const fast = (text: string): unknown[] | undefined => parseYamlFast(text, INPUT_LIMITS.maxObjectBytes);

/** The library's values; undefined when it reported a problem. */
function library(text: string): unknown[] | undefined {
  const diagnostics: unknown[] = [];
  const values = parseYaml(text, 'x.yaml', diagnostics as never[]);
  return diagnostics.length > 0 ? undefined : values;
}

/** Either the fast path hands the text back, or it gives exactly the library's values. */
function agrees(text: string, label: string): boolean {
  const got = fast(text);
  if (got === undefined) return false;
  const want = library(text);
  assert.ok(want, `${label}: the fast path read a text the library refuses`);
  assert.deepStrictEqual(got, want, label);
  return true;
}

test('every YAML file of the fixtures, examples and golden cases: the same values as the library', () => {
  const files = allYamlInputs();
  let handled = 0;
  for (const f of files) if (agrees(readFileSync(f, 'utf8'), f)) handled++;
  assert.ok(files.length > 20, `${files.length} files`);
  assert.ok(handled > files.length / 3, `fast path took ${handled} of ${files.length} files`);
});

test('the synthetic mesh: all of it on the fast path, the same values as the library', () => {
  const text = toYaml(generateMesh({ services: 150 }).docs);
  assert.ok(agrees(text, 'synthetic'), 'the synthetic mesh left the fast path');
});

const HANDLED = [
  '',
  '# only a comment\n',
  'a: 1\n---\n',
  '# c\n---\na: 1\n--- # x\nb: 2\n',
  '\n\n---\n\n---\na: 1',
  '---\na: 1\n---\n---\nb: 2\n',
  'a:\r\n  b: c\r\n',
  'a:\n- 1\n- x\n-\nb: 1_000\nh: 1.0\nj: -1\nk: 0.25\n',
  'a: "x\\u00e9\\ty \\"q\\" # not a comment"\nb: \'it\'\'s # neither\'\nc: a#b\nd: a #b\ne: [a, b, 3]\nf: {}\ng: []\nh: ~\ni: null\nj: Yes\nk: on\nl: 2020-01-01\n',
  'spec:\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n  -   name: grpc\n      port: 81\n  selector:\n    app: x\n',
  'list:\n  - a\n  - b: 1\n    c:\n      - d\n  -\n    e: f\n',
  '"quoted key": 1\n\'single\': 2\nkey with spaces: three words here\nurl: http://example.com:8080/x\nip: 10.0.0.1\nver: 1.2.3\nneg: -0.5\n',
  'a: true\nb: False\nc: NULL\nd: ~\ne:\nf: "true"\ng: \'1\'\n',
  'top scalar\n',
  '- a\n- b\n',
  '__proto__: 1\nx: 2\n',
];

const LEFT_TO_LIBRARY = [
  'a: &x 1\nb: *x\n',
  'a: |\n  text\n',
  'a: >\n  folded\n',
  'a: !!str 1\n',
  'a: 1\na: 2\n',
  'a: b\n  c\n',
  'a: [1, [2]]\n',
  'a: {b: 1}\n',
  '<<: {a: 1}\n',
  '? complex\n: key\n',
  '%YAML 1.2\n---\na: 1\n',
  'a: 1\n...\n',
  '--- a: 1\n',
  'a:\n\t- b\n',
  '\ufeffa: 1\n',
  'a: .inf\nb: 1e5\n',
  'true: 1\n',
  '8080: http\n',
  'a: "\\x41"\n',
  'a: b: c\n',
  'a: "unterminated\n',
  '- - a\n',
  'a:\n  - b\n c: d\n',
  'a: -0\n',
  'b: 0x1F\nc: 012\nd: +5\ne: 1e3\nf: .5\ng: 12345678901234567890\n',
];

test('crafted texts: the fast path gives the library values where it reads them, and hands the rest back', () => {
  for (const text of HANDLED) assert.ok(agrees(text, JSON.stringify(text)), `not handled: ${JSON.stringify(text)}`);
  for (const text of LEFT_TO_LIBRARY) assert.equal(fast(text), undefined, `handled: ${JSON.stringify(text)}`);
});

test('objects written by the yaml library round-trip through the fast path', () => {
  const objects = [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', labels: { 'app.kubernetes.io/name': 'x' } } },
    { a: [{ b: [1, 2, { c: null }] }, [], {}], d: 'multi word : string', e: '#hash', f: "it's", g: '' },
    { nested: { deeper: { list: ['- dash', 'x: y', '[b]', '{c}', '@at', '`tick`', '*star', '&amp'] } } },
    { numbers: ['1', '1.5', '0x10', '.5', '1e3', 'NaN', '.nan'], bools: ['true', 'no', 'off'] },
  ];
  for (const o of objects) {
    const text = stringify(o);
    const got = fast(text);
    if (got !== undefined) assert.deepStrictEqual(got, [o], text);
    assert.deepStrictEqual(library(text), [o], text);
  }
});

test("parseDocuments: errors and limits are still the library's diagnostics", () => {
  const bad = parseDocuments('a: 1\n---\nb: [\n---\nc: 3\n', 'f.yaml');
  assert.deepEqual(
    bad.docs.map((d) => [d.index, d.object]),
    [
      [0, { a: 1 }],
      [2, { c: 3 }],
    ],
  );
  assert.equal(bad.diagnostics.length, 1);
  assert.equal(bad.diagnostics[0]?.index, 1);
  assert.equal(bad.diagnostics[0]?.file, 'f.yaml');
  const dup = parseDocuments('a: 1\na: 2\n', 'd.yaml');
  assert.equal(dup.docs.length, 0);
  assert.match(dup.diagnostics[0]?.message ?? '', /YAML syntax error/);
  const big = 'a: ' + 'x'.repeat(INPUT_LIMITS.maxObjectBytes + 10) + '\n';
  assert.equal(fast(big), undefined);
  assert.equal(parseDocuments(big, 'big.yaml').diagnostics[0]?.code, 'too-large');
});

/** The values of a text padded with a 24 MB comment line: plain, quoted and flow values of 13 characters or more. */
function valuesOfLargeText(): unknown[] {
  const text = `a: plain-value-of-some-length\nb: "quoted-value-of-some-length"\nc: [flow-value-of-some-length, x]\n#${'x'.repeat(24 << 20)}\n`;
  const docs = parseYamlFast(text, Infinity);
  assert.ok(docs);
  return docs;
}

test('values read by the fast path do not keep the text alive (V8 makes a long substring a view of the text)', () => {
  queryObjects(Object, { format: 'count' }); // runs a full collection
  const before = process.memoryUsage().heapUsed;
  const kept = valuesOfLargeText();
  queryObjects(Object, { format: 'count' });
  const grown = process.memoryUsage().heapUsed - before;
  assert.deepEqual(kept, [
    { a: 'plain-value-of-some-length', b: 'quoted-value-of-some-length', c: ['flow-value-of-some-length', 'x'] },
  ]);
  assert.ok(grown < 8 << 20, `${(grown / 2 ** 20).toFixed(1)} MB kept by three values`);
});
