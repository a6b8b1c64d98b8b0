/**
 * End to end with real proxyless gRPC on both sides: `meshsnap compile` → store → `meshsnap relay`
 * → an xDS-enabled grpc-js server (XdsServer, gRFC A36) fetching its inbound Listener, and a
 * grpc-js-xds client dialling it through xds:///. A DENY AuthorizationPolicy on one method makes
 * that method fail with PERMISSION_DENIED (the server enforces the RBAC filter, gRFC A41) while the
 * other works; a new snapshot without the policy lets it through again. Then STRICT mTLS: the
 * server takes its certificate from the bootstrap's certificate provider, refuses plaintext, serves
 * a client with a mesh certificate, and a DENY on that client's principal refuses it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, startRelayProcess, type RelayProcess } from '../../bench/relay-process.js';
import { startXdsClientProcess, type RunResult, type XdsClientProcess } from './client-process.js';
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { issue, makeCa, type IssuedCert } from './test-certs.js';
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
const STRICT_SERVER = {
  id: 'sidecar~127.0.0.3~greeter-strict-0.default~default.svc.cluster.local',
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default', LABELS: { app: 'greeter-strict' }, INSTANCE_IPS: '127.0.0.3' },
  locality: { zone: 'z1' },
};
const WITHIN_MS = 20_000;

interface Scenario {
  readonly denyBye?: boolean;
  readonly denyPrincipal?: string;
}

/** The Service, Pod and EndpointSlice of one greeter workload. */
function workload(name: string, ip: string, port: number, clusterIp: string): string[] {
  return [
    `apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: default }
spec:
  clusterIP: ${clusterIp}
  selector: { app: ${name} }
  ports: [{ name: grpc-echo, port: 7070, targetPort: ${port}, protocol: TCP }]`,
    `apiVersion: v1
kind: Pod
metadata: { name: ${name}-0, namespace: default, labels: { app: ${name} } }
spec:
  serviceAccountName: ${name}
  containers: [{ name: ${name}, ports: [{ name: grpc-echo, containerPort: ${port}, protocol: TCP }] }]
status:
  phase: Running
  podIP: ${ip}
  podIPs: [{ ip: ${ip} }]
  conditions: [{ type: Ready, status: "True" }]`,
    `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: ${name}-0, namespace: default, labels: { kubernetes.io/service-name: ${name} } }
addressType: IPv4
ports: [{ name: grpc-echo, port: ${port}, protocol: TCP }]
endpoints:
- addresses: [${ip}]
  conditions: { ready: true, serving: true, terminating: false }
  targetRef: { kind: Pod, name: ${name}-0, namespace: default }`,
  ];
}

/**
 * Two greeters: `greeter` (the authorization scenarios, plaintext) and `greeter-strict` (STRICT mTLS
 * from its first Listener on: grpc-js-xds 1.14.1's server crashes comparing a plaintext filter chain
 * with an mTLS one, so one server never switches between them).
 */
