/**
 * A Gateway through the watcher against a REAL kube-apiserver (../shared/tools/kube-local, with
 * Istio's CRDs): the ingress pod's router class is published with its listener and route config,
 * and a change of the bound VirtualService's host publishes a new version. Skipped with the reason
 * when no real API server is reachable.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { VersionRecord } from '../../src/snapshot/manifest.js';
import { realApiServer, type RealApiServer } from '../helpers/kube-local.js';
import { realNamespace, startRealWatch, type RealNamespace } from './real-watch.js';
import { recompileStored, servedFromStore } from './watch-harness.js';

const NS = `meshsnap-gw-${Date.now().toString(36)}`;
type Obj = KubernetesObject & Record<string, unknown>;

const ROUTER = {
  id: `router~10.250.1.3~ingress-0.${NS}~${NS}.svc.cluster.local`,
  metadata: { LABELS: { istio: 'ingressgateway' } },
};
const objectsToCreate: Obj[] = [
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: NS },
    spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }] },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'ingress', namespace: NS },
    spec: {
      selector: { istio: 'ingressgateway' },
      ports: [{ name: 'http2', port: 80, targetPort: 8080, protocol: 'TCP' }],
    },
  },
  {
    apiVersion: 'networking.istio.io/v1beta1',
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: NS },
    spec: {
      selector: { istio: 'ingressgateway' },
      servers: [{ port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }],
    },
  },
];
const virtualService = (host: string): Obj => ({
  apiVersion: 'networking.istio.io/v1beta1',
  kind: 'VirtualService',
  metadata: { name: 'web', namespace: NS },
  spec: {
    hosts: [host],
    gateways: ['gw'],
    http: [{ route: [{ destination: { host: 'web', port: { number: 8080 } } }] }],
  },
});

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

/** The ingress pod as if it ran. */
const runningIngressPod = () =>
  ns.runningPod(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'ingress-0', namespace: NS, labels: { istio: 'ingressgateway' } },
      spec: { containers: [{ name: 'istio-proxy', image: 'x', ports: [{ containerPort: 8080 }] }] },
    } as Obj,
    '10.250.1.3',
  );

/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded config_dump JSON */
type Json = any;

test(
  'a Gateway and its VirtualService from a real kube-apiserver reach the ingress router class',
  { timeout: 120_000 },
  async (t) => {
    if ('skip' in server) {
      t.skip(server.skip);
      return;
    }
    for (const o of objectsToCreate) await create(o);
    await runningIngressPod();
    await create(virtualService('web.example.com'));

    const w = await startRealWatch(server.kc, NS);
    const vhosts = async (record: VersionRecord): Promise<string[]> => {
      const served = await servedFromStore(w.store, record, ROUTER).catch(() => undefined);
      const rc: Json = served?.routes.get('http.8080');
      return (rc?.virtual_hosts ?? []).map((v: Json) => `${v.name} → ${v.routes[0].route.cluster}`);
    };
    try {
      let record = await w.until('the gateway route', async (h) => (await vhosts(h)).length > 0);
      const served = await servedFromStore(w.store, record, ROUTER);
      assert.deepEqual([...served.listeners.keys()], ['0.0.0.0_8080']);
      assert.deepEqual(await vhosts(record), [`web.example.com:80 → outbound|8080||web.${NS}.svc.cluster.local`]);
      assert.equal(await recompileStored(w.store, record), record.digest, 'stored inputs (with the Gateway) recompile');

      // Custom resources are replaced with the resourceVersion they were read at.
      const current = await ns.objects.read({ ...virtualService(''), metadata: { name: 'web', namespace: NS } });
      await ns.objects.replace({ ...virtualService('shop.example.com'), metadata: current.metadata });
      const before = record.version;
      record = await w.until(
        'the new host',
        async (h) => (await vhosts(h))[0]?.startsWith('shop.example.com') === true,
      );
      assert.ok(record.version > before);
      assert.deepEqual(await vhosts(record), [`shop.example.com:80 → outbound|8080||web.${NS}.svc.cluster.local`]);
    } finally {
      await w.close();
    }
  },
);
