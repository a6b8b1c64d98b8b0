/**
 * The mesh and processes of the per-node end-to-end tests (e2e-locality, e2e-node-local): Service
 * `echo` (ns default, port 7070) with one backend per Kubernetes node, each a grpc-js server on
 * 127.0.0.1 with a port of its own (an EndpointSlice each, whose endpoint names its node and pod);
 * compiled with `meshsnap compile` into a store a `meshsnap relay` process serves; proxyless
 * clients (@grpc/grpc-js-xds, child processes) connect to it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, startRelayProcess, type RelayProcess } from '../../bench/relay-process.js';
import { startXdsClientProcess, type ClientNode, type XdsClientProcess } from './client-process.js';
import { startEchoBackend, type EchoBackend } from './grpc-backends.js';

export const ECHO_TARGET = 'xds:///echo.default.svc.cluster.local:7070';

/** One node of the mesh: its name, its Node object's labels, and the backend (identity = the name) on it. */
export interface EchoNode {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
}

function meshYaml(nodes: readonly EchoNode[], ports: ReadonlyMap<string, number>, extra: readonly string[]): string {
  const docs = nodes.flatMap(({ name, labels }) => [
    `apiVersion: v1
kind: Node
metadata: { name: ${name}, labels: ${JSON.stringify(labels ?? {})} }
`,
    `apiVersion: v1
kind: Pod
metadata: { name: echo-${name}, namespace: default, labels: { app: echo } }
spec: { nodeName: ${name}, serviceAccountName: echo }
status: { podIP: 127.0.0.1, conditions: [{ type: Ready, status: "True" }] }
`,
    `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: { name: echo-${name}, namespace: default, labels: { kubernetes.io/service-name: echo } }
addressType: IPv4
ports: [{ name: grpc-echo, port: ${ports.get(name)}, protocol: TCP }]
endpoints:
- { addresses: [127.0.0.1], nodeName: ${name}, conditions: { ready: true }, targetRef: { kind: Pod, name: echo-${name}, namespace: default } }
`,
  ]);
  return [...extra, ...docs].join('---\n');
}

export interface EchoPerNode {
  readonly relay: RelayProcess;
  /** The backends by node name (a test may close one). */
  readonly backends: Map<string, EchoBackend | undefined>;
  /** A proxyless client with this node identity, closed with the rest. */
  client(node: ClientNode): XdsClientProcess;
  /** The class the relay placed a client (by its pod name) in, from /debug/proxies. */
  classOf(pod: string): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Starts a backend per node, compiles the mesh (`extra`: the Service and rules) and starts a relay over it. */
export async function startEchoPerNode(nodes: readonly EchoNode[], extra: readonly string[]): Promise<EchoPerNode> {
  const dir = mkdtempSync(join(tmpdir(), 'meshsnap-e2e-per-node-'));
  const backends = new Map<string, EchoBackend | undefined>();
  const clients: XdsClientProcess[] = [];
  let relay: RelayProcess | undefined;
  const close = async (): Promise<void> => {
    for (const c of clients) await c.close();
    await relay?.close();
    for (const b of backends.values()) await b?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const n of nodes) backends.set(n.name, await startEchoBackend(n.name));
    const ports = new Map([...backends].map(([name, b]) => [name, (b as EchoBackend).port]));
    const file = join(dir, 'mesh.yaml');
    writeFileSync(file, meshYaml(nodes, ports, extra));
    const store = join(dir, 'store');
    const r = await runCli(['compile', file, '--store', store, '--quiet']);
    assert.equal(r.code, 0, `compile failed: ${r.stderr}`);
    relay = await startRelayProcess(['--store', store, '--channel', 'main', '--poll-ms', '200']);
  } catch (e) {
    await close();
    throw e;
  }
  const started = relay;
  return {
    relay: started,
    backends,
    client(node) {
      const c = startXdsClientProcess(started.xdsPort, node);
      clients.push(c);
      return c;
    },
    async classOf(pod) {
      const body = (await started.getJson('/debug/proxies')) as unknown;
      const list = (Array.isArray(body) ? body : ((body as { proxies?: unknown[] }).proxies ?? [])) as {
        nodeId?: string;
        classId?: string;
      }[];
      return list.find((p) => p.nodeId?.includes(`~${pod}.default~`))?.classId;
    },
    close,
  };
}
