/**
 * Determinism: the same inputs in any file layout and document order give the same snapshot
 * digest and byte-identical resources; and every stored resource decodes with Envoy's protos and
 * re-encodes to the same bytes (round trip).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify, parseAllDocuments } from 'yaml';
import { compileTexts, type InputText } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { resourceToJson } from '../../src/xds/json.js';
import { codecOf, decodeMessage, encodeMessage } from '../../src/xds/proto.js';
import { XDS_TYPE_NAME, XDS_TYPES } from '../../src/xds/type-urls.js';
import { BOOKINFO_STATE, EXAMPLES, ISTIO_SAMPLES } from '../helpers/paths.js';
import { mulberry32 } from '../inputs/prng.js';

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const SCENARIO = [
  'destination-rule-all.yaml',
  'virtual-service-reviews-jason-v2-v3.yaml',
  'virtual-service-ratings-test-delay.yaml',
  'virtual-service-details-v2.yaml',
];

function shuffle<T>(items: T[], rand: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/** Re-lays the documents of some files into `parts` new files, shuffled, as JSON or YAML. */
function relayout(files: InputText[], seed: number, parts: number): InputText[] {
  const rand = mulberry32(seed);
  const docs = files
    .flatMap((f) => parseAllDocuments(f.text).map((d) => d.toJS() as unknown))
    .filter((d) => d !== null);
  shuffle(docs, rand);
  const out: InputText[] = [];
  for (let p = 0; p < parts; p++) {
    const mine = docs.filter((_, i) => i % parts === p);
    const text =
      p % 2 === 0
        ? mine.map((d) => stringify(d)).join('---\n')
        : JSON.stringify({ apiVersion: 'v1', kind: 'List', items: mine });
    out.push({ file: `relaid-${p}.${p % 2 === 0 ? 'yaml' : 'json'}`, text });
  }
  return shuffle(out, rand);
}

const read = (path: string): InputText => ({ file: path, text: readFileSync(path, 'utf8') });

test('shuffled documents and file layouts give the same digest and the same bytes', () => {
  const files = [read(BOOKINFO_STATE), ...SCENARIO.map((f) => read(join(NET, f)))];
  const base = compileTexts(files, { hasher: nodeSha256Hex });
  for (let seed = 1; seed <= 6; seed++) {
    const again = compileTexts(relayout(files, seed, 1 + (seed % 4)), { hasher: nodeSha256Hex });
    assert.equal(again.snapshot.digest, base.snapshot.digest, `seed ${seed}`);
    assert.deepEqual([...again.snapshot.objects.keys()], [...base.snapshot.objects.keys()]);
  }
});

test('the default hasher (pure JS) and node:crypto give the same digest', () => {
  const files = [read(BOOKINFO_STATE), ...SCENARIO.map((f) => read(join(NET, f)))];
  assert.equal(compileTexts(files).snapshot.digest, compileTexts(files, { hasher: nodeSha256Hex }).snapshot.digest);
});

test('every resource of every bookinfo scenario and of the example decodes and re-encodes to the same bytes', () => {
  const scenarios = readdirSync(NET).filter((f) => f.endsWith('.yaml'));
  const example = join(EXAMPLES, 'bookstore');
  const exampleFiles = readdirSync(example, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => read(join(example, f)));
  const inputs = [[read(BOOKINFO_STATE), ...scenarios.map((f) => read(join(NET, f)))], exampleFiles];
  let checked = 0;
  for (const files of inputs) {
    const { snapshot } = compileTexts(files, { hasher: nodeSha256Hex });
    for (const group of Object.values(snapshot.content.groups)) {
      for (const type of XDS_TYPES) {
        for (const [name, digest] of Object.entries(group[type])) {
          const bytes = snapshot.objects.get(digest);
          assert.ok(bytes, `${type} ${name}`);
          const again = encodeMessage(XDS_TYPE_NAME[type], decodeMessage(XDS_TYPE_NAME[type], bytes));
          assert.deepEqual(new Uint8Array(again), new Uint8Array(bytes), `${type} ${name} round trip`);
          for (const url of anyTypes(resourceToJson(XDS_TYPE_NAME[type], bytes)))
            assert.ok(codecOf(url.slice(url.indexOf('/') + 1)), `${type} ${name}: nested Any ${url} has no proto`);
          checked++;
        }
      }
    }
  }
  assert.ok(checked > 100, `checked ${checked} resources`);
});

/** Every `@type` inside a rendered resource (each packed Any, decoded recursively). */
function anyTypes(json: unknown, out: string[] = []): string[] {
  if (Array.isArray(json)) for (const v of json) anyTypes(v, out);
  else if (json !== null && typeof json === 'object') {
    for (const [k, v] of Object.entries(json)) {
      if (k === '@type' && typeof v === 'string') out.push(v);
      else anyTypes(v, out);
    }
  }
  return out;
}
