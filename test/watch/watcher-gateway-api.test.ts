/**
 * The Gateway API kinds through the watcher (fake API server): read, stored and compiled like any
 * input. Every round's snapshot equals a full compile of its stored inputs (the watcher's
 * incremental path included), and a Gateway API Gateway and an Istio Gateway of the same
 * namespace and name are two objects (keys `KubernetesGateway/…` and `Gateway/…`), not one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadStoredInputs, readStoredInputsIndex } from '../../src/snapshot/stored-inputs/index.js';
import { DEFAULT_RESOURCES, GATEWAY_API_RESOURCES, type KubeObject } from '../helpers/fake-apiserver.js';
import { baseMesh, pod, headRecompiled, startHarness } from './watch-harness.js';

const GROUP = 'gateway.networking.k8s.io';
const objects = (): KubeObject[] => [
  ...baseMesh(),
  {
    apiVersion: `${GROUP}/v1`,
    kind: 'GatewayClass',
    metadata: { name: 'istio' },
    spec: { controllerName: 'istio.io/gateway-controller' },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'gw-istio', namespace: 'default' },
    spec: {
      selector: { [`${GROUP}/gateway-name`]: 'gw' },
      clusterIP: '10.96.0.99',
      ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
    },
  },
  {
    apiVersion: `${GROUP}/v1`,
    kind: 'Gateway',
    metadata: { name: 'gw', namespace: 'default' },
    spec: { gatewayClassName: 'istio', listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
  },
  route('reviews.example.com'),
];
function route(host: string): KubeObject {
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'HTTPRoute',
    metadata: { name: 'reviews', namespace: 'default' },
    spec: {
      parentRefs: [{ name: 'gw' }],
      hostnames: [host],
      rules: [{ backendRefs: [{ name: 'reviews', port: 9080 }] }],
    },
  };
}

test(
  'Gateway API objects through the watcher: each round equals a full compile of its stored inputs; a Gateway API and an Istio Gateway of one name are two objects',
  { timeout: 60_000 },
  async () => {
    const h = await startHarness({
      server: { objects: objects(), resources: [...DEFAULT_RESOURCES, ...GATEWAY_API_RESOURCES] },
    });
    try {
      const check = (what: string) => headRecompiled(h, what);
      let head = await check('first round');
      const keys = async () => {
        const index = await readStoredInputsIndex(h.store, head.inputs!);
        return [...index.config.keys()].filter((k) => /Gateway|Route/.test(k)).sort();
      };
      assert.deepEqual(await keys(), [
        'GatewayClass//istio',
        'HTTPRoute/default/reviews',
        'KubernetesGateway/default/gw',
      ]);

      h.server.apply(route('shop.example.com'));
      await h.settle(1);
      head = await check('a route change');
      const docs = await loadStoredInputs(h.store, head.inputs!);
      assert.ok(JSON.stringify(docs).includes('shop.example.com'));

      h.server.apply(pod('reviews-v1-1', 'reviews', 'v1', '10.244.0.31'));
      await h.settle(1);
      await check('an endpoint change');

      h.server.apply({
        apiVersion: 'networking.istio.io/v1',
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'default' },
        spec: {
          selector: { istio: 'ingressgateway' },
          servers: [{ port: { number: 8080, name: 'http', protocol: 'HTTP' }, hosts: ['*'] }],
        },
      });
      await h.settle(1);
      head = await check('an Istio Gateway of the same name');
      assert.deepEqual(await keys(), [
        'Gateway/default/gw',
        'GatewayClass//istio',
        'HTTPRoute/default/reviews',
        'KubernetesGateway/default/gw',
      ]);

      h.server.delete({ apiVersion: 'networking.istio.io/v1', kind: 'Gateway' }, 'default', 'gw');
      await h.settle(1);
      head = await check('the Istio Gateway deleted');
      assert.deepEqual(
        await keys(),
        ['GatewayClass//istio', 'HTTPRoute/default/reviews', 'KubernetesGateway/default/gw'],
        'the Gateway API Gateway stays',
      );
    } finally {
      await h.close();
    }
  },
);
