/**
 * A real proxyless gRPC server (@grpc/grpc-js-xds `XdsServer`, gRFC A36) in a child process: it
 * asks the relay for its inbound Listener (named after its listening address through the
 * bootstrap's server_listener_resource_name_template) and enforces its RBAC filters (gRFC A41).
 * It serves `echo.Echo/Hello` and `echo.Echo/Bye`, both answering `{ backend: "server" }`.
 *
 * The child prints `serving` once the server has its Listener and serves (bindAsync's callback).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type * as Grpc from '@grpc/grpc-js';
import type { ClientNode } from './client-process.js';

const CHILD_FLAG = 'MESHSNAP_TEST_XDS_SERVER';
/** gRFC A36's suggested template (Istio's agent writes xds.istio.io/grpc/lds/inbound/%s; both are served). */
export const SERVER_NAME_TEMPLATE = 'grpc/server?xds.resource.listening_address=%s';

export interface XdsServerProcess {
  readonly child: ChildProcess;
  /** Resolves once the server serves (it got a valid Listener); rejects if the child exits first. */
  readonly serving: Promise<void>;
  stderr(): string;
  close(): Promise<void>;
}

/** A TCP port free right now on 127.0.0.1 (the server binds it later: its Listener name carries it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** PEM files of the workload identity, served as the bootstrap's `default` certificate provider (as Istio's agent does). */
export interface WorkloadCerts {
  readonly certificateFile: string;
  readonly privateKeyFile: string;
  readonly caCertificateFile: string;
}

/**
 * With `certs`, the server uses XdsServerCredentials: mTLS when its Listener asks for it, plaintext
 * (the fallback) when not.
 */
export function startXdsServerProcess(
  xdsPort: number,
  node: ClientNode,
  listenPort: number,
  certs?: WorkloadCerts,
  listenIp = '127.0.0.1',
): XdsServerProcess {
  const bootstrap = JSON.stringify({
    xds_servers: [
      { server_uri: `127.0.0.1:${xdsPort}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] },
    ],
    node: { id: node.id, metadata: node.metadata, locality: node.locality },
    server_listener_resource_name_template: SERVER_NAME_TEMPLATE,
    ...(certs
      ? {
          certificate_providers: {
            default: {
              plugin_name: 'file_watcher',
              config: {
                certificate_file: certs.certificateFile,
                private_key_file: certs.privateKeyFile,
                ca_certificate_file: certs.caCertificateFile,
                refresh_interval: '600s',
              },
            },
          },
        }
      : {}),
  });
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
    env: {
      ...process.env,
      [CHILD_FLAG]: `${listenIp}:${listenPort}`,
      GRPC_XDS_BOOTSTRAP_CONFIG: bootstrap,
      GRPC_XDS_EXPERIMENTAL_RBAC: 'true',
      ...(certs ? { MESHSNAP_TEST_XDS_SERVER_CREDS: 'xds' } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err = (err + d).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const serving = new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => d.includes('serving') && resolve());
    void exited.then(() => reject(new Error(`server process exited: ${err.slice(-2000)}`)));
  });
  serving.catch(() => undefined); // observed by the caller; no unhandled rejection on close
  return {
    child,
    serving,
    stderr: () => err,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

// ---------------------------------------------------------------- child side

async function childMain(address: string): Promise<void> {
  const grpc = await import('@grpc/grpc-js');
  const xds = await import('@grpc/grpc-js-xds');
  xds.register();
  const json = {
    serialize: (value: unknown): Buffer => Buffer.from(JSON.stringify(value)),
    deserialize: (bytes: Buffer): unknown => JSON.parse(bytes.toString('utf8')),
  };
  const method = (name: string) => ({
    path: `/echo.Echo/${name}`,
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  });
  const answer: Grpc.handleUnaryCall<unknown, unknown> = (_call, cb) => cb(null, { backend: 'server', attempt: 1 });
  const server = new xds.XdsServer();
  server.addService({ hello: method('Hello'), bye: method('Bye') }, { hello: answer, bye: answer });
  const insecure = grpc.ServerCredentials.createInsecure();
  const creds =
    process.env.MESHSNAP_TEST_XDS_SERVER_CREDS === 'xds' ? new xds.XdsServerCredentials(insecure) : insecure;
  server.bindAsync(address, creds, (e) => {
    if (e) {
      process.stderr.write(`bind failed: ${e.message}\n`);
      process.exit(1);
    }
    process.stdout.write('serving\n');
  });
}

if (process.env[CHILD_FLAG] !== undefined) {
  childMain(process.env[CHILD_FLAG]).catch((e: unknown) => {
    process.stderr.write(`xds-server-process: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
