import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDocuments, MAX_DEPTH } from '../../src/inputs/parse.js';

test('multi-document YAML: separators, empty documents skipped, indexes kept', () => {
  const text = 'a: 1\n---\n---\n# only a comment\n---\nb: 2\n';
  const { docs, diagnostics } = parseDocuments(text, 'f.yaml');
  assert.deepEqual(diagnostics, []);
  assert.deepEqual(
    docs.map((d) => [d.index, d.object]),
    [
      [0, { a: 1 }],
      [3, { b: 2 }],
    ],
  );
  assert.ok(docs.every((d) => d.file === 'f.yaml'));
});

test('JSON documents and List kinds are expanded', () => {
  const json = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ kind: 'Service' }, { kind: 'Pod' }] });
  const { docs } = parseDocuments(json, 'l.json');
  assert.deepEqual(
    docs.map((d) => [d.index, d.object['kind']]),
    [
      [0, 'Service'],
      [0, 'Pod'],
    ],
  );
  const yaml = parseDocuments('kind: ServiceList\nitems:\n- kind: Service\n- 3\n', 'l.yaml');
  assert.equal(yaml.docs.length, 1);
  assert.equal(yaml.diagnostics.length, 1);
  assert.equal(yaml.diagnostics[0]?.code, 'parse-error');
});

test('a syntax error is reported with file and index and the other documents survive', () => {
  const text = 'a: 1\n---\nb: [1, 2\n---\nc: 3\n';
  const { docs, diagnostics } = parseDocuments(text, 'bad.yaml');
  assert.deepEqual(
    docs.map((d) => d.object),
    [{ a: 1 }, { c: 3 }],
  );
  assert.equal(diagnostics.length, 1);
  assert.deepEqual(
    { ...diagnostics[0], message: undefined },
    { severity: 'error', code: 'parse-error', file: 'bad.yaml', index: 1, message: undefined },
  );
});

test('non-object documents are reported', () => {
  const { docs, diagnostics } = parseDocuments('just a string\n---\n- 1\n- 2\n---\n42\n', 'x.yaml');
  assert.equal(docs.length, 0);
  assert.deepEqual(
    diagnostics.map((d) => d.index),
    [0, 1, 2],
  );
  assert.ok(diagnostics.every((d) => d.code === 'parse-error'));
});

test('YAML alias bombs are refused without expanding them', () => {
  const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
  for (let i = 0; i < 12; i++)
    lines.push(
      `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`,
    );
  // Expanding it would never finish: the test's own time limit is the guard.
  const { docs, diagnostics } = parseDocuments(lines.join('\n'), 'bomb.yaml');
  assert.equal(docs.length, 0);
  assert.equal(diagnostics[0]?.code, 'parse-error');
});

test('absurdly deep documents are refused, in YAML and JSON, without throwing', () => {
  const deepYaml = `a: ${'['.repeat(MAX_DEPTH + 5)}${']'.repeat(MAX_DEPTH + 5)}`;
  assert.equal(parseDocuments(deepYaml, 'd.yaml').diagnostics[0]?.code, 'parse-error');
  const deepJson = `{"a":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
  const r = parseDocuments(deepJson, 'd.json');
  assert.equal(r.docs.length, 0);
  assert.equal(r.diagnostics[0]?.code, 'parse-error');
  // Deep but legitimate nesting is fine.
  assert.equal(parseDocuments(`a: ${'['.repeat(20)}${']'.repeat(20)}`, 'ok.yaml').docs.length, 1);
});

test('one walk bounds a document: depth at exactly the limit, depth before size, a List per item', () => {
  const nested = (levels: number): string => `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
  assert.equal(parseDocuments(nested(MAX_DEPTH), 'd.json').docs.length, 1);
  assert.match(parseDocuments(nested(MAX_DEPTH + 1), 'd.json').diagnostics[0]?.message ?? '', /nested deeper/);
  // Both too large and too deep: the depth is what is reported.
  const both = JSON.stringify({ kind: 'ConfigMap', data: { x: 'x'.repeat(1_600_000) } }).slice(0, -1);
  const deepAndLarge = parseDocuments(
    `${both},"y":${'['.repeat(MAX_DEPTH + 1)}${']'.repeat(MAX_DEPTH + 1)}}`,
    'b.json',
  );
  assert.deepEqual(
    deepAndLarge.diagnostics.map((d) => d.code),
    ['parse-error'],
  );
  // A List over the bound whose items are each within it is fine; an item over it is refused alone.
  const item = (name: string, bytes: number): object => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default' },
    data: { x: 'x'.repeat(bytes) },
  });
  const list = (items: object[]): string => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
  assert.equal(parseDocuments(list([item('a', 1_000_000), item('b', 1_000_000)]), 'l.json').docs.length, 2);
  const one = parseDocuments(list([item('a', 1_000_000), item('b', 1_600_000)]), 'l.json');
  assert.deepEqual(
    one.docs.map((d) => (d.object['metadata'] as { name: string }).name),
    ['a'],
  );
  assert.deepEqual(
    one.diagnostics.map((d) => [d.code, d.name]),
    [['too-large', 'b']],
  );
});

test('duplicate keys are a parse error; __proto__ stays a plain key', () => {
  assert.equal(parseDocuments('a: 1\na: 2\n', 'dup.yaml').diagnostics[0]?.code, 'parse-error');
  const { docs } = parseDocuments('__proto__:\n  polluted: true\n', 'p.yaml');
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  assert.equal(docs.length, 1);
});
