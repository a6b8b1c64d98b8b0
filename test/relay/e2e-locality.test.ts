/**
 * Locality failover end to end with the real proxyless client: `meshsnap compile` → store →
 * `meshsnap relay` → @grpc/grpc-js-xds. The echo service has one backend per zone and a
 * DestinationRule with outlier detection (with Istio's default mesh localityLbSetting that turns
 * failover on, as istiod does). A client says its zone in its bootstrap's node locality: it is
 * served its zone's endpoints at priority 0 and the other zone's at 1, so its calls stay in its
 * zone, and move to the other zone when its own backend goes away.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunResult, XdsClientProcess } from './client-process.js';
import { ECHO_TARGET, startEchoPerNode, type EchoPerNode } from './echo-per-node.js';

const WITHIN_MS = 20_000;

const client = (name: string, zone: string) => ({
  id: `sidecar~127.0.0.1~${name}.default~default.svc.cluster.local`,
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default' },
  locality: { region: 'r1', zone },
});

const zone = (name: string) => ({
  name,
  labels: { 'topology.kubernetes.io/region': 'r1', 'topology.kubernetes.io/zone': name },
});

const SERVICE_AND_RULE = [
  `apiVersion: v1
kind: Service
metadata: { name: echo, namespace: default }
spec: { clusterIP: 10.96.0.71, selector: { app: echo }, ports: [{ name: grpc-echo, port: 7070, targetPort: 7070 }] }
`,
  `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: { name: echo, namespace: default }
spec:
  host: echo.default.svc.cluster.local
  trafficPolicy: { outlierDetection: { consecutive5xxErrors: 3, interval: 1s, baseEjectionTime: 30s } }
`,
];

describe('locality failover end to end with @grpc/grpc-js-xds', { timeout: 150_000 }, () => {
  let mesh: EchoPerNode | undefined;

  before(async () => {
    mesh = await startEchoPerNode([zone('z1'), zone('z2')], SERVICE_AND_RULE);
  });

  after(async () => {
    await mesh?.close();
  });

  async function eventually(c: XdsClientProcess, done: (r: RunResult) => boolean, what: string): Promise<RunResult> {
    const deadline = Date.now() + WITHIN_MS;
    let last: RunResult | undefined;
    while (Date.now() < deadline) {
      last = await c.run(ECHO_TARGET, 50, { deadlineMs: 5000 });
      if (done(last)) return last;
      await new Promise((res) => setTimeout(res, 200));
    }
    return assert.fail(`${what} not reached within ${WITHIN_MS} ms; last: ${JSON.stringify(last)}`);
  }

  test('each client stays in its own zone, placed in its locality class', async () => {
    const a = mesh!.client(client('client-a', 'z1'));
    const b = mesh!.client(client('client-b', 'z2'));
    const ra = await a.run(ECHO_TARGET, 100, { deadlineMs: 10_000 });
    assert.deepEqual(ra.errors, {}, JSON.stringify(ra.errorDetails));
    assert.deepEqual(ra.counts, { z1: 100 });
    const rb = await b.run(ECHO_TARGET, 100, { deadlineMs: 10_000 });
    assert.deepEqual(rb.counts, { z2: 100 });
    assert.equal(await mesh!.classOf('client-a'), 'grpc/default@r1/z1/');
    assert.equal(await mesh!.classOf('client-b'), 'grpc/default@r1/z2/');
  });

  test("when its zone's backend goes away, a client's calls fail over to the other zone", async () => {
    const a = mesh!.client(client('client-c', 'z1'));
    const first = await a.run(ECHO_TARGET, 20, { deadlineMs: 10_000 });
    assert.deepEqual(first.counts, { z1: 20 });
    await mesh!.backends.get('z1')?.close();
    mesh!.backends.set('z1', undefined);
    const r = await eventually(a, (x) => (x.counts.z2 ?? 0) === 50, 'every call on z2');
    assert.equal(r.counts.z2, 50);
  });
});
