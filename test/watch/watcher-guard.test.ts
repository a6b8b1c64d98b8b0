/**
 * The publish guard in the watcher, through the fake API server: a relist that suddenly lists
 * nothing of a kind keeps the last good objects (and says so on /readyz, metrics and logs); a
 * round that would drop most of the mesh is refused and recorded as a candidate.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { candidatesChannel } from '../../src/history/context.js';
import { until } from '../helpers/fake-apiserver/wait.js';
import { endpointIps, servedFromStore, startHarness } from './watch-harness.js';

const SLICE = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' };
const REVIEWS = 'reviews.default.svc.cluster.local';
const reviewsEndpoints = async (h: Awaited<ReturnType<typeof startHarness>>) => endpointIps((await servedFromStore(h.store, (await h.head())!)).endpoints.get(`outbound|9080||${REVIEWS}`));

test('an informer that relists nothing where it listed objects keeps them, and says so on readiness, metrics and logs', { timeout: 30_000 }, async () => {
  const h = await startHarness();
  try {
    const before = await reviewsEndpoints(h);
    assert.deepEqual(before, ['10.244.0.11', '10.244.0.12']);
    // Every EndpointSlice disappears while the watches are down, and the history is compacted:
    // the informer relists and finds none (as after a lost RBAC rule).
    h.server.delay(150, (r) => r.watch);
    h.server.endWatches();
    h.server.delete(SLICE, 'default', 'reviews-abc');
    h.server.delete(SLICE, 'default', 'productpage-abc');
    h.server.compact();
    await until(() => h.watcher.readiness().warnings !== undefined, 10_000, 'the emptied informer reported');
    h.server.clearFaults();
    await h.settle();

    assert.deepEqual(await reviewsEndpoints(h), before, 'the last good endpoints are still served');
    const ready = h.watcher.readiness();
    assert.equal(ready.ready, true);
    assert.match(ready.warnings?.[0] ?? '', /informer EndpointSlice.*relisted nothing; keeping its last 2 object\(s\)/);
    assert.match(await h.watcher.metrics.registry.metrics(), /meshsnap_watch_informer_kept_objects\{informer="EndpointSlice[^"]*"\} 2/);
    assert.ok(h.logs.some((l) => l.event === 'watch.informer_emptied' && l.kept === 2));
  } finally {
    await h.close();
  }
});

test('a round that would drop every service of a namespace is refused: the head stays, the snapshot is a candidate', { timeout: 30_000 }, async () => {
  const h = await startHarness();
  try {
    const head = (await h.head())!;
    h.server.delete('Service', 'default', 'reviews');
    h.server.delete('Service', 'default', 'productpage');
    await h.settle(2);
    const round = h.watcher.rounds.at(-1)!;
    assert.equal(round.publish, 'refused');
    assert.equal((await h.head())!.version, head.version, 'the served version did not move');
    assert.deepEqual(await h.store.listVersions(candidatesChannel('main')), [1]);
    const log = h.logs.find((l) => l.event === 'watch.publish_refused');
    assert.equal(log?.code, 'publish_guard');
    assert.match(String(log?.message), /every service of namespace\(s\) default.*candidate:1/);
    assert.match(await h.watcher.metrics.registry.metrics(), /meshsnap_watch_publishes_total\{result="refused"\} 1/);
  } finally {
    await h.close();
  }
});
