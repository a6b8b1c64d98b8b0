import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSnapshot } from '../../src/snapshot/build.js';
import { ResourceEncoder } from '../../src/snapshot/encoder.js';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { encodeMessage } from '../../src/xds/proto.js';
import { XDS_TYPE_NAME, XDS_TYPES } from '../../src/xds/type-urls.js';
import { INFO, cla, edsCluster, httpListener, output, routeConfig } from './sample-output.js';

// 12.5k services → 12.5k clusters + 12.5k CLAs, plus routes/listeners and 50 namespaces of route configs ≈ 50k resources.
test('buildSnapshot of ~50k resources with the node:crypto hasher costs little more than encoding each resource once', () => {
  const services = 12_500;
  const names = Array.from({ length: services }, (_, i) => `outbound|8080||svc${i}.ns${i % 50}.svc.cluster.local`);
  const groups: Parameters<typeof output>[0] = {
    outbound: { clusters: names.map((n) => edsCluster(n)) },
    endpoints: { endpoints: names.map((n, i) => cla(n, [`10.${(i >> 8) & 255}.${i & 255}.1`, `10.${(i >> 8) & 255}.${i & 255}.2`])) },
    'outbound-listeners': { listeners: Array.from({ length: 250 }, (_, p) => httpListener(`0.0.0.0_${8000 + p}`, 8000 + p, String(8000 + p))) },
  };
  const classes = [];
  for (let ns = 0; ns < 50; ns++) {
    groups[`routes/ns${ns}`] = { routes: Array.from({ length: 250 }, (_, p) => routeConfig(String(8000 + p), [names[(ns * 250 + p) % services] as string])) };
    groups[`grpc/ns${ns}`] = { routes: Array.from({ length: 250 }, (_, p) => routeConfig(`svc${p}.ns${ns}.svc.cluster.local:8080`, [names[(ns * 250 + p) % services] as string])) };
    classes.push({ id: `sidecar/ns${ns}/_`, generator: 'sidecar' as const, namespace: `ns${ns}`, services: [], groups: ['outbound', 'endpoints', 'outbound-listeners', `routes/ns${ns}`] });
    classes.push({ id: `grpc/ns${ns}`, generator: 'grpc' as const, namespace: `ns${ns}`, services: [], groups: ['outbound', 'endpoints', `grpc/ns${ns}`] });
  }
  const out = output(groups, classes);
  let total = 0;
  for (const t of out.groups.values()) total += t.clusters.size + t.endpoints.size + t.listeners.size + t.routes.size;
  assert.ok(total >= 50_000, `${total} resources`);

  // The unavoidable work, measured on this machine now (it is shared, so absolute times vary):
  // encoding and hashing every resource once.
  // CPU time of this process, not wall clock: other processes' load does not count.
  const cpuMs = (f: () => void): number => {
    const u0 = process.cpuUsage();
    f();
    const u = process.cpuUsage(u0);
    return (u.user + u.system) / 1000;
  };
  const baseline = cpuMs(() => {
    for (const t of out.groups.values()) for (const type of XDS_TYPES) for (const m of t[type].values()) nodeSha256Hex(encodeMessage(XDS_TYPE_NAME[type], m));
  });

  const encoder = new ResourceEncoder(nodeSha256Hex);
  let snap: ReturnType<typeof buildSnapshot> | undefined;
  let again: ReturnType<typeof buildSnapshot> | undefined;
  const cold = cpuMs(() => (snap = buildSnapshot(out, INFO, { encoder, hasher: nodeSha256Hex })));
  const warm = cpuMs(() => (again = buildSnapshot(out, INFO, { encoder, hasher: nodeSha256Hex })));
  assert.ok(snap && again);
  assert.equal(again.digest, snap.digest);
  assert.equal(encoder.encodes, total);
  console.log(`# ${total} resources (CPU time): encode+hash alone ${baseline.toFixed(0)} ms, cold build ${cold.toFixed(0)} ms, rebuild with warm encoder ${warm.toFixed(0)} ms`);
  // Consistency checking, sorting and the document must stay a fraction of the encoding work
  // (an accidental quadratic step would blow this up), whatever the machine's load.
  assert.ok(cold < 3 * baseline + 300, `cold build took ${cold.toFixed(0)} ms, encoding alone ${baseline.toFixed(0)} ms`);
  assert.ok(warm < cold, 'a warm encoder skips encoding');
});
