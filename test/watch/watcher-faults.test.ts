import assert from 'node:assert/strict';
import { test } from 'node:test';
import { until } from '../helpers/fake-apiserver/wait.js';
import {
  endpointIps,
  ns,
  recompileStored,
  servedFromStore,
  service,
  slice,
  startHarness,
  virtualService,
  destinationRule,
} from './watch-harness.js';

const REVIEWS = 'reviews.default.svc.cluster.local';
const reviewsEndpoints = async (h: Awaited<ReturnType<typeof startHarness>>) =>
  endpointIps((await servedFromStore(h.store, (await h.head())!)).endpoints.get(`outbound|9080||${REVIEWS}`));

test(
  'a burst of 1,000 endpoint changes gives few snapshots, incrementally, equal to a full compile',
  { timeout: 60_000 },
  async () => {
    const h = await startHarness();
    try {
      const before = await h.versions();
      const t0 = performance.now();
      for (let i = 0; i < 1000; i++) {
        h.server.apply(
          slice('reviews', [
            { ip: '10.244.0.11', pod: 'reviews-v1-1' },
            { ip: `10.250.${Math.floor(i / 250)}.${i % 250}`, pod: 'reviews-v2-1' },
          ]),
        );
        // 1 ms of (fake) time per event: the quiet period never passes during the burst.
        if (i % 10 === 9) h.clock.advance(10);
      }
      await h.settle(1000);
      const after = await h.versions();
      assert.ok(after - before >= 1 && after - before <= 2, `${after - before} snapshots for 1,000 changes`);
      assert.deepEqual(await reviewsEndpoints(h), ['10.244.0.11', '10.250.3.249']);
      const last = h.watcher.rounds.at(-1)!;
      assert.equal(last.mode, 'incremental');
      const head = (await h.head())!;
      assert.equal(await recompileStored(h.store, head), head.digest, 'incremental result differs from a full compile');
      const full = h.watcher.rounds[0]!;
      process.stderr.write(
        `# burst: 1000 events in ${(performance.now() - t0).toFixed(0)} ms; full compile ${full.compileMs.toFixed(1)} ms, incremental ${last.compileMs.toFixed(1)} ms\n`,
      );
    } finally {
      await h.close();
    }
  },
);

test('an expired resourceVersion (410) relists and reports what changed meanwhile', { timeout: 30_000 }, async () => {
  for (const expiredWatch of ['event', 'status'] as const) {
    const h = await startHarness({ server: { expiredWatch } });
    try {
      // Watches reconnect slowly; meanwhile objects change and the history is compacted away.
      h.server.delay(150, (r) => r.watch);
      h.server.endWatches();
      h.server.apply(service('ratings'));
      h.server.delete('Service', 'default', 'productpage');
      h.server.compact();
      const lists = h.server.requests.filter((r) => !r.watch && r.path === '/api/v1/services').length;
      await h.settle(2);
      h.server.clearFaults();
      assert.ok(
        h.server.requests.filter((r) => !r.watch && r.path === '/api/v1/services').length > lists,
        `${expiredWatch}: no relist`,
      );
      const served = await servedFromStore(h.store, (await h.head())!);
      assert.ok(served.clusters.has('outbound|9080||ratings.default.svc.cluster.local'), expiredWatch);
      assert.ok(!served.clusters.has('outbound|9080||productpage.default.svc.cluster.local'), expiredWatch);
    } finally {
      await h.close();
    }
  }
});

test(
  'a 500 and dropped connections: informers restart with backoff and nothing is lost',
  { timeout: 30_000 },
  async () => {
    const h = await startHarness();
    try {
      h.server.failNext(6, (r) => r.watch, 500);
      h.server.dropWatches();
      for (let i = 0; i < 5; i++) h.server.apply(slice('reviews', [{ ip: `10.244.1.${i}`, pod: 'reviews-v1-1' }]));
      h.server.apply(ns('extra'));
      await h.settle(6);
      assert.deepEqual(await reviewsEndpoints(h), ['10.244.1.4']);
      const errors = (await h.watcher.metrics.informerErrors.get()).values.reduce((a, v) => a + v.value, 0);
      assert.ok(errors >= 1, 'no informer error was seen');
      const head = (await h.head())!;
      assert.ok(head.provenance?.changes.some((c) => c.kind === 'Namespace' && c.name === 'extra'));
      assert.ok(
        h.logs.some((l) => l.event === 'watch.informer_restart' && String(l.message).includes('restarting in')),
      );
    } finally {
      await h.close();
    }
  },
);

test(
  'missing Istio CRDs are skipped, then watched once installed; EndpointSlices fall back to Endpoints',
  { timeout: 30_000 },
  async () => {
    const h = await startHarness({
      server: {
        notServed: [
          'networking.istio.io/v1',
          'networking.istio.io/v1beta1',
          'networking.istio.io/v1alpha3',
          'discovery.k8s.io/v1',
        ],
      },
    });
    try {
      assert.equal((await h.head())?.version, 1);
      assert.ok(
        h.watcher.informerIds().some((id) => id.startsWith('Endpoints')),
        h.watcher.informerIds().join(', '),
      );
      assert.ok(!h.watcher.informerIds().some((id) => id.startsWith('VirtualService')));
      assert.ok(
        h.logs.some(
          (l) =>
            l.event === 'watch.crd_missing' &&
            String(l.message).includes('VirtualService.networking.istio.io is not installed'),
        ),
      );
      // Installed later, in v1beta1 only.
      h.server.addGroupVersion('networking.istio.io/v1beta1');
      h.server.apply({ ...destinationRule(REVIEWS), apiVersion: 'networking.istio.io/v1beta1' });
      h.server.apply({ ...virtualService(REVIEWS, [10, 90]), apiVersion: 'networking.istio.io/v1beta1' });
      await until(
        () =>
          ['VirtualService', 'DestinationRule', 'Gateway'].every((kind) =>
            h.watcher.informerIds().some((id) => id.startsWith(kind) && id.includes('networking.istio.io/v1beta1')),
          ),
        5000,
        'CRD informers',
      );
      await h.settle(2);
      const served = await servedFromStore(h.store, (await h.head())!);
      assert.ok(served.clusters.has(`outbound|9080|v2|${REVIEWS}`));
      assert.match(JSON.stringify(served.routes.get('9080')), /"weight":90/);
      const head = (await h.head())!;
      assert.equal(await recompileStored(h.store, head), head.digest);
    } finally {
      await h.close();
    }
  },
);
