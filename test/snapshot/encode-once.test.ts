import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSnapshot } from '../../src/snapshot/build.js';
import { ResourceEncoder } from '../../src/snapshot/encoder.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { INFO, cla, edsCluster, httpListener, output, routeConfig } from './sample-output.js';

// 12.5k services → 12.5k clusters + 12.5k CLAs, plus routes/listeners and 50 namespaces of route configs ≈ 50k resources.
test('buildSnapshot of ~50k resources encodes each resource once; a warm encoder encodes nothing again', () => {
  const services = 12_500;
  const names = Array.from({ length: services }, (_, i) => `outbound|8080||svc${i}.ns${i % 50}.svc.cluster.local`);
  const groups: Parameters<typeof output>[0] = {
    outbound: { clusters: names.map((n) => edsCluster(n)) },
    endpoints: {
      endpoints: names.map((n, i) =>
        cla(n, [`10.${(i >> 8) & 255}.${i & 255}.1`, `10.${(i >> 8) & 255}.${i & 255}.2`]),
      ),
    },
    'outbound-listeners': {
      listeners: Array.from({ length: 250 }, (_, p) => httpListener(`0.0.0.0_${8000 + p}`, 8000 + p, String(8000 + p))),
    },
  };
  const classes = [];
  for (let ns = 0; ns < 50; ns++) {
    groups[`routes/ns${ns}`] = {
      routes: Array.from({ length: 250 }, (_, p) =>
        routeConfig(String(8000 + p), [names[(ns * 250 + p) % services] as string]),
      ),
    };
    groups[`grpc/ns${ns}`] = {
      routes: Array.from({ length: 250 }, (_, p) =>
        routeConfig(`svc${p}.ns${ns}.svc.cluster.local:8080`, [names[(ns * 250 + p) % services] as string]),
      ),
    };
    classes.push({
      id: `sidecar/ns${ns}/_`,
      generator: 'sidecar' as const,
      namespace: `ns${ns}`,
      services: [],
      groups: ['outbound', 'endpoints', 'outbound-listeners', `routes/ns${ns}`],
    });
    classes.push({
      id: `grpc/ns${ns}`,
      generator: 'grpc' as const,
      namespace: `ns${ns}`,
      services: [],
      groups: ['outbound', 'endpoints', `grpc/ns${ns}`],
    });
  }
  const out = output(groups, classes);
  let total = 0;
  for (const t of out.groups.values()) total += t.clusters.size + t.endpoints.size + t.listeners.size + t.routes.size;
  assert.ok(total >= 50_000, `${total} resources`);

  // Work is counted, not timed (speed is the benchmark's job: bench/): each resource is encoded
  // exactly once, and a rebuild with the same encoder encodes nothing again.
  const encoder = new ResourceEncoder(nodeSha256Hex);
  const snap = buildSnapshot(out, INFO, { encoder, hasher: nodeSha256Hex });
  assert.equal(encoder.encodes, total, 'each resource encoded once');
  const again = buildSnapshot(out, INFO, { encoder, hasher: nodeSha256Hex });
  assert.equal(again.digest, snap.digest);
  assert.equal(encoder.encodes, total, 'a warm encoder encodes nothing again');
  // The same bytes as encoding each resource on its own.
  const fresh = buildSnapshot(out, INFO, { hasher: nodeSha256Hex });
  assert.equal(fresh.digest, snap.digest);
});
