import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEndpointSlice, compileState } from '../../bench/incremental.js';
import { generateMesh, withMovedEndpoint } from '../../bench/synthetic.js';
import { nobleSha256Hex } from '../../src/snapshot/digest.js';

test('an incrementally applied endpoint move gives the snapshot a full recompile gives', () => {
  const mesh = generateMesh({ services: 60, perNamespace: 20 });
  const base = compileState(mesh.docs, nobleSha256Hex).state;
  const moved = withMovedEndpoint(mesh.docs, 25, '10.250.0.7');
  const changed = moved.docs.find((d, i) => d !== mesh.docs[i]);
  assert.ok(changed);

  const next = applyEndpointSlice(base, changed);
  const full = compileState(moved.docs, nobleSha256Hex).state;
  assert.notEqual(next.state.snapshot.digest, base.snapshot.digest);
  assert.equal(next.state.snapshot.digest, full.snapshot.digest);
  assert.deepEqual(next.state.snapshot.content, full.snapshot.content);
  assert.deepEqual(next.state.snapshot.counts, full.snapshot.counts);
  // a delta carries only the new objects and documents
  for (const d of next.state.snapshot.objects.keys()) assert.ok(full.snapshot.objects.has(d) && !base.snapshot.objects.has(d));
  assert.ok(next.state.snapshot.documents.length < 12, `${next.state.snapshot.documents.length} documents`);
  // Only the moved service's assignments are new messages; everything else hit the encoder cache.
  const encodes = next.stages['encodes'] ?? 0;
  assert.ok(encodes >= 1 && encodes <= 6, `encoded ${encodes} messages`);
});
