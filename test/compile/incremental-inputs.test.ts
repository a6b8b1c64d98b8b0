import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMesh } from '../../bench/synthetic.js';
import { compile } from '../../src/compile/index.js';
import {
  indexedInputs,
  lookupInput,
  withDeleted,
  withMeshConfig,
  withReplaced,
} from '../../src/compile/incremental.js';
import { buildInputSet } from '../../src/inputs/index.js';
import { inputsDigest } from '../../src/snapshot/stored-inputs/canonical-inputs.js';
import type { Pod } from '../../src/model/k8s.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { assertSameOutput } from './incremental-helpers.js';

const names = (list: readonly { meta: { namespace: string; name: string } }[]) =>
  list.map((o) => `${o.meta.namespace}/${o.meta.name}`);

test('withReplaced / withDeleted: cheap edits, earlier sets unchanged, same compile as the plain set', () => {
  const plain = buildInputSet(generateMesh({ services: 30, perNamespace: 10, seed: 5 }).docs);
  const base = indexedInputs(plain);
  assert.equal(inputsDigest(base, nodeSha256Hex), inputsDigest(plain, nodeSha256Hex));
  assertSameOutput(compile(base).output, compile(plain).output, 'indexed');

  const pod = base.pods[4] as Pod;
  const moved: Pod = { ...pod, ips: ['10.9.9.9'] };
  const a = withReplaced(base, 'Pod', moved);
  const b = withDeleted(a, 'Pod', pod.meta.namespace, pod.meta.name);
  const added = withReplaced(b, 'Pod', { ...pod, meta: { ...pod.meta, name: 'zz-new' } });

  assert.equal(lookupInput(base, 'Pod', pod.meta.namespace, pod.meta.name), pod);
  assert.equal(lookupInput(a, 'Pod', pod.meta.namespace, pod.meta.name), moved);
  assert.equal(lookupInput(b, 'Pod', pod.meta.namespace, pod.meta.name), undefined);
  assert.equal(base.pods.length, plain.pods.length);
  assert.equal(b.pods.length, plain.pods.length - 1);
  assert.equal(added.pods.length, plain.pods.length);
  // Lists are sorted by namespace/name; other kinds are the very same arrays.
  const sorted = names(added.pods);
  assert.deepEqual(
    sorted,
    [...sorted].sort((x, y) => (x < y ? -1 : 1)),
  );
  assert.ok(names(added.pods).includes(`${pod.meta.namespace}/zz-new`));
  assert.equal(added.services, base.services);
  assert.equal(withDeleted(base, 'Pod', 'nope', 'nope'), base);

  // Spread and JSON see every list (they are enumerable getters).
  const spread = { ...a };
  assert.equal(spread.pods.length, plain.pods.length);
  assert.ok(JSON.stringify(a).includes('10.9.9.9'));
  assert.equal(inputsDigest(withMeshConfig(a, base.meshConfig), nodeSha256Hex), inputsDigest(a, nodeSha256Hex));

  // The same objects as a plain InputSet compile the same.
  const plainA = { ...plain, pods: plain.pods.map((p) => (p === pod ? moved : p)) };
  assertSameOutput(compile(a).output, compile(plainA).output, 'edited');
  assert.throws(() => withReplaced(base, 'Service', moved as never), TypeError);
});
