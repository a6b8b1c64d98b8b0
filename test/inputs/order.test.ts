/** The InputSet (and the service model) do not depend on the order documents come in. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Diagnostics, sortDiagnostics } from '../../src/model/diagnostics.js';
import { buildInputSet } from '../../src/inputs/load.js';
import { parseDocuments, type RawDocument } from '../../src/inputs/parse.js';
import { buildServiceModel } from '../../src/model/build.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';
import { mulberry32, shuffle } from './prng.js';

const NETWORKING = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const FILES = [
  BOOKINFO_STATE,
  join(ISTIO_SAMPLES, 'bookinfo', 'platform', 'kube', 'bookinfo.yaml'),
  ...[
    'destination-rule-all.yaml',
    'virtual-service-reviews-80-20.yaml',
    'virtual-service-all-v1.yaml',
    'bookinfo-gateway.yaml',
  ].map((f) => join(NETWORKING, f)),
];

function docs(): RawDocument[] {
  return FILES.flatMap((f) => parseDocuments(readFileSync(f, 'utf8'), f).docs);
}

test('shuffled documents give a deep-equal InputSet and an equal model', () => {
  const base = buildInputSet(docs());
  // Duplicates across these files exist on purpose: the kept copy must not depend on order either.
  assert.ok(base.diagnostics.some((d) => d.code === 'duplicate-object'));
  const baseModel = buildServiceModel(base, new Diagnostics());
  const rand = mulberry32(7);
  for (let i = 0; i < 10; i++) {
    const shuffled = buildInputSet(shuffle(docs(), rand));
    assert.deepEqual(shuffled, base);
    assert.deepEqual(sortDiagnostics(shuffled.diagnostics), sortDiagnostics(base.diagnostics));
    assert.deepEqual(buildServiceModel(shuffled, new Diagnostics()), baseModel);
  }
});
