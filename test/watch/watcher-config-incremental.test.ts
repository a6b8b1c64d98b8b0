import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileDocuments } from '../../src/pipeline.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { baseMesh, destinationRule, recompileStored, service, startHarness, virtualService } from './watch-harness.js';

type Obj = ReturnType<typeof service>;
const key = (o: Obj): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

test(
  'VirtualService, DestinationRule and Service events: each round a snapshot delta, the published digest a full compile and build',
  { timeout: 60_000 },
  async () => {
    const h = await startHarness();
    try {
      // The reference compile reads the objects as the API server holds them: with the
      // creationTimestamp it sets, which the compile reads of some kinds (VirtualServices' order).
      const held = (o: Obj): Obj =>
        (h.server.get({ apiVersion: o.apiVersion, kind: o.kind }, o.metadata.namespace, o.metadata.name) as Obj) ?? o;
      const objects = new Map(baseMesh().map((o) => [key(o), held(o)]));
      const host = 'reviews.default.svc.cluster.local';
      const ratings = service('ratings', 9080);
      const steps: { label: string; put?: Obj; remove?: Obj }[] = [
        { label: 'new DestinationRule', put: destinationRule(host) },
        { label: 'new VirtualService', put: virtualService(host, [80, 20]) },
        { label: 'weight change', put: virtualService(host, [30, 70]) },
        { label: 'new Service (a new class)', put: ratings },
        {
          label: 'Service port change',
          put: {
            ...ratings,
            spec: {
              ...(ratings['spec'] as object),
              ports: [{ name: 'http', port: 9081, targetPort: 9080, protocol: 'TCP' }],
            },
          },
        },
        { label: 'Service deleted (its class and inbound group go)', remove: ratings },
        { label: 'VirtualService deleted', remove: virtualService(host, [30, 70]) },
        { label: 'DestinationRule deleted', remove: destinationRule(host) },
      ];
      for (const step of steps) {
        if (step.put) {
          objects.set(key(step.put), h.server.apply(step.put) as Obj);
        } else if (step.remove) {
          const o = step.remove;
          h.server.delete({ apiVersion: o.apiVersion, kind: o.kind }, o.metadata.namespace, o.metadata.name);
          objects.delete(key(o));
        }
        await h.settle(1);
        const round = h.watcher.rounds.at(-1)!;
        assert.equal(round.mode, 'incremental', step.label);
        assert.equal(round.publish, 'published', step.label);

        const head = (await h.head())!;
        const docs = [...objects.values()].map((object, index) => ({
          file: 'all.yaml',
          index,
          object: { ...object, metadata: { ...object.metadata, uid: 'x', resourceVersion: '1' } },
        }));
        const full = compileDocuments(docs, { hasher: nodeSha256Hex });
        assert.equal(head.digest, full.snapshot.digest, step.label);
        assert.equal(head.inputs, full.stored.digest, step.label);
        assert.equal(await recompileStored(h.store, head), head.digest, step.label);
      }
    } finally {
      await h.close();
    }
  },
);
