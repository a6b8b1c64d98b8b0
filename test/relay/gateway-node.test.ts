/** A gateway (router) proxy over the relay: placed by its labels, served its listeners and route configs. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { XDS_TYPE_URL } from '../../src/xds/type-urls.js';
import { compileFiles } from '../helpers/mesh.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';
import { fromBuilt } from './fixtures.js';
import { names, startHarness, type Harness } from './protocol-client.js';

const router = (labels: Record<string, string>) => ({
  id: 'router~10.244.0.20~istio-ingressgateway-0.istio-system~istio-system.svc.cluster.local',
  metadata: {
    fields: {
      LABELS: {
        structValue: { fields: Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, { stringValue: v }])) },
      },
    },
  },
});

let h: Harness;
before(async () => {
  h = await startHarness();
  const gateway = join(ISTIO_SAMPLES, 'bookinfo', 'networking', 'bookinfo-gateway.yaml');
  h.xds.setSnapshot(fromBuilt(compileFiles([BOOKINFO_STATE, gateway]).snapshot, 1));
});
after(() => h.close());

const T = { timeout: 10_000 };

test('the ingress gateway gets its listener and route config http.8080', T, async () => {
  const s = h.open();
  s.send({ node: router({ app: 'istio-ingressgateway', istio: 'ingressgateway' }), type_url: XDS_TYPE_URL.listeners });
  const lds = await s.next();
  assert.deepEqual(names(lds), ['0.0.0.0_8080']);
  s.send({ type_url: XDS_TYPE_URL.listeners, version_info: lds.version_info, response_nonce: lds.nonce });
  s.send({ type_url: XDS_TYPE_URL.routes, resource_names: ['http.8080'] });
  const rds = await s.next();
  assert.deepEqual(names(rds), ['http.8080']);
  const status = h.xds.statuses().find((p) => p.nodeId.startsWith('router~'));
  assert.equal(status?.classId, 'router/istio-system/istio-ingressgateway/default/bookinfo-gateway');
});

test('a router no Gateway selects is refused with NOT_FOUND, naming its labels', T, async () => {
  const s = h.open();
  s.send({ node: router({ app: 'other' }), type_url: XDS_TYPE_URL.listeners });
  const status = await s.status;
  assert.equal(status.code, grpc.status.NOT_FOUND);
  assert.match(status.details, /no Gateway selects a router with labels \{"app":"other"\}/);
});
