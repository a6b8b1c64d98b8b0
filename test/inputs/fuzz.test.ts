/**
 * Fuzz: seeded random mutations of the bookinfo documents (dropped fields, swapped types, random
 * strings, deep nesting, huge numbers, nulls, arrays for objects, garbage YAML). Parsing,
 * validation and the service model must never throw, and must finish quickly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { Diagnostics } from '../../src/model/diagnostics.js';
import { buildInputSet } from '../../src/inputs/load.js';
import { parseDocuments, type RawDocument } from '../../src/inputs/parse.js';
import { buildServiceModel } from '../../src/model/build.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';
import { mulberry32, pick, type Rand } from './prng.js';

const NETWORKING = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const SOURCES = [
  BOOKINFO_STATE,
  join(NETWORKING, 'destination-rule-all.yaml'),
  join(NETWORKING, 'virtual-service-reviews-jason-v2-v3.yaml'),
  join(NETWORKING, 'virtual-service-ratings-test-abort.yaml'),
];
const BASE: RawDocument[] = SOURCES.flatMap((f) => parseDocuments(readFileSync(f, 'utf8'), f).docs);

const STRANGE: unknown[] = [
  null,
  '',
  'x',
  -1,
  0,
  1e308,
  -1e308,
  2 ** 64,
  0.5,
  true,
  [],
  {},
  [1, 'a'],
  { a: { b: {} } },
  '__proto__',
  'a(?=b)',
  '(',
  '1s',
  '99999h',
  'None',
  'constructor',
];

function randomValue(rand: Rand, depth = 0): unknown {
  const r = rand();
  if (r < 0.5 || depth > 3) return pick(rand, STRANGE);
  if (r < 0.6) return Math.floor(rand() * 200_000) - 100;
  if (r < 0.7)
    return String.fromCharCode(...Array.from({ length: Math.floor(rand() * 12) }, () => 32 + Math.floor(rand() * 95)));
  if (r < 0.8) {
    let v: unknown = 'deep';
    for (let i = 0, n = Math.floor(rand() * 40); i < n; i++) v = rand() < 0.5 ? [v] : { k: v };
    return v;
  }
  if (r < 0.9) return [randomValue(rand, depth + 1), randomValue(rand, depth + 1)];
  return { [pick(rand, ['name', 'host', 'port', 'weight', 'regex', 'zz'])]: randomValue(rand, depth + 1) };
}

/** Replaces, drops or wraps one random node of a deep copy. */
function mutate(value: unknown, rand: Rand): unknown {
  const copy = structuredClone(value);
  const steps = 1 + Math.floor(rand() * 4);
  for (let s = 0; s < steps; s++) {
    let node: unknown = copy;
    for (let d = 0; d < 12; d++) {
      if (node === null || typeof node !== 'object') break;
      const keys = Object.keys(node);
      if (keys.length === 0) break;
      const key = pick(rand, keys);
      const child = (node as Record<string, unknown>)[key];
      if (rand() < 0.3 || child === null || typeof child !== 'object') {
        const op = rand();
        if (op < 0.25) delete (node as Record<string, unknown>)[key];
        else if (op < 0.4) (node as Record<string, unknown>)[key] = Array.isArray(child) ? { ...child } : [child];
        else (node as Record<string, unknown>)[key] = randomValue(rand);
        break;
      }
      node = child;
    }
  }
  return copy;
}

function garbleText(text: string, rand: Rand): string {
  const chars = [...text];
  for (let i = 0, n = 1 + Math.floor(rand() * 6); i < n; i++) {
    const at = Math.floor(rand() * chars.length);
    chars.splice(
      at,
      rand() < 0.5 ? 1 : 0,
      pick(rand, [':', '-', '[', '{', '"', '&a', '*a', '\t', '\n', '---\n', ' ', '!!binary ', '? ']),
    );
  }
  return chars.join('');
}

test('fuzz: parse + buildInputSet + buildServiceModel never throw', (t) => {
  const rand = mulberry32(20240601);
  // A fixed number of seeded cases: the same inputs on every machine, however fast (no time budget).
  const CASES = 1500;
  let cases = 0;
  let invalid = 0;
  while (cases < CASES) {
    cases++;
    const docs = BASE.map((d) =>
      rand() < 0.06 ? { ...d, object: mutate(d.object, rand) as RawDocument['object'] } : d,
    );
    let parsedDocs: RawDocument[] = docs;
    if (rand() < 0.25) {
      // Through the text path: YAML out, maybe garbled, parsed back.
      // A few documents only: the YAML library is slow, and text-level garbage needs no volume.
      const some = [pick(rand, docs), pick(rand, docs), pick(rand, docs)];
      const text = some.map((d) => stringify(d.object)).join('---\n');
      parsedDocs = [...docs, ...parseDocuments(rand() < 0.7 ? garbleText(text, rand) : text, 'fuzz.yaml').docs];
    }
    const inputs = buildInputSet(parsedDocs);
    if (inputs.diagnostics.some((d) => d.severity === 'error')) invalid++;
    const model = buildServiceModel(inputs, new Diagnostics());
    assert.ok(Array.isArray(model.services));
  }
  t.diagnostic(`${cases} cases, ${invalid} with errors`);
  // The mutations must actually hit validation, or this test proves nothing.
  assert.ok(invalid > cases / 4 && invalid < cases, `${invalid} of ${cases} cases were invalid`);
});
