/**
 * `meshsnap watch --write-status` against a REAL kube-apiserver (../shared/tools/kube-local) with
 * the Gateway API CRDs (v1.2.1, CEL rules stripped for 1.20; installed when missing): a
 * GatewayClass, a Gateway fronted by a Service and an HTTPRoute that also carries another
 * controller's parent entry. The compiled statuses reach the status subresources, pass the CRDs'
 * schema, keep the other controller's entry, follow a spec change (observedGeneration, the flipped
 * condition's time moves, the others' stay) and are not rewritten by a round that changes nothing
 * in them. Skipped with the reason when no real API server is reachable.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { GATEWAY_CONTROLLER_NAME } from '../../src/model/object-status.js';
import { kubeRequest } from '../../src/watch/kube-http.js';
import { installGatewayApiCrds } from '../helpers/gateway-api-crds.js';
import { realApiServer, type RealApiServer } from '../helpers/kube-local.js';
import { realNamespace, startRealWatch, type RealNamespace } from './real-watch.js';

const NS = `meshsnap-gws-${Date.now().toString(36)}`;
const CLASS = `meshsnap-${NS}`;
const GROUP = 'gateway.networking.k8s.io';
const OTHER = 'example.net/another-controller';
type Obj = KubernetesObject & Record<string, unknown>;
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- status JSON read back

const paths = {
  gatewayClass: `/apis/${GROUP}/v1/gatewayclasses/${CLASS}`,
  gateway: `/apis/${GROUP}/v1/namespaces/${NS}/gateways/gw`,
  route: `/apis/${GROUP}/v1/namespaces/${NS}/httproutes/web`,
};
const foreignParent = {
  parentRef: { group: GROUP, kind: 'Gateway', name: 'theirs' },
  controllerName: OTHER,
  conditions: [
    {
      type: 'Accepted',
      status: 'True',
      reason: 'Accepted',
      message: 'theirs',
      lastTransitionTime: '2025-01-01T00:00:00Z',
    },
  ],
};
const route = (backend: string): Obj => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'HTTPRoute',
  metadata: { name: 'web', namespace: NS },
  spec: {
    parentRefs: [{ name: 'gw' }],
    hostnames: ['web.example.com'],
    rules: [{ backendRefs: [{ name: backend, port: 8080 }] }],
  },
});

let server: RealApiServer;
let ns: RealNamespace;

before(async () => {
  server = await realApiServer();
  if ('skip' in server) return;
  await installGatewayApiCrds(server.kc);
  ns = await realNamespace(server.kc, NS);
});

after(async () => {
  if (!('skip' in server)) await ns.cleanUp();
});

test(
  '--write-status on a real kube-apiserver: conditions read back, another controller kept, a change followed, an unchanged round writes nothing',
  { timeout: 120_000 },
  async (t) => {
    if ('skip' in server) {
      t.skip(server.skip);
      return;
    }
    const kc = server.kc;
    const get = async (path: string) => (await kubeRequest(kc, 'GET', path)) as Json;
    await ns.create({
      apiVersion: `${GROUP}/v1`,
      kind: 'GatewayClass',
      metadata: { name: CLASS },
      spec: { controllerName: GATEWAY_CONTROLLER_NAME },
    } as Obj);
    await ns.create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: NS },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }] },
    } as Obj);
    await ns.create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `gw-${CLASS}`, namespace: NS }, // the Service of a managed Gateway: <gateway>-<class>
      spec: {
        selector: { [`${GROUP}/gateway-name`]: 'gw' },
        ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
      },
    } as Obj);
    await ns.create({
      apiVersion: `${GROUP}/v1`,
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: NS },
      spec: { gatewayClassName: CLASS, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
    } as Obj);
    await ns.create(route('web'));
    // Another controller already reports on the route (as it would for a parent of its own).
    const created = await get(paths.route);
    await kubeRequest(kc, 'PUT', `${paths.route}/status`, {
      body: { ...created, status: { parents: [foreignParent] } },
    });

    const w = await startRealWatch(kc, NS, { writeStatus: { qps: 50, burst: 100 } });
    const ours = (r: Json): Json | undefined =>
      (r.status?.parents as Json[] | undefined)?.find((p) => p.controllerName === GATEWAY_CONTROLLER_NAME);
    const conditionsOf = (conds: Json[] | undefined) =>
      Object.fromEntries((conds ?? []).map((c) => [c.type, `${c.status} ${c.reason}`]));
    try {
      await w.until('the route status written', async () => ours(await get(paths.route)) !== undefined);
      await w.until(
        'the gateway status written',
        async () => (await get(paths.gateway)).status?.listeners?.length === 1,
      );

      const gatewayClass = await get(paths.gatewayClass);
      assert.deepEqual(conditionsOf(gatewayClass.status.conditions), { Accepted: 'True Accepted' });
      const gw = await get(paths.gateway);
      assert.deepEqual(conditionsOf(gw.status.conditions), {
        Accepted: 'True Accepted',
        Programmed: 'True Programmed',
        ResolvedRefs: 'True ResolvedRefs',
      });
      assert.equal(gw.status.listeners[0].name, 'http');
      assert.equal(gw.status.listeners[0].attachedRoutes, 1);
      for (const c of gw.status.conditions as Json[]) {
        assert.equal(c.observedGeneration, gw.metadata.generation);
        assert.match(c.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      }

      let r = await get(paths.route);
      assert.deepEqual(r.status.parents[0], foreignParent, 'the other controller entry is kept, first');
      assert.deepEqual(ours(r)?.parentRef, { group: GROUP, kind: 'Gateway', name: 'gw' });
      assert.deepEqual(conditionsOf(ours(r)?.conditions), {
        Accepted: 'True Accepted',
        ResolvedRefs: 'True ResolvedRefs',
      });
      const acceptedAt = (ours(r)?.conditions as Json[]).find((c) => c.type === 'Accepted')
        ?.lastTransitionTime as string;

      // A round that changes nothing in the statuses (a new Service) writes none of them.
      const rv = {
        route: r.metadata.resourceVersion,
        gateway: gw.metadata.resourceVersion,
        cls: gatewayClass.metadata.resourceVersion,
      };
      const before = w.watcher.rounds.length;
      await ns.create({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'unrelated', namespace: NS },
        spec: { selector: { app: 'x' }, ports: [{ name: 'http', port: 9090, protocol: 'TCP' }] },
      } as Obj);
      await w.until('a round with the new Service', () => w.watcher.rounds.length > before);
      await w.watcher.idle();
      assert.deepEqual(
        {
          route: (await get(paths.route)).metadata.resourceVersion,
          gateway: (await get(paths.gateway)).metadata.resourceVersion,
          cls: (await get(paths.gatewayClass)).metadata.resourceVersion,
        },
        rv,
        'no status written on an unchanged round',
      );

      // The route's backend goes missing: ResolvedRefs flips (new time), Accepted keeps its time; generation 2.
      r = await get(paths.route);
      await kubeRequest(kc, 'PUT', paths.route, { body: { ...route('nope'), metadata: r.metadata } });
      await w.until('ResolvedRefs False', async () =>
        ((ours(await get(paths.route))?.conditions as Json[] | undefined) ?? []).some(
          (c) => c.type === 'ResolvedRefs' && c.status === 'False',
        ),
      );
      r = await get(paths.route);
      assert.equal(r.metadata.generation, 2);
      const conds = ours(r)?.conditions as Json[];
      assert.deepEqual(conditionsOf(conds), { Accepted: 'True Accepted', ResolvedRefs: 'False BackendNotFound' });
      for (const c of conds) assert.equal(c.observedGeneration, 2, JSON.stringify(c));
      assert.equal(
        conds.find((c) => c.type === 'Accepted')?.lastTransitionTime,
        acceptedAt,
        'Accepted did not change status: time kept',
      );
      assert.deepEqual(r.status.parents[0], foreignParent);
    } finally {
      await w.close();
    }
  },
);
