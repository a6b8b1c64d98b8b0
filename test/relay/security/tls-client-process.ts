/**
 * A real proxyless gRPC client (@grpc/grpc-js-xds) that reaches the relay over TLS, in a child
 * process (the xDS client is process-global), driven like ../client-process.ts.
 *
 * @grpc/grpc-js-xds 1.14.1 accepts only `insecure` and `google_default` channel_creds for its xDS
 * server (no `tls` type, gRFC A65), so the child gives its xDS channel TLS itself: before the xDS
 * client is loaded, grpc-js's `ChannelCredentials.createInsecure` (which grpc-js-xds calls for an
 * `insecure` server) is replaced by TLS credentials — the test CA, an optional client certificate
 * (mTLS) and an optional `authorization: Bearer` token. The data-plane calls keep plaintext
 * credentials taken before the swap. Everything else is the unmodified client.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ClientNode, RunResult } from '../client-process.js';

const CHILD_FLAG = 'MESHSNAP_TEST_TLS_XDS_CLIENT';

export interface TlsClientOptions {
  readonly xdsPort: number;
  readonly node: ClientNode;
  /** CA bundle trusted for the relay's certificate. */
  readonly caFile: string;
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly token?: string;
}

export interface TlsXdsClient {
  readonly child: ChildProcess;
  run(target: string, n: number, deadlineMs?: number): Promise<RunResult>;
  stderr(): string;
  close(): Promise<void>;
}

export function startTlsXdsClient(o: TlsClientOptions): TlsXdsClient {
  const bootstrap = JSON.stringify({
    xds_servers: [
      { server_uri: `127.0.0.1:${o.xdsPort}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] },
    ],
    node: { id: o.node.id, metadata: o.node.metadata, locality: o.node.locality },
  });
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
    env: {
      ...process.env,
      [CHILD_FLAG]: JSON.stringify({ caFile: o.caFile, certFile: o.certFile, keyFile: o.keyFile, token: o.token }),
      GRPC_XDS_BOOTSTRAP_CONFIG: bootstrap,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err = (err + d).slice(-20_000);
  });
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => waiting.shift()?.(line));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    stderr: () => err,
    run: (target, n, deadlineMs = 3000) =>
      new Promise<RunResult>((resolve, reject) => {
        if (child.exitCode !== null) return reject(new Error(`client exited (${child.exitCode}): ${err.slice(-2000)}`));
        waiting.push((line) => resolve(JSON.parse(line) as RunResult));
        child.stdin!.write(`${JSON.stringify({ target, n, deadlineMs })}\n`);
      }),
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

// ---------------------------------------------------------------- child side

async function childMain(config: {
  caFile: string;
  certFile?: string;
  keyFile?: string;
  token?: string;
}): Promise<void> {
  const grpc = await import('@grpc/grpc-js');
  const plaintext = grpc.credentials.createInsecure();
  const ssl = grpc.credentials.createSsl(
    readFileSync(config.caFile),
    config.keyFile ? readFileSync(config.keyFile) : null,
    config.certFile ? readFileSync(config.certFile) : null,
  );
  const token = config.token;
  const xdsCreds = token
    ? grpc.credentials.combineChannelCredentials(
        ssl,
        grpc.credentials.createFromMetadataGenerator((_params, cb) => {
          const md = new grpc.Metadata();
          md.set('authorization', `Bearer ${token}`);
          cb(null, md);
        }),
      )
    : ssl;
  grpc.ChannelCredentials.createInsecure = () => xdsCreds;
  const xds = await import('@grpc/grpc-js-xds');
  const { EchoClient } = await import('../grpc-backends.js');
  xds.register();
  type Hello = (
    req: { id: string },
    opts: { deadline: number },
    cb: (e: (Error & { code?: number; details?: string }) | null, resp?: { backend: string }) => void,
  ) => void;
  const clients = new Map<string, InstanceType<typeof EchoClient> & { hello: Hello }>();
  let seq = 0;
  for await (const line of createInterface({ input: process.stdin })) {
    const cmd = JSON.parse(line) as { target: string; n: number; deadlineMs: number };
    let client = clients.get(cmd.target);
    if (!client) {
      client = new EchoClient(cmd.target, plaintext) as InstanceType<typeof EchoClient> & { hello: Hello };
      clients.set(cmd.target, client);
    }
    const result: RunResult = { counts: {}, errors: {}, errorDetails: {}, retried: 0 };
    for (let i = 0; i < cmd.n; i++) {
      const r = await new Promise<{ backend?: string; code?: string; details?: string }>((resolve) =>
        client.hello({ id: `${process.pid}-${++seq}` }, { deadline: Date.now() + cmd.deadlineMs }, (e, resp) =>
          resolve(
            e
              ? { code: grpc.status[e.code ?? grpc.status.UNKNOWN] ?? String(e.code), details: e.details ?? e.message }
              : { backend: resp!.backend },
          ),
        ),
      );
      if (r.backend !== undefined) result.counts[r.backend] = (result.counts[r.backend] ?? 0) + 1;
      else {
        const code = r.code ?? 'UNKNOWN';
        result.errors[code] = (result.errors[code] ?? 0) + 1;
        result.errorDetails[code] ??= r.details ?? '';
      }
    }
    process.stdout.write(`${JSON.stringify(result)}\n`);
  }
  process.exit(0);
}

const childConfig = process.env[CHILD_FLAG];
if (childConfig) {
  childMain(JSON.parse(childConfig) as { caFile: string; certFile?: string; keyFile?: string; token?: string }).catch(
    (e: unknown) => {
      process.stderr.write(`tls-client-process: ${(e as Error).stack ?? String(e)}\n`);
      process.exit(1);
    },
  );
}
