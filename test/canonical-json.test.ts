/**
 * canonicalJson is the text behind every digest: its output must never change. Checked against
 * the reference it replaced (arrays mapped and joined) on varied values, holes and `undefined`
 * members included, and against JSON.parse for plain values.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalJson, canonicalJsonBytes } from '../src/canonical-json.js';

function reference(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null';
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'object': {
      if (v === null) return 'null';
      if (Array.isArray(v)) return `[${v.map((x) => reference(x) ?? 'null').join(',')}]`;
      const o = v as Record<string, unknown>;
      const parts: string[] = [];
      for (const k of Object.keys(o).sort()) {
        const x = reference(o[k]);
        if (x !== undefined) parts.push(`${JSON.stringify(k)}:${x}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      return undefined;
  }
}

test('canonicalJson writes exactly what the reference wrote', () => {
  // eslint-disable-next-line no-sparse-arrays
  const sparse = [1, , 3];
  const values: unknown[] = [
    null,
    0,
    -0,
    1.5e300,
    NaN,
    Infinity,
    'é "quoted" \n \u2028 🚀',
    true,
    12345678901234567890n,
    [],
    {},
    sparse,
    [undefined, () => 1, Symbol('s'), null],
    { b: 1, a: [{ z: undefined, y: 'x' }], é: { '': 0 }, B: false, fn: () => 1 },
    Object.assign(Object.create(null) as object, { __proto__: 1, k: [sparse, { n: null }] }),
    { deep: { deeper: { deepest: [[[]], [{}], 'x'] } } },
  ];
  for (const v of values) assert.equal(canonicalJson(v), reference(v) ?? 'null', String(reference(v)));
  assert.equal(canonicalJson({ b: [1, { d: 2, c: 'x' }], a: 'y' }), '{"a":"y","b":[1,{"c":"x","d":2}]}');
});

test('canonicalJson orders keys by UTF-16 code units, as sort() does, for few keys and many', () => {
  let seed = 7;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const alphabet = ['a', 'B', 'z', '_', '-', '0', '9', 'é', 'Ω', '中', '\u{1F600}', '\uFFFF', 'aa', ''];
  for (const size of [0, 1, 2, 3, 5, 8, 16, 31, 32, 33, 40, 100]) {
    for (let round = 0; round < 20; round++) {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < size; i++) {
        let k = '';
        for (let n = 1 + Math.floor(next() * 4); n > 0; n--) k += alphabet[Math.floor(next() * alphabet.length)];
        o[k] = i;
      }
      assert.equal(canonicalJson(o), reference(o));
    }
  }
});

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

test('canonicalJsonBytes is the UTF-8 of canonicalJson, byte for byte', () => {
  // eslint-disable-next-line no-sparse-arrays
  const sparse = [1, , 3];
  const big = { list: Array.from({ length: 30_000 }, (_, i) => ({ name: `svc-${i}`, port: i, é: 'ünïcode' })) };
  const values: unknown[] = [
    undefined,
    () => 1,
    null,
    0,
    -0,
    1.5e300,
    -1e-7,
    NaN,
    -Infinity,
    '',
    'plain ascii ~!',
    // From 16 code units, plain ones are copied natively: every boundary of what counts as plain.
    'fifteen chars ~!'.slice(1),
    'sixteen chars ~!',
    'sha256:0535f2a66737ab5f92ded02c72363e9aac2c28bdd0537e1cb0df95e9e5727170',
    'a long string, ending "quoted"',
    'a long string with a \\ backslash',
    'a long string with \u007f delete',
    'a long string with \u001f unit separator',
    'a long string ending in é',
    ' !#[]~ long enough, all edges ~',
    'é "quoted" \\ \n \t \u0000 \u001f \u007f \u2028 🚀',
    'lone \ud800 high, lone \udc00 low, pair \ud83d\ude80',
    true,
    false,
    12345678901234567890n,
    [],
    {},
    sparse,
    [undefined, () => 1, Symbol('s'), null],
    { b: 1, a: [{ z: undefined, y: 'x' }], é: { '': 0 }, B: false, fn: () => 1, s: Symbol('x') },
    Object.assign(Object.create(null) as object, { __proto__: 1, k: [sparse, { n: null }] }),
    JSON.parse('{"__proto__":{"x":1},"a":"\\"\\u0001"}'),
    { deep: { deeper: { deepest: [[[]], [{}], 'x'] } } },
    // Larger than the reused buffer (64 KiB) and than what it keeps (1 MiB): it grows, then shrinks.
    big,
    { after: 'big' },
  ];
  for (const v of values)
    assert.deepEqual(canonicalJsonBytes(v), utf8(canonicalJson(v)), canonicalJson(v).slice(0, 80));
});

test('canonicalJsonBytes re-entered from a getter gives both values whole', () => {
  const inner = { z: 'inner', a: [1, 2] };
  const outer = {
    get lazy(): unknown {
      return Array.from(canonicalJsonBytes(inner));
    },
    b: 'outer',
  };
  const expected = utf8(canonicalJson({ b: 'outer', lazy: Array.from(utf8(canonicalJson(inner))) }));
  assert.deepEqual(canonicalJsonBytes(outer), expected);
  assert.deepEqual(canonicalJsonBytes(inner), utf8(canonicalJson(inner)));
});
