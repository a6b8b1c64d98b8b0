/**
 * An EnvoyFilter through the watcher against a REAL kube-apiserver (../shared/tools/kube-local,
 * with Istio's CRDs): its patch values (schemaless in the CRD, `@type` and all) come through the
 * API server intact, reach the namespace's sidecars (a Lua filter before the router, a cluster
 * MERGE), the stored inputs recompile to the same digest, and a changed EnvoyFilter is published.
 * Skipped with the reason when no real API server is reachable.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { VersionRecord } from '../../src/snapshot/manifest.js';
import { realApiServer, type RealApiServer } from '../helpers/kube-local.js';
import { realNamespace, startRealWatch, type RealNamespace } from './real-watch.js';
import { recompileStored, servedFromStore } from './watch-harness.js';

const NS = `meshsnap-ef-${Date.now().toString(36)}`;
type Obj = KubernetesObject & Record<string, unknown>;

const SIDECAR = { id: `sidecar~10.250.3.9~client-0.${NS}~${NS}.svc.cluster.local`, metadata: {} };
const API = 'outbound|80||api.example.test';

const entry: Obj = {
  apiVersion: 'networking.istio.io/v1beta1',
  kind: 'ServiceEntry',
  metadata: { name: 'api', namespace: NS },
  spec: { hosts: ['api.example.test'], ports: [{ number: 80, name: 'http', protocol: 'HTTP' }], resolution: 'DNS' },
};
const envoyFilter = (timeout: string): Obj => ({
  apiVersion: 'networking.istio.io/v1alpha3',
  kind: 'EnvoyFilter',
  metadata: { name: 'patches', namespace: NS },
  spec: {
    configPatches: [
      {
        applyTo: 'HTTP_FILTER',
        match: {
          context: 'SIDECAR_OUTBOUND',
          listener: {
            filterChain: {
              filter: {
                name: 'envoy.filters.network.http_connection_manager',
                subFilter: { name: 'envoy.filters.http.router' },
              },
            },
          },
        },
        patch: {
          operation: 'INSERT_BEFORE',
          value: {
            name: 'envoy.lua',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua',
              inlineCode: 'function envoy_on_request(h) end',
            },
          },
        },
      },
      {
        applyTo: 'CLUSTER',
        match: { context: 'SIDECAR_OUTBOUND', cluster: { service: 'api.example.test' } },
        patch: { operation: 'MERGE', value: { connect_timeout: timeout } },
      },
    ],
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

/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- decoded config_dump JSON */
type Json = any;

test(
  'an EnvoyFilter from a real kube-apiserver patches the sidecars of its namespace',
  { timeout: 120_000 },
  async (t) => {
    if ('skip' in server) {
      t.skip(server.skip);
      return;
    }
    await ns.create(entry);
    await ns.create(envoyFilter('3s'));
    const w = await startRealWatch(server.kc, NS);
    const timeout = async (record: VersionRecord): Promise<string | undefined> => {
      const served = await servedFromStore(w.store, record, SIDECAR).catch(() => undefined);
      return (served?.clusters.get(API) as Json)?.connect_timeout;
    };
    try {
      let record = await w.until('the EnvoyFilter applied', async (h) => (await timeout(h)) === '3s');
      const served = await servedFromStore(w.store, record, SIDECAR);
      const hcm: Json = (served.listeners.get('0.0.0.0_80') as Json)?.filter_chains
        ?.flatMap((c: Json) => c.filters ?? [])
        .find((f: Json) => f.name === 'envoy.filters.network.http_connection_manager')?.typed_config;
      const names = (hcm?.http_filters ?? []).map((f: Json) => f.name);
      assert.equal(names.at(-1), 'envoy.filters.http.router', names.join(','));
      assert.equal(names.at(-2), 'envoy.lua', names.join(','));
      assert.equal(
        hcm.http_filters.at(-2).typed_config['@type'],
        'type.googleapis.com/envoy.extensions.filters.http.lua.v3.Lua',
      );
      assert.equal(
        await recompileStored(w.store, record),
        record.digest,
        'stored inputs (with the EnvoyFilter) recompile',
      );

      const current = await ns.objects.read({ ...envoyFilter(''), metadata: { name: 'patches', namespace: NS } });
      await ns.objects.replace({ ...envoyFilter('5s'), metadata: current.metadata });
      record = await w.until('the changed EnvoyFilter', async (h) => (await timeout(h)) === '5s');
      assert.equal(await timeout(record), '5s');
    } finally {
      await w.close();
    }
  },
);
