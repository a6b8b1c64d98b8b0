/**
 * applyDelta's consistency index is built only when a delta could break consistency: an
 * endpoint change (existing ClusterLoadAssignments replaced) needs none, so the first one after a
 * full build does not pay for indexing every resource; a later delta that can break it still
 * gets the full check, from the tables as they are then.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSnapshot, SnapshotBuilder } from '../../src/snapshot/build.js';
import { InconsistentSnapshotError } from '../../src/snapshot/consistency.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import type { CompileOutput } from '../../src/compile/types.js';
import { cla, edsCluster, INFO, output } from './sample-output.js';

const name = (i: number): string => `outbound|80||svc${i}.ns.svc.cluster.local`;

function mesh(services: number, ip = (i: number) => `10.0.${i}.1`): CompileOutput {
  const clusters = [];
  const endpoints = [];
  for (let i = 0; i < services; i++) {
    clusters.push(edsCluster(name(i)));
    endpoints.push(cla(name(i), [ip(i)]));
  }
  return output({ c: { clusters }, e: { endpoints } }, [
    { id: 'sidecar/ns/_', generator: 'sidecar', namespace: 'ns', services: [], groups: ['c', 'e'] },
  ]);
}

/** The builder's consistency index (src/snapshot/build/delta-consistency.ts), undefined until built. */
const indexOf = (b: SnapshotBuilder): unknown =>
  (b as unknown as { consistency: { index: unknown } }).consistency.index;

test('endpoint deltas need no consistency index; a delta that could break consistency is still checked', () => {
  const builder = new SnapshotBuilder(INFO, { hasher: nodeSha256Hex });
  builder.build(mesh(20));
  const moved = builder.applyDelta({ e: { endpoints: { upserts: new Map([[name(3), cla(name(3), ['10.9.9.9'])]]) } } });
  assert.equal(indexOf(builder), undefined, 'no index built for an endpoint change');
  assert.equal(
    moved.digest,
    buildSnapshot(
      mesh(20, (i) => (i === 3 ? '10.9.9.9' : `10.0.${i}.1`)),
      INFO,
      { hasher: nodeSha256Hex },
    ).digest,
  );

  // Deleting an assignment a cluster needs: refused, and the builder stays where it was.
  assert.throws(
    () => builder.applyDelta({ e: { endpoints: { deletes: [name(5)] } } }),
    (e: unknown) =>
      e instanceof InconsistentSnapshotError &&
      e.problems.some((p) => p.code === 'missing-endpoints' && p.ref === name(5)),
  );
  assert.equal(builder.snapshot?.digest, moved.digest);

  // A new name (could be a duplicate) builds the index; deleting the cluster with its assignment is fine.
  const next = builder.applyDelta({
    c: { clusters: { deletes: [name(5)] } },
    e: { endpoints: { deletes: [name(5)] } },
  });
  assert.notEqual(next.digest, moved.digest);
  assert.ok(indexOf(builder) !== undefined);
});
