import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import { applyCompileDelta, indexedInputs, IncrementalCompiler, withReplaced } from '../../src/compile/incremental.js';
import type { EndpointSlice } from '../../src/model/k8s.js';
import { buildInputSet } from '../../src/inputs/index.js';
import { assertSameOutput } from './incremental-helpers.js';

// 100 endpoint changes in a row at 1k services, each compiled as a delta, end where a full compile
// does. The path's speed (flat as the mesh grows) is measured by the benchmark (bench/), not here.
test('100 changed slices at 1k services: each a delta, the result equals a full compile', () => {
  let inputs = indexedInputs(buildInputSet(generateMesh({ services: 1000, seed: 3 }).docs));
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(inputs).output;
  const slices: readonly EndpointSlice[] = inputs.endpointSlices;
  for (let i = 0; i < 100; i++) {
    const s = slices[(i * 7919) % slices.length] as EndpointSlice;
    const [first, ...rest] = s.endpoints;
    inputs = withReplaced(inputs, 'EndpointSlice', {
      ...s,
      endpoints: [{ ...first!, addresses: [`10.250.0.${i + 1}`] }, ...rest],
    });
    const r = ic.update(inputs, [{ kind: 'EndpointSlice', namespace: s.meta.namespace, name: s.meta.name }]);
    assert.equal(r.kind, 'delta');
    if (r.kind === 'delta') output = applyCompileDelta(output, r.delta);
  }
  assertSameOutput(output, compile(inputs).output, 'after 100 updates');
});
