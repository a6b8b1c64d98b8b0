import assert from 'node:assert/strict';
import { test } from 'node:test';
import { until } from '../helpers/fake-apiserver/wait.js';
import { PRODUCTPAGE_NODE, endpointIps, recompileStored, servedFromStore, startHarness } from './watch-harness.js';

test('nothing is published before every informer synced; then exactly one version', { timeout: 30_000 }, async () => {
  // Hold the Pod list back: four failed lists (restarted after 20, 40, 80, 160 ms).
  const h = await startHarness({
    noInitialSettle: true,
    beforeStart: (s) => s.failNext(4, (r) => r.path === '/api/v1/pods' && !r.watch, 500),
  });
  try {
    await until(() => h.watcher.eventsSeen > 0, 5000, 'first events');
    assert.equal(h.watcher.synced, false);
    h.clock.advance(1000);
    await h.watcher.idle();
    assert.equal(await h.versions(), 0, 'published before the Pod informer synced');
    assert.equal(h.watcher.readiness().ready, false);
    await h.settle(0);
    // settle() waits for sync, so the rounds before it were dropped and the first one after published.
    assert.equal(h.watcher.synced, true);
    assert.equal(await h.versions(), 1);
    const head = await h.head();
    assert.ok(head);
    assert.equal(head.version, 1);
    // Provenance of the first version: every object, added.
    const changes = head.provenance?.changes ?? [];
    assert.ok(
      changes.some(
        (c) =>
          c.kind === 'Service' &&
          c.namespace === 'default' &&
          c.name === 'reviews' &&
          c.change === 'added' &&
          c.resourceVersion,
      ),
    );
    assert.ok(changes.every((c) => c.change === 'added'));
    // Stored inputs recompile to the same snapshot.
    assert.equal(await recompileStored(h.store, head), head.digest);
    const served = await servedFromStore(h.store, head, PRODUCTPAGE_NODE);
    assert.ok(served.clusters.has('outbound|9080||reviews.default.svc.cluster.local'));
    assert.deepEqual(endpointIps(served.endpoints.get('outbound|9080||reviews.default.svc.cluster.local')), [
      '10.244.0.11',
      '10.244.0.12',
    ]);
    // A settle with no events publishes nothing more.
    await h.settle(0);
    assert.equal(await h.versions(), 1);
  } finally {
    await h.close();
  }
});
