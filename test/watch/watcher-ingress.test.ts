/**
 * Kubernetes Ingress and IngressClass through the watcher (fake API server): read, stored and
 * compiled; an Ingress of istio's class appearing gives the ingress gateway its routes, and every
 * round equals a full compile of its stored inputs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readStoredInputsIndex } from '../../src/snapshot/stored-inputs/index.js';

import { DEFAULT_RESOURCES, type KubeObject, type ResourceType } from '../helpers/fake-apiserver.js';
import { baseMesh, headRecompiled, servedFromStore, startHarness } from './watch-harness.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- walks decoded config_dump JSON */

const INGRESS_RESOURCES: ResourceType[] = [
  {
    group: 'networking.k8s.io',
    versions: ['v1'],
    kind: 'Ingress',
    plural: 'ingresses',
    singular: 'ingress',
    namespaced: true,
  },
  {
    group: 'networking.k8s.io',
    versions: ['v1'],
    kind: 'IngressClass',
    plural: 'ingressclasses',
    singular: 'ingressclass',
    namespaced: false,
  },
];

const GATEWAY_NODE = {
  id: 'router~10.244.0.50~istio-ingressgateway-0.istio-system~istio-system.svc.cluster.local',
  metadata: { NAMESPACE: 'istio-system', LABELS: { app: 'istio-ingressgateway', istio: 'ingressgateway' } },
};

const objects = (): KubeObject[] => [
  ...baseMesh(),
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'istio-ingressgateway-0',
      namespace: 'istio-system',
      labels: { app: 'istio-ingressgateway', istio: 'ingressgateway' },
    },
    spec: { nodeName: 'node-a', containers: [{ name: 'istio-proxy', ports: [{ containerPort: 8080 }] }] },
    status: {
      phase: 'Running',
      podIP: '10.244.0.50',
      podIPs: [{ ip: '10.244.0.50' }],
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  },
  {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'IngressClass',
    metadata: { name: 'istio' },
    spec: { controller: 'istio.io/ingress-controller' },
  },
];

const ingress = (host: string): KubeObject => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name: 'reviews', namespace: 'default' },
  spec: {
    ingressClassName: 'istio',
    rules: [
      {
        host,
        http: {
          paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'reviews', port: { number: 9080 } } } }],
        },
      },
    ],
  },
});

test(
  "an Ingress through the watcher: stored, compiled into the ingress gateway's routes, each round equal to a full compile of its stored inputs",
  { timeout: 60_000 },
  async () => {
    const h = await startHarness({
      server: { objects: objects(), resources: [...DEFAULT_RESOURCES, ...INGRESS_RESOURCES] },
    });
    try {
      const check = (what: string) => headRecompiled(h, what);
      await check('first round');

      h.server.apply(ingress('reviews.example.com'));
      await h.settle(1);
      let head = await check('an Ingress added');
      const index = await readStoredInputsIndex(h.store, head.inputs!);
      assert.deepEqual([...index.config.keys()].filter((k) => k.startsWith('Ingress')).sort(), [
        'Ingress/default/reviews',
        'IngressClass//istio',
      ]);
      const vhosts = () =>
        servedFromStore(h.store, head, GATEWAY_NODE).then((s) =>
          ((s.routes.get('http.80') as any)?.virtual_hosts ?? []).map((v: any) => v.name),
        );
      assert.deepEqual(await vhosts(), ['reviews.example.com:80']);

      h.server.apply(ingress('shop.example.com'));
      await h.settle(1);
      head = await check('the Ingress changed');
      assert.deepEqual(await vhosts(), ['shop.example.com:80']);
    } finally {
      await h.close();
    }
  },
);
