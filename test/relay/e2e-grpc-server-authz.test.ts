/**
 * End to end with real proxyless gRPC on both sides: `meshsnap compile` → store → `meshsnap relay`
 * → an xDS-enabled grpc-js server (XdsServer, gRFC A36) fetching its inbound Listener, and a
 * grpc-js-xds client dialling it through xds:///. A DENY AuthorizationPolicy on one method makes
 * that method fail with PERMISSION_DENIED (the server enforces the RBAC filter, gRFC A41) while the
 * other works; a new snapshot without the policy lets it through again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, startRelayProcess, type RelayProcess } from '../../bench/relay-process.js';
import { startXdsClientProcess, type RunResult, type XdsClientProcess } from './client-process.js';
import { freePort, startXdsServerProcess, type XdsServerProcess } from './xds-server-process.js';

const HOST = 'greeter.default.svc.cluster.local';
const TARGET = `xds:///${HOST}:7070`;
const HELLO = '/echo.Echo/Hello';
const BYE = '/echo.Echo/Bye';
const CLIENT = {
  id: 'sidecar~127.0.0.2~client.default~default.svc.cluster.local',
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default' },
  locality: { zone: 'z1' },
};
const SERVER = {
  id: 'sidecar~127.0.0.1~greeter-0.default~default.svc.cluster.local',
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default', LABELS: { app: 'greeter' }, INSTANCE_IPS: '127.0.0.1' },
  locality: { zone: 'z1' },
};
const WITHIN_MS = 20_000;

function meshYaml(port: number, denyBye: boolean): string {
  const docs = [
    `apiVersion: v1
kind: Service
metadata: { name: greeter, namespace: default }
spec:
  clusterIP: 10.96.0.80
  selector: { app: greeter }
  ports: [{ name: grpc-echo, port: 7070, targetPort: ${port}, protocol: TCP }]`,
    `apiVersion: v1
kind: Pod
metadata: { name: greeter-0, namespace: default, labels: { app: greeter } }
spec:
  serviceAccountName: greeter
  containers: [{ name: greeter, ports: [{ name: grpc-echo, containerPort: ${port}, protocol: TCP }] }]
status:
  phase: Running
  podIP: 127.0.0.1
  podIPs: [{ ip: 127.0.0.1 }]
  conditions: [{ type: Ready, status: "True" }]`,
    `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: greeter-0, namespace: default, labels: { kubernetes.io/service-name: greeter } }
addressType: IPv4
ports: [{ name: grpc-echo, port: ${port}, protocol: TCP }]
endpoints:
- addresses: [127.0.0.1]
  conditions: { ready: true, serving: true, terminating: false }
  targetRef: { kind: Pod, name: greeter-0, namespace: default }`,
  ];
  if (denyBye)
    docs.push(`apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: { name: no-bye, namespace: default }
spec:
  selector: { matchLabels: { app: greeter } }
  action: DENY
  rules: [{ to: [{ operation: { paths: ["${BYE}"] } }] }]`);
  return docs.join('\n---\n');
}

async function eventually(
  probe: () => Promise<RunResult>,
  done: (r: RunResult) => boolean,
  what: string,
): Promise<RunResult> {
  const deadline = Date.now() + WITHIN_MS;
  let last: RunResult | undefined;
  while (Date.now() < deadline) {
    last = await probe();
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`${what} not reached within ${WITHIN_MS} ms; last round: ${JSON.stringify(last)}`);
}

describe('proxyless gRPC server authorization end to end', { timeout: 120_000 }, () => {
  let dir = '';
  let store = '';
  let port = 0;
  let relay: RelayProcess | undefined;
  let server: XdsServerProcess | undefined;
  let client: XdsClientProcess | undefined;

  async function publish(denyBye: boolean): Promise<void> {
    const file = join(dir, 'mesh.yaml');
    writeFileSync(file, meshYaml(port, denyBye));
    const r = await runCli(['compile', file, '--store', store, '--quiet']);
    assert.equal(r.code, 0, `compile failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { status: string; diagnostics: { error: number } };
    assert.equal(out.status, 'published');
    assert.equal(out.diagnostics.error, 0, r.stderr);
  }

  const diag = (): string =>
    `\nrelay log:\n${relay?.logs().slice(-20).join('\n')}\nserver stderr:\n${server?.stderr().slice(-3000)}\nclient stderr:\n${client?.stderr().slice(-2000)}`;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meshsnap-e2e-authz-'));
    store = join(dir, 'store');
    port = await freePort();
    await publish(true);
    relay = await startRelayProcess(['--store', store, '--channel', 'main', '--poll-ms', '200']);
    server = startXdsServerProcess(relay.xdsPort, SERVER, port);
    await server.serving;
    client = startXdsClientProcess(relay.xdsPort, CLIENT);
  });

  after(async () => {
    await client?.close();
    await server?.close();
    await relay?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the DENY policy on Bye: Bye fails with PERMISSION_DENIED, Hello works', async () => {
    const hello = await client!.run(TARGET, 20, { deadlineMs: 10_000, path: HELLO });
    assert.deepEqual(hello.errors, {}, `Hello failed: ${JSON.stringify(hello.errorDetails)}${diag()}`);
    assert.equal(hello.counts.server, 20);
    const bye = await client!.run(TARGET, 20, { deadlineMs: 10_000, path: BYE });
    assert.deepEqual(bye.counts, {}, `Bye must be denied${diag()}`);
    assert.equal(bye.errors.PERMISSION_DENIED, 20, `${JSON.stringify(bye)}${diag()}`);
  });

  test('a new snapshot without the policy lets Bye through', async () => {
    await publish(false);
    await eventually(
      () => client!.run(TARGET, 10, { path: BYE }),
      (r) => r.counts.server === 10,
      'Bye answered by the server',
    );
    const hello = await client!.run(TARGET, 10, { path: HELLO });
    assert.equal(hello.counts.server, 10, diag());
  });
});
