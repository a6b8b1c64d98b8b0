/**
 * GAMMA end to end with the real proxyless client: a GRPCRoute whose parentRef is the Service
 * `echo` (Gateway API for mesh traffic, as Istio applies it to sidecars and proxyless clients)
 * → `meshsnap compile` → store → `meshsnap relay` (child process) → @grpc/grpc-js-xds (child
 * process) → two grpc-js backends. Its rules: `echo.Echo/Bye` goes to echo-v2 only, everything else
 * is split 80/20 between the Services echo-v1 and echo-v2; the next version moves the split to 0/100.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, startRelayProcess, type RelayProcess } from '../../bench/relay-process.js';
import { startXdsClientProcess, share, type RunResult, type XdsClientProcess } from './client-process.js';
import { ECHO_PORT, ECHO_TARGET } from './echo-mesh.js';
import { startEchoBackend, type EchoBackend } from './grpc-backends.js';

const NODE = {
  id: 'sidecar~127.0.0.1~client.default~default.svc.cluster.local',
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default' },
  locality: { zone: 'z1' },
};
const HELLO = '/echo.Echo/Hello';
const BYE = '/echo.Echo/Bye';
const CALLS = 400;
const SWITCH_WITHIN_MS = 20_000;

const service = (name: string, selector: string, ip: string): string => `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: default }
spec:
  type: ClusterIP
  clusterIP: ${ip}
  clusterIPs: [${ip}]
  selector: { ${selector} }
  ports: [{ name: grpc-echo, port: ${ECHO_PORT}, targetPort: 7070, protocol: TCP }]
`;
const pod = (version: string): string => `apiVersion: v1
kind: Pod
metadata: { name: echo-${version}, namespace: default, labels: { app: echo, version: ${version} } }
spec:
  containers: [{ name: echo, ports: [{ name: grpc-echo, containerPort: 7070, protocol: TCP }] }]
status:
  phase: Running
  podIP: 127.0.0.1
  podIPs: [{ ip: 127.0.0.1 }]
  conditions: [{ type: Ready, status: "True" }]
`;
/** Both backends run on 127.0.0.1 with their own port: one slice per Service and backend. */
const slice = (svc: string, version: string, port: number): string => `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${svc}-${version}, namespace: default, labels: { kubernetes.io/service-name: ${svc} } }
addressType: IPv4
ports: [{ name: grpc-echo, port: ${port}, protocol: TCP }]
endpoints:
- addresses: [127.0.0.1]
  conditions: { ready: true, serving: true, terminating: false }
  targetRef: { kind: Pod, name: echo-${version}, namespace: default }
`;

/** The mesh, with the GAMMA GRPCRoute splitting `weights` (v1/v2) and sending Bye to v2. */
function meshYaml(ports: { v1: number; v2: number }, weights: { v1: number; v2: number }): string {
  const backend = (v: string, weight: number) => `{ name: echo-${v}, port: ${ECHO_PORT}, weight: ${weight} }`;
  return [
    `apiVersion: v1\nkind: Namespace\nmetadata: { name: default }\n`,
    service('echo', 'app: echo', '10.96.0.70'),
    service('echo-v1', 'app: echo, version: v1', '10.96.0.71'),
    service('echo-v2', 'app: echo, version: v2', '10.96.0.72'),
    pod('v1'),
    pod('v2'),
    slice('echo', 'v1', ports.v1),
    slice('echo', 'v2', ports.v2),
    slice('echo-v1', 'v1', ports.v1),
    slice('echo-v2', 'v2', ports.v2),
    `apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: { name: echo, namespace: default }
spec:
  parentRefs: [{ group: "", kind: Service, name: echo, port: ${ECHO_PORT} }]
  rules:
  - matches: [{ method: { service: echo.Echo, method: Bye } }]
    backendRefs: [${backend('v2', 1)}]
  - backendRefs: [${backend('v1', weights.v1)}, ${backend('v2', weights.v2)}]
`,
  ].join('---\n');
}

async function eventually(
  probe: () => Promise<RunResult>,
  done: (r: RunResult) => boolean,
  what: string,
): Promise<RunResult> {
  const deadline = Date.now() + SWITCH_WITHIN_MS;
  let last: RunResult | undefined;
  while (Date.now() < deadline) {
    last = await probe();
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`${what} not reached within ${SWITCH_WITHIN_MS} ms; last round: ${JSON.stringify(last)}`);
}

