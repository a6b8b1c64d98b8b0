/**
 * A real proxyless gRPC client (@grpc/grpc-js-xds) in a child process, driven over stdio.
 *
 * Why a child: the xDS client is process-global (one bootstrap, one ADS stream per process, read
 * from GRPC_XDS_BOOTSTRAP_CONFIG when the first xds: channel is made), so each test client gets
 * its own process, and killing it closes its stream for sure.
 *
 * Protocol: the parent writes one JSON command per line to stdin, the child answers one JSON line
 * on stdout per command. `{"op":"run","n":400,"target":"xds:///…"}` → a RunResult.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface RunResult {
  /** Successful calls per answering backend. */
  readonly counts: Record<string, number>;
  /** Failed calls per gRPC status name. */
  readonly errors: Record<string, number>;
  /** One error detail per status name, for messages. */
  readonly errorDetails: Record<string, string>;
  /** Successful calls whose backend had seen the request id before (the call was retried). */
  readonly retried: number;
}

interface RunCommand {
  readonly op: 'run';
  readonly target: string;
  readonly n: number;
  readonly deadlineMs: number;
  readonly concurrency: number;
  /** Another method of the echo service than `Hello` (same messages), e.g. `/echo.Echo/Bye`. */
  readonly path?: string;
}

const CHILD_FLAG = 'MESHSNAP_TEST_XDS_CLIENT';

export interface ClientNode {
  readonly id: string;
  readonly metadata: Record<string, unknown>;
  readonly locality: Record<string, string>;
}

/** The bootstrap grpc-js-xds reads (see /work/shared/NOTES.md, "The real xDS client"). */
export function bootstrapConfig(xdsPort: number, node: ClientNode): string {
  return JSON.stringify({
    xds_servers: [
      { server_uri: `127.0.0.1:${xdsPort}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] },
    ],
    node: { id: node.id, metadata: node.metadata, locality: node.locality },
  });
}

export interface XdsClientProcess {
  readonly child: ChildProcess;
  run(
    target: string,
    n: number,
    opts?: { deadlineMs?: number; concurrency?: number; path?: string },
  ): Promise<RunResult>;
  /** stderr so far (grpc traces when GRPC_TRACE is set). */
  stderr(): string;
  close(): Promise<void>;
}

export function startXdsClientProcess(
  xdsPort: number,
  node: ClientNode,
  env: Record<string, string> = {},
): XdsClientProcess {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url)], {
    env: { ...process.env, ...env, [CHILD_FLAG]: '1', GRPC_XDS_BOOTSTRAP_CONFIG: bootstrapConfig(xdsPort, node) },
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
    run: (target, n, opts = {}) =>
      new Promise<RunResult>((resolve, reject) => {
        if (child.exitCode !== null)
          return reject(new Error(`client process exited (${child.exitCode}): ${err.slice(-2000)}`));
        waiting.push((line) => resolve(JSON.parse(line) as RunResult));
        const cmd: RunCommand = {
          op: 'run',
          target,
          n,
          deadlineMs: opts.deadlineMs ?? 5000,
          concurrency: opts.concurrency ?? 16,
          ...(opts.path !== undefined ? { path: opts.path } : {}),
        };
        child.stdin!.write(`${JSON.stringify(cmd)}\n`);
      }),
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/** Share of successful calls answered by `backend` among `total` calls. */
export function share(r: RunResult, backend: string, total: number): number {
  return (r.counts[backend] ?? 0) / total;
}

// ---------------------------------------------------------------- child side

async function childMain(): Promise<void> {
  const grpc = await import('@grpc/grpc-js');
  const xds = await import('@grpc/grpc-js-xds');
  const { EchoClient } = await import('./grpc-backends.js');
  xds.register();
  type Hello = (
    req: { id: string },
    opts: { deadline: number },
    cb: (e: (Error & { code?: number; details?: string }) | null, resp?: { backend: string; attempt: number }) => void,
  ) => void;
  type Client = InstanceType<typeof EchoClient> & { hello: Hello };
  const clients = new Map<string, Client>();
  let seq = 0;

  const json = {
    serialize: (value: unknown): Buffer => Buffer.from(JSON.stringify(value)),
    deserialize: (bytes: Buffer): { backend: string; attempt: number } =>
      JSON.parse(bytes.toString('utf8')) as { backend: string; attempt: number },
  };
  const one = (
    client: Client,
    deadlineMs: number,
    path?: string,
  ): Promise<{ backend?: string; attempt?: number; code?: string; details?: string }> =>
    new Promise((resolve) => {
      const id = `${process.pid}-${++seq}`;
      const call: Hello =
        path === undefined
          ? client.hello.bind(client)
          : (req, opts, cb) =>
              client.makeUnaryRequest(path, json.serialize, json.deserialize, req, opts, (e, resp) =>
                cb(e as (Error & { code?: number; details?: string }) | null, resp),
              );
      call({ id }, { deadline: Date.now() + deadlineMs }, (e, resp) => {
        if (e)
          resolve({
            code: grpc.status[e.code ?? grpc.status.UNKNOWN] ?? String(e.code),
            details: e.details ?? e.message,
          });
        else resolve({ backend: resp!.backend, attempt: resp!.attempt });
      });
    });

  for await (const line of createInterface({ input: process.stdin })) {
    const cmd = JSON.parse(line) as RunCommand;
    let client = clients.get(cmd.target);
    if (!client)
      clients.set(cmd.target, (client = new EchoClient(cmd.target, grpc.credentials.createInsecure()) as Client));
    const result = {
      counts: {} as Record<string, number>,
      errors: {} as Record<string, number>,
      errorDetails: {} as Record<string, string>,
      retried: 0,
    };
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < cmd.n) {
        next++;
        const r = await one(client!, cmd.deadlineMs, cmd.path);
        if (r.backend !== undefined) {
          result.counts[r.backend] = (result.counts[r.backend] ?? 0) + 1;
          if ((r.attempt ?? 1) > 1) result.retried++;
        } else {
          const code = r.code ?? 'UNKNOWN';
          result.errors[code] = (result.errors[code] ?? 0) + 1;
          result.errorDetails[code] ??= r.details ?? '';
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, cmd.concurrency) }, worker));
    process.stdout.write(`${JSON.stringify(result)}\n`);
  }
  process.exit(0);
}

if (process.env[CHILD_FLAG] === '1') {
  childMain().catch((e: unknown) => {
    process.stderr.write(`client-process: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
