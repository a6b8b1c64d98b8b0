/**
 * `internalTrafficPolicy: Local` end to end with the real proxyless client: `meshsnap compile` →
 * store → `meshsnap relay` → @grpc/grpc-js-xds. The echo service (a DaemonSet's, say) has one
 * backend per node; a client says its node in its bootstrap's NODE_NAME metadata, as istio-agent
 * does, and every call of it reaches its own node's backend (istiod's NodeLocal endpoint filter).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, startRelayProcess, type RelayProcess } from '../../bench/relay-process.js';
import { startXdsClientProcess, type XdsClientProcess } from './client-process.js';
import { startEchoBackend, type EchoBackend } from './grpc-backends.js';

const HOST = 'echo.default.svc.cluster.local';
const TARGET = `xds:///${HOST}:7070`;

const client = (name: string, nodeName: string) => ({
  id: `sidecar~127.0.0.1~${name}.default~default.svc.cluster.local`,
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default', NODE_NAME: nodeName },
  locality: {},
});

function meshYaml(ports: { n1: number; n2: number }): string {
  const node = (name: string) => `apiVersion: v1
kind: Node
metadata: { name: ${name} }
`;
  const pod = (name: string) => `apiVersion: v1
kind: Pod
metadata: { name: echo-${name}, namespace: default, labels: { app: echo } }
spec: { nodeName: ${name}, serviceAccountName: echo }
status: { podIP: 127.0.0.1, conditions: [{ type: Ready, status: "True" }] }
`;
  const slice = (name: string, port: number) => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: echo-${name}, namespace: default, labels: { kubernetes.io/service-name: echo } }
addressType: IPv4
ports: [{ name: grpc-echo, port: ${port}, protocol: TCP }]
endpoints:
- { addresses: [127.0.0.1], nodeName: ${name}, conditions: { ready: true }, targetRef: { kind: Pod, name: echo-${name}, namespace: default } }
`;
  return [
    `apiVersion: v1
kind: Service
metadata: { name: echo, namespace: default }
spec:
  clusterIP: 10.96.0.72
  selector: { app: echo }
  internalTrafficPolicy: Local
  ports: [{ name: grpc-echo, port: 7070, targetPort: 7070 }]
`,
    node('n1'),
    node('n2'),
    pod('n1'),
    pod('n2'),
    slice('n1', ports.n1),
    slice('n2', ports.n2),
  ].join('---\n');
}

describe('internalTrafficPolicy Local end to end with @grpc/grpc-js-xds', { timeout: 120_000 }, () => {
  let dir = '';
  let n1: EchoBackend | undefined;
  let n2: EchoBackend | undefined;
  let relay: RelayProcess | undefined;
  const clients: XdsClientProcess[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meshsnap-e2e-node-local-'));
    const store = join(dir, 'store');
    n1 = await startEchoBackend('n1');
    n2 = await startEchoBackend('n2');
    const file = join(dir, 'mesh.yaml');
    writeFileSync(file, meshYaml({ n1: n1.port, n2: n2.port }));
    const r = await runCli(['compile', file, '--store', store, '--quiet']);
    assert.equal(r.code, 0, `compile failed: ${r.stderr}`);
    relay = await startRelayProcess(['--store', store, '--channel', 'main', '--poll-ms', '200']);
  });

  after(async () => {
    for (const c of clients) await c.close();
    await relay?.close();
    await n1?.close();
    await n2?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("each client reaches only its own node's backend, placed in its node class", async () => {
    const a = startXdsClientProcess(relay!.xdsPort, client('client-a', 'n1'));
    const b = startXdsClientProcess(relay!.xdsPort, client('client-b', 'n2'));
    clients.push(a, b);
    const ra = await a.run(TARGET, 50, { deadlineMs: 10_000 });
    assert.deepEqual(ra.errors, {}, JSON.stringify(ra.errorDetails));
    assert.deepEqual(ra.counts, { n1: 50 });
    const rb = await b.run(TARGET, 50, { deadlineMs: 10_000 });
    assert.deepEqual(rb.errors, {}, JSON.stringify(rb.errorDetails));
    assert.deepEqual(rb.counts, { n2: 50 });
    const body = (await relay!.getJson('/debug/proxies')) as unknown;
    const list = (Array.isArray(body) ? body : ((body as { proxies?: unknown[] }).proxies ?? [])) as {
      nodeId?: string;
      classId?: string;
    }[];
    const classOf = (name: string) => list.find((p) => p.nodeId?.includes(`~${name}.default~`))?.classId;
    assert.equal(classOf('client-a'), 'grpc/default#n1');
    assert.equal(classOf('client-b'), 'grpc/default#n2');
  });
});