describe('GAMMA GRPCRoute end to end with @grpc/grpc-js-xds', { timeout: 150_000 }, () => {
  let dir = '';
  let store = '';
  let v1: EchoBackend | undefined;
  let v2: EchoBackend | undefined;
  let relay: RelayProcess | undefined;
  let client: XdsClientProcess | undefined;

  async function publish(weights: { v1: number; v2: number }): Promise<void> {
    const file = join(dir, 'mesh.yaml');
    writeFileSync(file, meshYaml({ v1: v1!.port, v2: v2!.port }, weights));
    const r = await runCli(['compile', file, '--store', store]);
    assert.equal(r.code, 0, `compile failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      status: string;
      diagnostics: { error: number; warning: number };
    };
    assert.equal(out.status, 'published');
    assert.deepEqual(out.diagnostics, { error: 0, warning: 0 }, r.stderr);
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meshsnap-e2e-gamma-'));
    store = join(dir, 'store');
    v1 = await startEchoBackend('v1');
    v2 = await startEchoBackend('v2');
    await publish({ v1: 80, v2: 20 });
    relay = await startRelayProcess(['--store', store, '--channel', 'main', '--poll-ms', '200']);
    client = startXdsClientProcess(relay.xdsPort, NODE);
  });

  after(async () => {
    await client?.close();
    await relay?.close();
    await v1?.close();
    await v2?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const diag = (): string =>
    `\nrelay log:\n${relay?.logs().slice(-20).join('\n')}\nclient stderr:\n${client?.stderr().slice(-3000)}`;

  test('the GRPCRoute stored its status: accepted by the Service parent, references resolved', async () => {
    const r = await runCli(['diagnostics', '--store', store]);
    assert.equal(r.code, 0, r.stderr);
    const statuses = r.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { code: string; kind?: string; name?: string; status?: unknown })
      .filter((d) => d.code === 'gateway-api-status' && d.kind === 'GRPCRoute');
    assert.deepEqual(
      statuses.map((d) => d.status),
      [
        {
          parents: [
            {
              parentRef: { group: '', kind: 'Service', name: 'echo', port: ECHO_PORT },
              controllerName: 'istio.io/gateway-controller',
              conditions: [
                {
                  type: 'Accepted',
                  status: 'True',
                  reason: 'Accepted',
                  message: 'Route was valid',
                },
                {
                  type: 'ResolvedRefs',
                  status: 'True',
                  reason: 'ResolvedRefs',
                  message: 'All references resolved',
                },
              ],
            },
          ],
        },
      ],
      r.stdout.slice(0, 3000),
    );
  });

  test('Hello is split 80/20 across echo-v1 and echo-v2 by the route weights', async () => {
    const r = await client!.run(ECHO_TARGET, CALLS, { deadlineMs: 10_000, path: HELLO });
    assert.deepEqual(r.errors, {}, `calls failed: ${JSON.stringify(r.errorDetails)}${diag()}`);
    const v1Share = share(r, 'v1', CALLS);
    assert.ok(
      v1Share >= 0.7 && v1Share <= 0.9,
      `v1 got ${(v1Share * 100).toFixed(1)} % (want 70–90 %): ${JSON.stringify(r.counts)}`,
    );
  });

  test('the method match sends every Bye to echo-v2', async () => {
    const r = await client!.run(ECHO_TARGET, 100, { deadlineMs: 10_000, path: BYE });
    assert.deepEqual(r.errors, {}, `calls failed: ${JSON.stringify(r.errorDetails)}${diag()}`);
    assert.deepEqual(r.counts, { v2: 100 });
  });

  test('a new version with weights 0/100 moves Hello to echo-v2', async () => {
    await publish({ v1: 0, v2: 100 });
    const r = await eventually(
      () => client!.run(ECHO_TARGET, 100, { path: HELLO }),
      (x) => (x.counts.v2 ?? 0) === 100,
      'every Hello on v2',
    );
    assert.deepEqual(r.counts, { v2: 100 });
  });
});
