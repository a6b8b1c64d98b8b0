import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import { applyCompileDelta, indexedInputs, IncrementalCompiler, withReplaced } from '../../src/compile/incremental.js';
import type { EndpointSlice } from '../../src/model/k8s.js';
import { buildInputSet } from '../../src/inputs/index.js';
import { assertSameOutput } from './incremental-helpers.js';

// The endpoint path must not pass over all services: its cost stays flat as the mesh grows
// (≈0.4 ms median at 10k services on a loaded 2-core machine; 1k here keeps the test short).
test('one changed slice at 1k services: an incremental update takes well under 5 ms', () => {
  let inputs = indexedInputs(buildInputSet(generateMesh({ services: 1000, seed: 3 }).docs));
  const ic = new IncrementalCompiler();
  let output = ic.compileFull(inputs).output;
  const slices: readonly EndpointSlice[] = inputs.endpointSlices;
  const times: number[] = [];
  for (let i = 0; i < 100; i++) {
    const s = slices[(i * 7919) % slices.length] as EndpointSlice;
    const [first, ...rest] = s.endpoints;
    inputs = withReplaced(inputs, 'EndpointSlice', { ...s, endpoints: [{ ...first!, addresses: [`10.250.0.${i + 1}`] }, ...rest] });
    const t0 = performance.now();
    const r = ic.update(inputs, [{ kind: 'EndpointSlice', namespace: s.meta.namespace, name: s.meta.name }]);
    times.push(performance.now() - t0);
    assert.equal(r.kind, 'delta');
    if (r.kind === 'delta') output = applyCompileDelta(output, r.delta);
  }
  times.sort((a, b) => a - b);
  const median = times[times.length >> 1]!;
  assert.ok(median < 5, `median ${median.toFixed(2)} ms`);
  assertSameOutput(output, compile(inputs).output, 'after 100 updates');
});
