/**
 * ServiceEntries and WorkloadEntries through the watcher against a REAL kube-apiserver
 * (../shared/tools/kube-local, with Istio's CRDs): a DNS entry and a STATIC entry selecting a
 * WorkloadEntry reach a sidecar of the namespace as clusters and endpoints, the stored inputs
 * recompile to the same digest, and moving the WorkloadEntry publishes its new address. Skipped
 * with the reason when no real API server is reachable.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { VersionRecord } from '../../src/snapshot/manifest.js';
import { realApiServer, type RealApiServer } from '../helpers/kube-local.js';
import { realNamespace, startRealWatch, type RealNamespace } from './real-watch.js';
import { recompileStored, servedFromStore } from './watch-harness.js';

const NS = `meshsnap-se-${Date.now().toString(36)}`;
type Obj = KubernetesObject & Record<string, unknown>;

const SIDECAR = { id: `sidecar~10.250.2.9~client-0.${NS}~${NS}.svc.cluster.local`, metadata: {} };
const DB_HOST = `db.${NS}.internal`;

const entries: Obj[] = [
  {
    apiVersion: 'networking.istio.io/v1beta1',
    kind: 'ServiceEntry',
    metadata: { name: 'api', namespace: NS },
    spec: {
      hosts: ['api.example.test'],
      ports: [{ number: 443, name: 'tls', protocol: 'TLS' }],
      resolution: 'DNS',
    },
  },
  {
    apiVersion: 'networking.istio.io/v1beta1',
    kind: 'ServiceEntry',
    metadata: { name: 'db', namespace: NS },
    spec: {
      hosts: [DB_HOST],
      addresses: ['240.240.9.9'],
      location: 'MESH_INTERNAL',
      resolution: 'STATIC',
      ports: [{ number: 5432, name: 'tcp-pg', protocol: 'TCP' }],
      workloadSelector: { labels: { app: 'db' } },
    },
  },
];
const workloadEntry = (address: string): Obj => ({
  apiVersion: 'networking.istio.io/v1beta1',
  kind: 'WorkloadEntry',
  metadata: { name: 'db-vm', namespace: NS, labels: { app: 'db' } },
  spec: { address, serviceAccount: 'db' },
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

/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded config_dump JSON */
type Json = any;

test(
  'ServiceEntries and a WorkloadEntry from a real kube-apiserver reach the sidecars of their namespace',
  { timeout: 120_000 },
  async (t) => {
    if ('skip' in server) {
      t.skip(server.skip);
      return;
    }
    for (const o of entries) await ns.create(o);
    await ns.create(workloadEntry('10.250.9.1'));

    const w = await startRealWatch(server.kc, NS);
    const dbEndpoints = async (record: VersionRecord): Promise<string[]> => {
      const served = await servedFromStore(w.store, record, SIDECAR).catch(() => undefined);
      const cla: Json = served?.endpoints.get(`outbound|5432||${DB_HOST}`);
      return (cla?.endpoints ?? []).flatMap((l: Json) =>
        l.lb_endpoints.map(
          (e: Json) => `${e.endpoint.address.socket_address.address}:${e.endpoint.address.socket_address.port_value}`,
        ),
      );
    };
    try {
      let record = await w.until('the entries', async (h) => (await dbEndpoints(h)).length > 0);
      const served = await servedFromStore(w.store, record, SIDECAR);
      const api: Json = served.clusters.get('outbound|443||api.example.test');
      assert.equal(api?.type, 'STRICT_DNS');
      assert.ok(served.listeners.has('240.240.9.9_5432'));
      assert.ok(served.listeners.has('0.0.0.0_443'));
      assert.deepEqual(await dbEndpoints(record), ['10.250.9.1:5432']);
      assert.equal(await recompileStored(w.store, record), record.digest, 'stored inputs (with the entries) recompile');

      const current = await ns.objects.read({ ...workloadEntry(''), metadata: { name: 'db-vm', namespace: NS } });
      await ns.objects.replace({ ...workloadEntry('10.250.9.2'), metadata: current.metadata });
      record = await w.until('the moved VM', async (h) => (await dbEndpoints(h))[0] === '10.250.9.2:5432');
      assert.deepEqual(await dbEndpoints(record), ['10.250.9.2:5432']);
    } finally {
      await w.close();
    }
  },
);
