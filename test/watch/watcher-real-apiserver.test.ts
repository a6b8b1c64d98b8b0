/**
 * The watcher against a REAL kube-apiserver (../shared/tools/kube-local, v1.20.2): its first round
 * publishes what the server holds, and a VirtualService change, an endpoint change and a new Service
 * each publish a new version carrying the server's resourceVersions. The fake API server covers the
 * fault cases; this one checks that what the fake does is what the real one does (1.20 serves no
 * discovery.k8s.io/v1, so the watcher falls back to core Endpoints, as istiod does there).
 * Skipped with the reason when no real API server is reachable.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { VersionRecord } from '../../src/snapshot/manifest.js';
import { realApiServer, type RealApiServer } from '../helpers/kube-local.js';
import { realNamespace, startRealWatch, type RealNamespace } from './real-watch.js';
import { endpointIps, recompileStored, servedFromStore } from './watch-harness.js';

const NS = `meshsnap-watch-${Date.now().toString(36)}`;
const REVIEWS = `reviews.${NS}.svc.cluster.local`;

type Obj = KubernetesObject & Record<string, unknown>;
const service = (name: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: NS, labels: { app: name } },
  spec: { selector: { app: name }, ports: [{ name: 'http', port: 9080, targetPort: 9080, protocol: 'TCP' }] },
});
const pod = (name: string, app: string, version: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: NS, labels: { app, version } },
  spec: { containers: [{ name: app, image: 'x', ports: [{ containerPort: 9080, name: 'http' }] }] },
});
const endpoints = (name: string, addrs: { ip: string; pod: string }[]): Obj => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name, namespace: NS },
  subsets: [
    {
      addresses: addrs.map((a) => ({ ip: a.ip, targetRef: { kind: 'Pod', name: a.pod, namespace: NS } })),
      ports: [{ name: 'http', port: 9080, protocol: 'TCP' }],
    },
  ],
});
const destinationRule: Obj = {
  apiVersion: 'networking.istio.io/v1beta1',
  kind: 'DestinationRule',
  metadata: { name: 'reviews', namespace: NS },
  spec: {
    host: REVIEWS,
    subsets: [
      { name: 'v1', labels: { version: 'v1' } },
      { name: 'v2', labels: { version: 'v2' } },
    ],
  },
};
const virtualService = (weights: [number, number]): Obj => ({
  apiVersion: 'networking.istio.io/v1beta1',
  kind: 'VirtualService',
  metadata: { name: 'reviews', namespace: NS },
  spec: {
    hosts: [REVIEWS],
    http: [
      {
        route: [
          { destination: { host: REVIEWS, subset: 'v1' }, weight: weights[0] },
          { destination: { host: REVIEWS, subset: 'v2' }, weight: weights[1] },
        ],
      },
    ],
  },
});
const PRODUCTPAGE = {
  id: `sidecar~10.250.0.20~productpage-v1-1.${NS}~${NS}.svc.cluster.local`,
  metadata: { NAMESPACE: NS, LABELS: { app: 'productpage', version: 'v1' }, INSTANCE_IPS: '10.250.0.20' },
};

let server: RealApiServer;
let ns: RealNamespace;

before(async () => {
  server = await realApiServer();
  if (!('skip' in server)) ns = await realNamespace(server.kc, NS);
});

after(async () => {
  if (!('skip' in server)) await ns.cleanUp();
});

const create = (o: Obj) => ns.create(o);
const runningPod = (name: string, app: string, version: string, ip: string) =>
  ns.runningPod(pod(name, app, version), ip);

test(
  'the watcher against a real kube-apiserver: first round, then each change kind',
  { timeout: 120_000 },
  async (t) => {
    if ('skip' in server) {
      t.skip(server.skip);
      return;
    }
    await create(service('reviews'));
    await create(service('productpage'));
    await runningPod('reviews-v1-1', 'reviews', 'v1', '10.250.0.11');
    await runningPod('reviews-v2-1', 'reviews', 'v2', '10.250.0.12');
    await runningPod('productpage-v1-1', 'productpage', 'v1', '10.250.0.20');
    await create(endpoints('reviews', [{ ip: '10.250.0.11', pod: 'reviews-v1-1' }]));
    await create(endpoints('productpage', [{ ip: '10.250.0.20', pod: 'productpage-v1-1' }]));
    await create(destinationRule);

    const w = await startRealWatch(server.kc, NS);
    const servedAt = (record: VersionRecord) => servedFromStore(w.store, record, PRODUCTPAGE);
    /** Provenance changes of every version after `from` up to `to` (another test's objects may publish between). */
    const changesSince = async (from: number, to: number) => {
      const out: { kind: string; resourceVersion?: string }[] = [];
      for (let v = from + 1; v <= to; v++)
        out.push(...((await w.store.getVersion('main', v))?.provenance?.changes ?? []));
      return out;
    };
    type RouteConfig = {
      virtual_hosts: {
        name: string;
        routes: { route?: { weighted_clusters?: { clusters: { name: string; weight: number }[] } } }[];
      }[];
    };
    const weights = async (record: VersionRecord) =>
      ((await servedAt(record)).routes.get('9080') as RouteConfig | undefined)?.virtual_hosts
        .find((v) => v.name === `${REVIEWS}:9080`)
        ?.routes[0]?.route?.weighted_clusters?.clusters.map((c) => [c.name, c.weight]);
    try {
      let record = await w.until('the first round', () => true);
      assert.equal(record.version, 1);
      let served = await servedAt(record);
      assert.ok(served.clusters.has(`outbound|9080|v2|${REVIEWS}`), 'subset clusters from the DestinationRule');
      assert.deepEqual(endpointIps(served.endpoints.get(`outbound|9080||${REVIEWS}`)), ['10.250.0.11']);
      assert.equal(await recompileStored(w.store, record), record.digest, 'stored inputs recompile to the same digest');

      // A VirtualService accepted by the real server: a new version whose provenance carries its resourceVersion.
      const vs = await create(virtualService([80, 20]));
      let before = record.version;
      record = await w.until('the 80/20 split', async (h) => (await weights(h)) !== undefined);
      assert.ok(record.version > before);
      assert.deepEqual(await weights(record), [
        [`outbound|9080|v1|${REVIEWS}`, 80],
        [`outbound|9080|v2|${REVIEWS}`, 20],
      ]);
      const change = (await changesSince(before, record.version)).find((c) => c.kind === 'VirtualService');
      assert.equal(change?.resourceVersion, vs.metadata?.resourceVersion);

      // An endpoint change: the second reviews pod becomes an endpoint.
      await ns.objects.replace({
        ...endpoints('reviews', [
          { ip: '10.250.0.11', pod: 'reviews-v1-1' },
          { ip: '10.250.0.12', pod: 'reviews-v2-1' },
        ]),
        metadata: { name: 'reviews', namespace: NS },
      });
      before = record.version;
      record = await w.until(
        'two reviews endpoints',
        async (h) => endpointIps((await servedAt(h)).endpoints.get(`outbound|9080||${REVIEWS}`)).length === 2,
      );
      assert.ok(record.version > before);
      served = await servedAt(record);
      assert.deepEqual(endpointIps(served.endpoints.get(`outbound|9080||${REVIEWS}`)), ['10.250.0.11', '10.250.0.12']);
      assert.deepEqual(endpointIps(served.endpoints.get(`outbound|9080|v2|${REVIEWS}`)), ['10.250.0.12']);

      // A new Service: its cluster appears.
      await create(service('ratings'));
      before = record.version;
      record = await w.until('the ratings cluster', async (h) =>
        (await servedAt(h)).clusters.has(`outbound|9080||ratings.${NS}.svc.cluster.local`),
      );
      assert.ok(record.version > before);
      assert.equal(await recompileStored(w.store, record), record.digest);
    } finally {
      await w.close();
    }
  },
);
