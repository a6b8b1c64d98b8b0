/**
 * The publish guard in the watcher, through the fake API server: a relist that suddenly lists
 * nothing of a kind keeps the last good objects (and says so on /readyz, metrics and logs); a
 * round that would drop most of the mesh is refused and recorded as a candidate; on a pinned
 * channel, a round whose endpoints collapsed is refused too; an informer failing with 403 shows
 * on /readyz, metrics and logs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditTrail } from '../../src/history/audit.js';
import { candidatesChannel } from '../../src/history/context.js';
import { pin } from '../../src/history/pin.js';
import { until } from '../helpers/fake-apiserver/wait.js';
import { destinationRule, endpointIps, servedFromStore, startHarness } from './watch-harness.js';

const SLICE = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' };
const REVIEWS = 'reviews.default.svc.cluster.local';
const reviewsEndpoints = async (h: Awaited<ReturnType<typeof startHarness>>) =>
  endpointIps((await servedFromStore(h.store, (await h.head())!)).endpoints.get(`outbound|9080||${REVIEWS}`));

test(
  'an informer that relists nothing where it listed objects keeps them, and says so on readiness, metrics and logs',
  { timeout: 30_000 },
  async () => {
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
      assert.match(
        ready.warnings?.[0] ?? '',
        /informer EndpointSlice.*relisted nothing; keeping its last 2 object\(s\)/,
      );
      assert.match(
        await h.watcher.metrics.registry.metrics(),
        /meshsnap_watch_informer_kept_objects\{informer="EndpointSlice[^"]*"\} 2/,
      );
      assert.ok(h.logs.some((l) => l.event === 'watch.informer_emptied' && l.kept === 2));
    } finally {
      await h.close();
    }
  },
);

test(
  'a round that would drop every service of a namespace is refused: the head stays, the snapshot is a candidate',
  { timeout: 30_000 },
  async () => {
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
  },
);

test(
  'a pinned round whose endpoints collapsed is refused: the head stays, a guard event names the pin',
  { timeout: 30_000 },
  async () => {
    const h = await startHarness();
    try {
      const head = (await h.head())!;
      await pin({ store: h.store, channel: 'main', actor: 'alice', reason: 'freeze', now: () => new Date() }, 'latest');
      // A config change (a candidate) and every pod of the mesh gone, in one round.
      h.server.apply(destinationRule(REVIEWS));
      h.server.delete(SLICE, 'default', 'reviews-abc');
      h.server.delete(SLICE, 'default', 'productpage-abc');
      await h.settle(3);
      assert.equal(h.watcher.rounds.at(-1)?.publish, 'refused');
      assert.equal((await h.head())!.version, head.version, 'the served version did not move');
      assert.deepEqual(
        await reviewsEndpoints(h),
        ['10.244.0.11', '10.244.0.12'],
        'the last good endpoints are still served',
      );
      assert.deepEqual(await h.store.listVersions(candidatesChannel('main')), [1], 'the config change is a candidate');
      const log = h.logs.find((l) => l.event === 'watch.publish_refused');
      assert.equal(log?.code, 'publish_guard');
      assert.equal(log?.pinned, head.version);
      assert.match(String(log?.message), /pinned to version \d+ and keeps serving.*serves 0 endpoints/);
      const guard = (await auditTrail(h.store, { channel: 'main' })).filter((e) => e.kind === 'guard');
      assert.equal(guard.length, 1);
      assert.equal((guard[0]?.detail as { pinned?: number } | undefined)?.pinned, head.version);
      assert.match(await h.watcher.metrics.registry.metrics(), /meshsnap_watch_publishes_total\{result="refused"\} 1/);
    } finally {
      await h.close();
    }
  },
);

test(
  'an informer that fails with 403 keeps its objects and shows on /readyz warnings, a metric and a log line until it lists again',
  { timeout: 30_000 },
  async () => {
    const h = await startHarness();
    try {
      const before = await reviewsEndpoints(h);
      // The EndpointSlice RBAC rule is lost: every list and watch of them is forbidden.
      h.server.failNext(1_000_000, (r) => r.path.endsWith('/endpointslices'), 403);
      h.server.endWatches();
      await until(
        () => (h.watcher.readiness().warnings ?? []).some((w) => w.includes('403')),
        10_000,
        'the denied informer reported',
      );
      const ready = h.watcher.readiness();
      assert.equal(ready.ready, true, 'still ready: the last good state is served');
      assert.match(
        ready.warnings?.find((w) => w.includes('403')) ?? '',
        /^informer EndpointSlice.* fails with HTTP 403 since \d{4}-\d\d-\d\dT[0-9:.]+Z \(.+\); keeping its last objects/,
      );
      assert.match(
        await h.watcher.metrics.registry.metrics(),
        /meshsnap_watch_informer_denied_status\{informer="EndpointSlice[^"]*"\} 403/,
      );
      const logged = h.logs.filter((l) => l.event === 'watch.informer_denied');
      assert.equal(logged.length, 1, 'logged once, not on every restart');
      assert.equal(logged[0]?.status, 403);
      assert.deepEqual(await reviewsEndpoints(h), before);

      h.server.clearFaults();
      await until(() => h.watcher.readiness().warnings === undefined, 10_000, 'the informer lists again');
      assert.match(
        await h.watcher.metrics.registry.metrics(),
        /meshsnap_watch_informer_denied_status\{informer="EndpointSlice[^"]*"\} 0/,
      );
      assert.ok(h.logs.some((l) => l.event === 'watch.informer_allowed'));
    } finally {
      await h.close();
    }
  },
);