function meshYaml(port: number, strictPort: number, o: Scenario): string {
  const docs = [
    ...workload('greeter', '127.0.0.1', port, '10.96.0.80'),
    ...workload('greeter-strict', '127.0.0.3', strictPort, '10.96.0.81'),
  ];
  docs.push(`apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata: { name: greeter-strict, namespace: default }
spec: { selector: { matchLabels: { app: greeter-strict } }, mtls: { mode: STRICT } }`);
  if (o.denyPrincipal)
    docs.push(`apiVersion: security.istio.io/v1
kind: AuthorizationPolicy
metadata: { name: no-client, namespace: default }
spec:
  selector: { matchLabels: { app: greeter-strict } }
  action: DENY
  rules: [{ from: [{ source: { principals: ["${o.denyPrincipal}"] } }] }]`);
  if (o.denyBye)
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
  let strictPort = 0;
  let strictServer: XdsServerProcess | undefined;
  let relay: RelayProcess | undefined;
  let server: XdsServerProcess | undefined;
  let client: XdsClientProcess | undefined;

  let serverCert: IssuedCert | undefined;
  let clientCert: IssuedCert | undefined;

  async function publish(o: Scenario): Promise<void> {
    const file = join(dir, 'mesh.yaml');
    writeFileSync(file, meshYaml(port, strictPort, o));
    const r = await runCli(['compile', file, '--store', store, '--quiet']);
    assert.equal(r.code, 0, `compile failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { status: string; diagnostics: { error: number } };
    assert.equal(out.status, 'published');
    assert.equal(out.diagnostics.error, 0, r.stderr);
  }

  const diag = (): string =>
    `\nrelay log:\n${relay?.logs().slice(-20).join('\n')}\nserver stderr:\n${server?.stderr().slice(-3000)}${strictServer?.stderr().slice(-3000)}\nclient stderr:\n${client?.stderr().slice(-2000)}`;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meshsnap-e2e-authz-'));
    store = join(dir, 'store');
    port = await freePort();
    strictPort = await freePort();
    makeCa(dir);
    serverCert = issue(dir, 'greeter', ['URI:spiffe://cluster.local/ns/default/sa/greeter-strict', `DNS:${HOST}`]);
    clientCert = issue(dir, 'client', ['URI:spiffe://cluster.local/ns/default/sa/client']);
    await publish({ denyBye: true });
    relay = await startRelayProcess(['--store', store, '--channel', 'main', '--poll-ms', '200']);
    server = startXdsServerProcess(relay.xdsPort, SERVER, port, serverCert);
    await server.serving;
    client = startXdsClientProcess(relay.xdsPort, CLIENT);
  });

  after(async () => {
    await client?.close();
    await server?.close();
    await strictServer?.close();
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
    await publish({});
    await eventually(
      () => client!.run(TARGET, 10, { path: BYE }),
      (r) => r.counts.server === 10,
      'Bye answered by the server',
    );
    const hello = await client!.run(TARGET, 10, { path: HELLO });
    assert.equal(hello.counts.server, 10, diag());
  });

  /** One Hello straight to the server (no xDS), plaintext or with a client certificate. */
  function directHello(address: string, cert?: IssuedCert): Promise<string> {
    const Echo = grpc.makeGenericClientConstructor(
      {
        hello: {
          path: HELLO,
          requestStream: false,
          responseStream: false,
          requestSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
          requestDeserialize: (b: Buffer) => JSON.parse(b.toString()) as unknown,
          responseSerialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
          responseDeserialize: (b: Buffer) => JSON.parse(b.toString()) as { backend: string },
        },
      },
      'echo.Echo',
    );
    const creds = cert
      ? grpc.credentials.createSsl(
          readFileSync(cert.caCertificateFile),
          readFileSync(cert.privateKeyFile),
          readFileSync(cert.certificateFile),
        )
      : grpc.credentials.createInsecure();
    const c = new Echo(address, creds, { 'grpc.ssl_target_name_override': HOST });
    return new Promise((resolve) => {
      (
        c as unknown as {
          hello: (r: object, o: object, cb: (e: grpc.ServiceError | null, r?: { backend: string }) => void) => void;
        }
      ).hello({ id: 'direct' }, { deadline: Date.now() + 3000 }, (e, r) => {
        c.close();
        resolve(e ? grpc.status[e.code] : (r?.backend ?? '?'));
      });
    });
  }

  async function until(probe: () => Promise<string>, want: string, what: string): Promise<void> {
    const deadline = Date.now() + WITHIN_MS;
    let last = '';
    while (Date.now() < deadline) {
      last = await probe();
      if (last === want) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.fail(`${what}: still ${last} after ${WITHIN_MS} ms${diag()}`);
  }

  test('STRICT mTLS: plaintext refused, a client with a mesh certificate served, a DENY on its principal refuses it', async () => {
    const address = `127.0.0.3:${strictPort}`;
    strictServer = startXdsServerProcess(relay!.xdsPort, STRICT_SERVER, strictPort, serverCert, '127.0.0.3');
    await strictServer.serving;
    assert.equal(await directHello(address, clientCert), 'server', `an mTLS client served${diag()}`);
    assert.equal(await directHello(address), 'UNAVAILABLE', 'plaintext refused under STRICT');
    // The plaintext greeter is unaffected.
    assert.equal(await directHello(`127.0.0.1:${port}`), 'server');
    await publish({ denyPrincipal: 'cluster.local/ns/default/sa/client' });
    await until(() => directHello(address, clientCert), 'PERMISSION_DENIED', 'the denied principal refused');
  });
});
