import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  destinationRule,
  endpointIps,
  meshConfigMap,
  node,
  pod,
  recompileStored,
  servedFromStore,
  service,
  slice,
  startHarness,
  virtualService,
} from './watch-harness.js';
import { auditTrail } from '../../src/history/audit.js';

const REVIEWS = 'reviews.default.svc.cluster.local';

type Json = Record<string, unknown>;

function reviewsRoute(routes: Map<string, Json>): Json | undefined {
  const rc = routes.get('9080') as { virtual_hosts?: { name: string; routes?: Json[] }[] } | undefined;
  return rc?.virtual_hosts?.find((v) => v.name === `${REVIEWS}:9080`)?.routes?.[0];
}

test(
  'add, update and delete of each kind produce the right snapshot, with provenance',
  { timeout: 60_000 },
  async () => {
    const h = await startHarness();
    try {
      const v1 = await h.head();
      assert.equal(v1?.version, 1);

      // DestinationRule added: subset clusters appear.
      h.server.apply(destinationRule(REVIEWS));
      await h.settle(1);
      let head = await h.head();
      let served = await servedFromStore(h.store, head!);
      assert.equal(head!.version, 2);
      assert.ok(served.clusters.has(`outbound|9080|v2|${REVIEWS}`));
      assert.deepEqual(
        head!.provenance?.changes.map((c) => [c.kind, c.name, c.change]),
        [['DestinationRule', REVIEWS, 'added']],
      );
      assert.ok(head!.provenance?.changes[0]?.resourceVersion);

      // VirtualService added: the route splits 80/20; updated: 50/50; deleted: back to the default route.
      h.server.apply(virtualService(REVIEWS, [80, 20]));
      await h.settle(1);
      served = await servedFromStore(h.store, (head = await h.head())!);
      const weighted = (r: Json | undefined) =>
        ((r?.route as Json)?.weighted_clusters as { clusters: { name: string; weight: number }[] })?.clusters.map(
          (c) => [c.name, c.weight],
        );
      assert.deepEqual(weighted(reviewsRoute(served.routes)), [
        [`outbound|9080|v1|${REVIEWS}`, 80],
        [`outbound|9080|v2|${REVIEWS}`, 20],
      ]);
      // As a real API server reports it: the newest managedFields entry is Argo CD's update.
      const vs5050 = virtualService(REVIEWS, [50, 50]);
      const managedFields = [
        { manager: 'kubectl-client-side-apply', operation: 'Update', time: '2026-01-01T10:00:00Z' },
        { manager: 'argocd-controller', operation: 'Update', time: '2026-01-01T11:00:00Z' },
      ];
      h.server.apply({ ...vs5050, metadata: { ...vs5050.metadata, managedFields } } as typeof vs5050);
      await h.settle(1);
      served = await servedFromStore(h.store, (head = await h.head())!);
      assert.deepEqual(weighted(reviewsRoute(served.routes)), [
        [`outbound|9080|v1|${REVIEWS}`, 50],
        [`outbound|9080|v2|${REVIEWS}`, 50],
      ]);
      assert.deepEqual(
        head!.provenance?.changes.map((c) => [c.kind, c.change, c.manager]),
        [['VirtualService', 'modified', 'argocd-controller']],
      );
      const trail = await auditTrail(h.store, { channel: 'main' });
      assert.deepEqual(
        trail.find((e) => e.version === head!.version)?.managers,
        ['argocd-controller'],
        'meshsnap audit answers who changed it',
      );
      h.server.delete({ apiVersion: 'networking.istio.io/v1', kind: 'VirtualService' }, 'default', REVIEWS);
      await h.settle(1);
      served = await servedFromStore(h.store, (head = await h.head())!);
      assert.equal((reviewsRoute(served.routes)?.route as Json)?.cluster, `outbound|9080||${REVIEWS}`);
      assert.deepEqual(
        head!.provenance?.changes.map((c) => [c.kind, c.change]),
        [['VirtualService', 'deleted']],
      );

      // EndpointSlice updated: a new endpoint appears; Pod added for it (v2 subset), then deleted.
      h.server.apply(pod('reviews-v2-2', 'reviews', 'v2', '10.244.0.13'));
      h.server.apply(
        slice('reviews', [
          { ip: '10.244.0.11', pod: 'reviews-v1-1' },
          { ip: '10.244.0.12', pod: 'reviews-v2-1' },
          { ip: '10.244.0.13', pod: 'reviews-v2-2' },
        ]),
      );
      await h.settle(2);
      served = await servedFromStore(h.store, (head = await h.head())!);
      assert.deepEqual(endpointIps(served.endpoints.get(`outbound|9080||${REVIEWS}`)), [
        '10.244.0.11',
        '10.244.0.12',
        '10.244.0.13',
      ]);
      assert.deepEqual(endpointIps(served.endpoints.get(`outbound|9080|v2|${REVIEWS}`)), [
        '10.244.0.12',
        '10.244.0.13',
      ]);
      assert.deepEqual(
        head!.provenance?.changes.map((c) => `${c.kind}/${c.name}/${c.change}`),
        ['EndpointSlice/reviews-abc/modified', 'Pod/reviews-v2-2/added'],
      );

      // Node locality change: endpoints move to the new zone.
      h.server.apply(node('node-a', 'z9'));
      await h.settle(1);
      served = await servedFromStore(h.store, (head = await h.head())!);
      const zones = (
        (served.endpoints.get(`outbound|9080||${REVIEWS}`)?.endpoints ?? []) as { locality?: { zone?: string } }[]
      ).map((e) => e.locality?.zone);
      assert.deepEqual(zones, ['z9']);

      // Mesh config: REGISTRY_ONLY sends unknown traffic to the BlackHoleCluster.
      h.server.apply(meshConfigMap('REGISTRY_ONLY'));
      await h.settle(1);
      served = await servedFromStore(h.store, (head = await h.head())!);
      assert.match(JSON.stringify(served.listeners.get('virtualOutbound')), /BlackHoleCluster/);

      // Service added, then deleted: its cluster appears and disappears.
      h.server.apply(service('ratings'));
      await h.settle(1);
      served = await servedFromStore(h.store, (head = await h.head())!);
      assert.ok(served.clusters.has('outbound|9080||ratings.default.svc.cluster.local'));
      h.server.delete('Service', 'default', 'ratings');
      await h.settle(1);
      served = await servedFromStore(h.store, (head = await h.head())!);
      assert.ok(!served.clusters.has('outbound|9080||ratings.default.svc.cluster.local'));

      // Every version's stored inputs recompile, from scratch, to that version's snapshot.
      for (const v of await h.store.listVersions('main')) {
        const rec = (await h.store.getVersion('main', v))!;
        assert.equal(await recompileStored(h.store, rec), rec.digest, `version ${v}`);
      }
      // Parents chain.
      assert.equal(head!.parent, head!.version - 1);
    } finally {
      await h.close();
    }
  },
);

test('noise is not a change, and an identical snapshot is not published again', { timeout: 30_000 }, async () => {
  const h = await startHarness();
  try {
    const before = await h.versions();
    // A Node heartbeat (status only) and a managedFields/annotation-only touch of a Service.
    const n = node('node-a', 'z1');
    h.server.apply({
      ...n,
      status: { conditions: [{ type: 'Ready', status: 'True', lastHeartbeatTime: '2026-01-01T00:05:00Z' }] },
    });
    const svc = service('reviews');
    h.server.apply({
      ...svc,
      metadata: { ...svc.metadata, annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } },
    });
    await h.settle(2);
    assert.equal(await h.versions(), before);
    assert.equal(h.watcher.rounds.length, 1, 'noise started a compile round');
    // A real change and its undo in one round: the snapshot is the current one, nothing published.
    h.server.apply(service('ratings'));
    h.server.delete('Service', 'default', 'ratings');
    await h.settle(2);
    assert.equal(await h.versions(), before);
  } finally {
    await h.close();
  }
});
