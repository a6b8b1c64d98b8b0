/**
 * EnvoyFilter through the watcher (fake API server): watched, stored, applied; adding, changing
 * and deleting it, and endpoint changes while it is there, each give what a full compile of the
 * round's stored inputs gives.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readStoredInputsIndex } from '../../src/snapshot/stored-inputs/index.js';
import { DEFAULT_RESOURCES, type KubeObject, type ResourceType } from '../helpers/fake-apiserver.js';
import {
  baseMesh,
  headRecompiled,
  pod,
  PRODUCTPAGE_NODE,
  servedFromStore,
  slice,
  startHarness,
} from './watch-harness.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- walks decoded config_dump JSON */

const ENVOY_FILTER_RESOURCE: ResourceType = {
  group: 'networking.istio.io',
  versions: ['v1alpha3'],
  kind: 'EnvoyFilter',
  plural: 'envoyfilters',
  singular: 'envoyfilter',
  namespaced: true,
};

const timeoutFilter = (timeout: string): KubeObject => ({
  apiVersion: 'networking.istio.io/v1alpha3',
  kind: 'EnvoyFilter',
  metadata: { name: 'reviews-timeout', namespace: 'istio-system' },
  spec: {
    configPatches: [
      {
        applyTo: 'CLUSTER',
        match: { context: 'SIDECAR_OUTBOUND', cluster: { service: 'reviews.default.svc.cluster.local' } },
        patch: { operation: 'MERGE', value: { connect_timeout: timeout } },
      },
    ],
  },
});

const REVIEWS = 'outbound|9080||reviews.default.svc.cluster.local';

test(
  'an EnvoyFilter through the watcher: stored, applied, changed, deleted; endpoint rounds with it equal a full compile',
  { timeout: 60_000 },
  async () => {
    const h = await startHarness({
      server: { objects: baseMesh(), resources: [...DEFAULT_RESOURCES, ENVOY_FILTER_RESOURCE] },
    });
    try {
      const timeout = async () => {
        const head = await headRecompiled(h, 'round');
        const served = await servedFromStore(h.store, head, PRODUCTPAGE_NODE);
        return (served.clusters.get(REVIEWS) as any)?.connect_timeout as string | undefined;
      };
      const before = await timeout();
      assert.ok(before && before !== '3s', String(before));

      h.server.apply(timeoutFilter('3s'));
      await h.settle(1);
      assert.equal(await timeout(), '3s');
      const head = await h.head();
      const index = await readStoredInputsIndex(h.store, head!.inputs!);
      assert.ok([...index.config.keys()].includes('EnvoyFilter/istio-system/reviews-timeout'));

      // An endpoint change while the EnvoyFilter is there: a full compile, the patch kept.
      h.server.apply(pod('reviews-v3-1', 'reviews', 'v3', '10.244.0.13'));
      h.server.apply(
        slice('reviews', [
          { ip: '10.244.0.11', pod: 'reviews-v1-1' },
          { ip: '10.244.0.12', pod: 'reviews-v2-1' },
          { ip: '10.244.0.13', pod: 'reviews-v3-1' },
        ]),
      );
      await h.settle(1);
      assert.equal(await timeout(), '3s');

      h.server.apply(timeoutFilter('4s'));
      await h.settle(1);
      assert.equal(await timeout(), '4s');

      h.server.delete('EnvoyFilter', 'istio-system', 'reviews-timeout');
      await h.settle(1);
      assert.equal(await timeout(), before);
    } finally {
      await h.close();
    }
  },
);
