/**
 * Locality failover end to end with the real proxyless client: `meshsnap compile` → store →
 * `meshsnap relay` → @grpc/grpc-js-xds. The echo service has one backend per zone and a
 * DestinationRule with outlier detection (with Istio's default mesh localityLbSetting that turns
 * failover on, as istiod does). A client says its zone in its bootstrap's node locality: it is
 * served its zone's endpoints at priority 0 and the other zone's at 1, so its calls stay in its
 * zone, and move to the other zone when its own backend goes away.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, startRelayProcess, type RelayProcess } from '../../bench/relay-process.js';
import { startXdsClientProcess, type RunResult, type XdsClientProcess } from './client-process.js';
import { startEchoBackend, type EchoBackend } from './grpc-backends.js';

const HOST = 'echo.default.svc.cluster.local';
const TARGET = `xds:///${HOST}:7070`;
const WITHIN_MS = 20_000;

const client = (name: string, zone: string) => ({
  id: `sidecar~127.0.0.1~${name}.default~default.svc.cluster.local`,
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default' },
  locality: { region: 'r1', zone },
});

function meshYaml(ports: { z1: number; z2: number }): string {
  const node = (zone: string) => `apiVersion: v1
kind: Node
metadata: { name: node-${zone}, labels: { topology.kubernetes.io/region: r1, topology.kubernetes.io/zone: ${zone} } }
`;
  const pod = (zone: string) => `apiVersion: v1
kind: Pod
metadata: { name: echo-${zone}, namespace: default, labels: { app: echo } }
spec: { nodeName: node-${zone}, serviceAccountName: echo }
status: { podIP: 127.0.0.1, conditions: [{ type: Ready, status: "True" }] }
`;
  const slice = (zone: string, port: number) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: echo-${zone}, namespace: default, labels: { kubernetes.io/service-name: echo } }
addressType: IPv4
ports: [{ name: grpc-echo, port: ${port}, protocol: TCP }]
endpoints:
- { addresses: [127.0.0.1], nodeName: node-${zone}, conditions: { ready: true }, targetRef: { kind: Pod, name: echo-${zone}, namespace: default } }
`;
  return [
    `apiVersion: v1
kind: Service
metadata: { name: echo, namespace: default }
spec: { clusterIP: 10.96.0.71, selector: { app: echo }, ports: [{ name: grpc-echo, port: 7070, targetPort: 7070 }] }
`,
    `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: { name: echo, namespace: default }
spec:
  host: ${HOST}
  trafficPolicy: { outlierDetection: { consecutive5xxErrors: 3, interval: 1s, baseEjectionTime: 30s } }
`,
    node('z1'),
    node('z2'),
    pod('z1'),
    pod('z2'),
    slice('z1', ports.z1),
    slice('z2', ports.z2),
  ].join('---\n');
}

describe('locality failover end to end with @grpc/grpc-js-xds', { timeout: 150_000 }, () => {
  let dir = '';
  let z1: EchoBackend | undefined;
  let z2: EchoBackend | undefined;
  let relay: RelayProcess | undefined;
  const clients: XdsClientProcess[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meshsnap-e2e-locality-'));
    const store = join(dir, 'store');
    z1 = await startEchoBackend('z1');
    z2 = await startEchoBackend('z2');
    const file = join(dir, 'mesh.yaml');
    writeFileSync(file, meshYaml({ z1: z1.port, z2: z2.port }));
    const r = await runCli(['compile', file, '--store', store, '--quiet']);
    assert.equal(r.code, 0, `compile failed: ${r.stderr}`);
    relay = await startRelayProcess(['--store', store, '--channel', 'main', '--poll-ms', '200']);
  });

  after(async () => {
    for (const c of clients) await c.close();
    await relay?.close();
    await z1?.close();
    await z2?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const start = (name: string, zone: string): XdsClientProcess => {
    const c = startXdsClientProcess(relay!.xdsPort, client(name, zone));
    clients.push(c);
    return c;
  };

  async function eventually(c: XdsClientProcess, done: (r: RunResult) => boolean, what: string): Promise<RunResult> {
    const deadline = Date.now() + WITHIN_MS;
    let last: RunResult | undefined;
    while (Date.now() < deadline) {
      last = await c.run(TARGET, 50, { deadlineMs: 5000 });
      if (done(last)) return last;
      await new Promise((res) => setTimeout(res, 200));
    }
    return assert.fail(`${what} not reached within ${WITHIN_MS} ms; last: ${JSON.stringify(last)}`);
  }

  test('each client stays in its own zone, placed in its locality class', async () => {
    const a = start('client-a', 'z1');
    const b = start('client-b', 'z2');
    const ra = await a.run(TARGET, 100, { deadlineMs: 10_000 });
    assert.deepEqual(ra.errors, {}, JSON.stringify(ra.errorDetails));
    assert.deepEqual(ra.counts, { z1: 100 });
    const rb = await b.run(TARGET, 100, { deadlineMs: 10_000 });
    assert.deepEqual(rb.counts, { z2: 100 });
    const body = (await relay!.getJson('/debug/proxies')) as unknown;
    const list = (Array.isArray(body) ? body : ((body as { proxies?: unknown[] }).proxies ?? [])) as {
      nodeId?: string;
      classId?: string;
    }[];
    const classOf = (name: string) => list.find((p) => p.nodeId?.includes(`~${name}.default~`))?.classId;
    assert.equal(classOf('client-a'), 'grpc/default@r1/z1/');
    assert.equal(classOf('client-b'), 'grpc/default@r1/z2/');
  });

  test("when its zone's backend goes away, a client's calls fail over to the other zone", async () => {
    const a = start('client-c', 'z1');
    const first = await a.run(TARGET, 20, { deadlineMs: 10_000 });
    assert.deepEqual(first.counts, { z1: 20 });
    await z1!.close();
    z1 = undefined;
    const r = await eventually(a, (x) => (x.counts.z2 ?? 0) === 50, 'every call on z2');
    assert.equal(r.counts.z2, 50);
  });
});
