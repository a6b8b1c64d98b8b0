/**
 * `explain` on a compiled ingress gateway (router node placed in its gateway class): the HTTPS
 * server of the gateway-tls-simple golden case terminates TLS by SNI and routes by path to the
 * bookinfo services, and its plain HTTP server redirects to HTTPS (require_tls).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { explain, type ExplainRequest } from '../../src/explain/index.js';
import { explainRequest } from '../helpers/explain-request.js';
import { compileFiles, served } from '../helpers/mesh.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES, REPO } from '../helpers/paths.js';

const ROUTER = {
  id: 'router~10.244.0.20~istio-ingressgateway-0.istio-system~istio-system.svc.cluster.local',
  metadata: { NAMESPACE: 'istio-system', LABELS: { app: 'istio-ingressgateway', istio: 'ingressgateway' } },
};

const gateway = served(
  compileFiles([
    BOOKINFO_STATE,
    join(ISTIO_SAMPLES, 'bookinfo', 'networking', 'destination-rule-all.yaml'),
    join(REPO, 'test', 'golden', 'gateway-tls-simple', 'inputs', 'gateway.yaml'),
  ]),
  ROUTER,
);

const request = (over: Partial<ExplainRequest>): ExplainRequest =>
  explainRequest({
    host: 'bookinfo.example.com',
    port: 8443,
    protocol: 'h2',
    tls: true,
    sni: 'bookinfo.example.com',
    path: '/productpage',
    ...over,
  });

test('a gateway node is placed in its router class', () => {
  assert.match(gateway.classId, /^router\/istio-system\//);
});

test('HTTPS on the gateway: SNI chain, https.443… route config, /productpage → productpage', () => {
  const e = explain(gateway.resources, request({}));
  assert.equal(e.outcome, 'routed', e.summary);
  assert.equal(e.listener?.name, '0.0.0.0_8443');
  assert.match(String(e.routeConfig?.name), /^https\.443\./);
  assert.equal(e.virtualHost?.name, 'bookinfo.example.com:443');
  assert.deepEqual(
    e.clusters?.map((c) => c.name),
    ['outbound|9080||productpage.default.svc.cluster.local'],
  );
  assert.ok(e.provenance.some((p) => p.kind === 'VirtualService'));
});

test('an SNI the gateway does not serve finds no filter chain', () => {
  const e = explain(gateway.resources, request({ sni: 'other.example.com', host: 'other.example.com' }));
  assert.notEqual(e.outcome, 'routed', e.summary);
});
