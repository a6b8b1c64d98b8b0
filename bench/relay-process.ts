/**
 * `meshsnap relay` in a child process, for the relay benchmark and the end-to-end tests: started
 * with `--port 0 --http-port 0`, its bound ports read from its startup log line (JSON lines on
 * stderr). It runs the CLI of the same build as the caller (…/src/cli/main.js beside this file's
 * build dir), so a test of dist-X exercises dist-X's relay, as `bin/meshsnap.js` would for dist/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const CLI_MAIN = new URL('../src/cli/main.js', import.meta.url).href;
/** `node -e` runner: the same two lines as bin/meshsnap.js, pointed at this build. */
export const RUNNER = `const { main } = await import(${JSON.stringify(CLI_MAIN)}); process.exitCode = await main(process.argv.slice(1));`;

export interface RelayProcess {
  readonly child: ChildProcess;
  readonly xdsPort: number;
  readonly httpPort: number;
  /** Log lines so far (the last few hundred). */
  logs(): string[];
  /** Resident set size of the relay process, bytes (Linux /proc). */
  rssBytes(): number;
  getJson(path: string): Promise<unknown>;
  getText(path: string): Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

/** Runs the meshsnap CLI of this build with `args` (e.g. compile) and resolves with its exit code and output. */
export function runCli(
  args: readonly string[],
  opts: { timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', RUNNER, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`meshsnap ${args[0]} did not finish within ${opts.timeoutMs ?? 30_000} ms: ${stderr}`));
    }, opts.timeoutMs ?? 30_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Port fields of a startup log line: the xDS (gRPC) port and the HTTP port. */
function portsOf(line: Record<string, unknown>): { xds: number; http: number } | undefined {
  let xds: number | undefined;
  let http: number | undefined;
  for (const [k, v] of Object.entries(line)) {
    const n =
      typeof v === 'number'
        ? v
        : typeof v === 'string' && /:\d+$/.test(v)
          ? Number(v.slice(v.lastIndexOf(':') + 1))
          : NaN;
    if (!Number.isInteger(n) || n <= 0) continue;
    if (/http/i.test(k)) http = n;
    else if (/xds|grpc|^port$|^address$/i.test(k)) xds = n;
  }
  return xds !== undefined && http !== undefined ? { xds, http } : undefined;
}

export function startRelayProcess(
  args: readonly string[],
  opts: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<RelayProcess> {
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', RUNNER, 'relay', '--port', '0', '--http-port', '0', '--insecure', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...opts.env },
    },
  );
  const lines: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise<RelayProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`relay printed no listening ports within ${opts.timeoutMs ?? 20_000} ms:\n${lines.join('\n')}`));
    }, opts.timeoutMs ?? 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`relay exited (${code}) before listening:\n${lines.join('\n')}`));
    });
    let started = false;
    const onLine = (line: string): void => {
      lines.push(line);
      if (lines.length > 500) lines.shift();
      if (started || !line.startsWith('{')) return;
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      const ports = portsOf(parsed);
      if (!ports) return;
      started = true;
      clearTimeout(timer);
      const base = `http://127.0.0.1:${ports.http}`;
      resolve({
        child,
        xdsPort: ports.xds,
        httpPort: ports.http,
        logs: () => [...lines],
        rssBytes: () => {
          const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
          return m ? Number(m[1]) * 1024 : NaN;
        },
        getJson: async (path) => (await fetch(base + path, { signal: AbortSignal.timeout(5000) })).json(),
        getText: async (path) => (await fetch(base + path, { signal: AbortSignal.timeout(5000) })).text(),
        close: async (graceMs = 3000) => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          child.kill('SIGTERM');
          const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
          await exited;
          clearTimeout(t);
        },
      });
    };
    createInterface({ input: child.stderr! }).on('line', onLine);
    createInterface({ input: child.stdout! }).on('line', onLine);
  });
}
