/**
 * The end-to-end benchmark (`npm run bench -- --e2e`): from a change accepted by an API server to
 * the ACK of every connected proxy, through the real processes:
 *
 *   API server ──watch──▶ `meshsnap watch` ──publish──▶ folder store ──hint──▶ `meshsnap relay` ──ADS──▶ 1k clients
 *
 * The API server is the tests' fake one (in this process) by default, or the real kube-apiserver
 * named by MESHSNAP_REAL_KUBECONFIG (or KUBECONFIG) when one answers (`../shared/tools/kube-local/up.sh`).
 * `meshsnap watch` runs with its default debounce (100 ms quiet, as istiod) and `--notify` at the
 * relay; the relay keeps its default 1 s poll as the fallback. The clients (relay-client.ts, two
 * processes) hold ADS streams like proxyless gRPC proxies (CDS as a wildcard, as Envoy asks) and
 * ACK every response; a proxy's time is when the response carrying the change arrived (the ACK is
 * written in the same tick).
 *
 * Per kind, 20 changes, one at a time: a VirtualService weight (RDS), one endpoint (EDS), a new
 * Service (CDS). Reported from the API's acceptance (the fake's apply returned; the real server's
 * write answered) to each proxy's response: p50/p99/max over every proxy of every change, and the
 * per-change time until the last proxy had it.
 *
 *   node dist/bench/run.js --e2e [--e2e-proxies 1000] [--e2e-changes 20]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseAllDocuments } from 'yaml';
import { benchHost, benchMeshYaml, BENCH_NAMESPACE, BENCH_PORT } from './relay-mesh.js';
import { RUNNER, startRelayProcess, type RelayProcess } from './relay-process.js';
import { startClient, type ClientChild } from './relay.js';
import { realApiWriter, type ApiWriter, type KubeObject } from './e2e-api.js';

export const E2E_TARGET_P99_MS = 300;
const SERVICES = 50;
const CLIENT_PROCESSES = 2;
const STREAMS_PER_CHANNEL = 100;
const WAIT_MS = 15_000;

type Kind = 'virtualservice' | 'endpoint' | 'service';
const KINDS: readonly Kind[] = ['virtualservice', 'endpoint', 'service'];
/** The xDS type whose new version tells a proxy the change reached it. */
const TYPE_OF: Record<Kind, 'routes' | 'endpoints' | 'clusters'> = {
  virtualservice: 'routes',
  endpoint: 'endpoints',
  service: 'clusters',
};

export interface E2eKindResult {
  readonly kind: Kind;
  readonly changes: number;
  /** Over every proxy of every change: API acceptance → that proxy's response, ms. */
  readonly perProxy: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Per change: API acceptance → the last proxy's response, ms. */
  readonly allProxies: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Per change: API acceptance → the watcher's published line (debounce, compile, store), ms. */
  readonly published: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Medians of the watcher's own round timings (ms), and its compile modes. */
  readonly watcher: {
    readonly inputsMs: number;
    readonly compileMs: number;
    readonly publishMs: number;
    readonly modes: string[];
  };
  /** Medians of the relay's own timings per switch (its `snapshot.switch` and `snapshot.pushed` log lines, ms). */
  readonly relay: RelayTimings;
  /**
   * Medians per change of the hops between the processes (ms): the watcher's published line → the
   * relay starts loading (notify and head read); the relay's switch → the last proxy's response.
   */
  readonly hops: { readonly toRelayMs: number; readonly afterSwitchMs: number };
  readonly missed: number;
}

/**
 * Load: head read → verified snapshot; queued: every stream's response queued; written: all
 * written; cpu: the relay process's CPU from the switch to the last write (less load-dependent).
 */
export interface RelayTimings {
  readonly switches: number;
  readonly loadMs: number;
  readonly queuedMs: number;
  readonly writtenMs: number;
  readonly cpuMs: number;
}

export interface E2eResult {
  readonly node: string;
  readonly apiServer: 'fake' | 'real';
  readonly proxies: number;
  readonly services: number;
  readonly kinds: E2eKindResult[];
  readonly error?: string;
}

const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const round = (ms: number): number => Math.round(ms * 10) / 10;

function percentiles(values: number[]): { p50: number; p99: number; max: number } {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number): number => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? NaN;
  return { p50: round(at(0.5)), p99: round(at(0.99)), max: round(s[s.length - 1] ?? NaN) };
}

function medians(rounds: readonly WatchRound[]): E2eKindResult['watcher'] {
  const median = (f: (r: WatchRound) => number): number => percentiles(rounds.map(f)).p50;
  return {
    inputsMs: median((r) => r.inputsMs),
    compileMs: median((r) => r.compileMs),
    publishMs: median((r) => r.publishMs),
    modes: [...new Set(rounds.map((r) => r.mode))].sort(),
  };
}

/** The relay's timings of the switches to versions after `after`, from its log lines. */
function relayTimings(lines: readonly string[], after: number): RelayTimings & { readonly last: number } {
  const byVersion = new Map<number, { loadMs?: number; queuedMs?: number; writtenMs?: number; cpuMs?: number }>();
  for (const line of lines) {
    if (!line.includes('"event":"snapshot.switch"') && !line.includes('"event":"snapshot.pushed"')) continue;
    const e = JSON.parse(line) as {
      version: number;
      loadMs?: number;
      queuedMs?: number;
      writtenMs?: number;
      cpuMs?: number;
    };
    if (e.version <= after) continue;
    const t = byVersion.get(e.version) ?? {};
    if (e.loadMs !== undefined) t.loadMs = e.loadMs;
    if (e.queuedMs !== undefined) t.queuedMs = e.queuedMs;
    if (e.writtenMs !== undefined) t.writtenMs = e.writtenMs;
    if (e.cpuMs !== undefined) t.cpuMs = e.cpuMs;
    byVersion.set(e.version, t);
  }
  const all = [...byVersion.values()];
  const median = (f: (t: (typeof all)[number]) => number | undefined): number =>
    percentiles(all.map(f).filter((x): x is number => x !== undefined)).p50;
  return {
    switches: all.length,
    loadMs: median((t) => t.loadMs),
    queuedMs: median((t) => t.queuedMs),
    writtenMs: median((t) => t.writtenMs),
    cpuMs: median((t) => t.cpuMs),
    last: Math.max(after, ...byVersion.keys()),
  };
}

/** The relay's latest switch: when it was logged (epoch ms, after the load) and its load time. */
function latestSwitch(lines: readonly string[]): { at: number; loadMs: number } | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] as string;
    if (!line.includes('"event":"snapshot.switch"')) continue;
    const e = JSON.parse(line) as { time: string; loadMs: number };
    return { at: Date.parse(e.time), loadMs: e.loadMs };
  }
  return undefined;
}

/** The relay bench's mesh as objects, plus the VirtualService the weight changes edit. */
function meshObjects(): KubeObject[] {
  const docs = parseAllDocuments(benchMeshYaml(SERVICES, 0)).map((d) => d.toJS() as KubeObject);
  return [...docs, virtualService(50)];
}

function virtualService(weight: number): KubeObject {
  return {
    apiVersion: 'networking.istio.io/v1beta1',
    kind: 'VirtualService',
    metadata: { name: 'svc-0', namespace: BENCH_NAMESPACE },
    spec: {
      hosts: [benchHost(0)],
      http: [
        {
          route: [
            { destination: { host: benchHost(0) }, weight },
            { destination: { host: benchHost(1) }, weight: 100 - weight },
          ],
        },
      ],
    },
  };
}

function endpointSlice(generation: number): KubeObject {
  const ip = `10.1.${Math.floor(generation / 250) % 250}.${(generation % 250) + 1}`;
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'svc-0-a',
      namespace: BENCH_NAMESPACE,
      labels: { 'kubernetes.io/service-name': 'svc-0' },
    },
    addressType: 'IPv4',
    ports: [{ name: 'grpc', port: BENCH_PORT, protocol: 'TCP' }],
    endpoints: [{ addresses: [ip], conditions: { ready: true } }],
  };
}

function newService(k: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `new-${k}`, namespace: BENCH_NAMESPACE },
    spec: { selector: { app: `new-${k}` }, ports: [{ name: 'grpc', port: BENCH_PORT, protocol: 'TCP' }] },
  };
}

/**
 * The tests' fake API server, loaded from the build at run time: it is a test tool (test/helpers),
 * which the benchmarks do not import as a library.
 */
async function fakeApiWriter(): Promise<ApiWriter> {
  const url = new URL('../test/helpers/fake-apiserver/server.js', import.meta.url).href;
  const mod = (await import(url)) as {
    startFakeApiServer(o: object): Promise<{
      apply(o: KubeObject): unknown;
      kubeconfig(): string;
      close(): Promise<void>;
    }>;
  };
  const server = await mod.startFakeApiServer({ bookmarkIntervalMs: 0 });
  return {
    kind: 'fake',
    kubeconfig: server.kubeconfig(),
    write: async (o) => {
      server.apply(o);
    },
    close: () => server.close(),
  };
}

interface WatchRound {
  /** When the watcher logged the round (after its publish; relays are told at that line). */
  readonly time: string;
  readonly mode: string;
  readonly inputsMs: number;
  readonly compileMs: number;
  readonly publishMs: number;
}

interface WatchProcess {
  readonly child: ChildProcess;
  /** When each published line arrived on the watcher's stdout (epoch ms). */
  published(): readonly number[];
  /** The watcher's own timings of each published round (its `watch.published` log lines). */
  rounds(): readonly WatchRound[];
  close(): Promise<void>;
}

function startWatch(args: readonly string[]): WatchProcess {
  const child = spawn(process.execPath, ['--input-type=module', '-e', RUNNER, 'watch', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const published: number[] = [];
  const errors: string[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => {
    if (l.includes('"published"')) published.push(now());
  });
  const rounds: WatchRound[] = [];
  createInterface({ input: child.stderr! }).on('line', (l) => {
    if (l.includes('"event":"watch.published"')) rounds.push(JSON.parse(l) as WatchRound);
    if (!/"level":"(error|warn)"/.test(l)) return;
    errors.push(l);
    if (errors.length <= 5) process.stderr.write(`bench e2e: watch: ${l}\n`);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    child,
    published: () => published,
    rounds: () => rounds,
    close: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
    },
  };
}

async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`bench e2e: no ${what} within ${ms} ms`);
    await sleep(50);
  }
}

async function chooseApi(): Promise<ApiWriter> {
  const path = process.env.MESHSNAP_REAL_KUBECONFIG ?? process.env.KUBECONFIG;
  if (path) {
    const real = await realApiWriter(path);
    if ('skip' in real) process.stderr.write(`bench e2e: ${real.skip}; using the fake API server\n`);
    else return real;
  }
  return fakeApiWriter();
}

export async function runE2eBench(opts: { proxies?: number; changes?: number } = {}): Promise<E2eResult> {
  const proxies = opts.proxies ?? 1000;
  const changes = opts.changes ?? 20;
  const dir = mkdtempSync(join(tmpdir(), 'meshsnap-e2e-bench-'));
  const api = await chooseApi();
  let relay: RelayProcess | undefined;
  let watch: WatchProcess | undefined;
  const clients: ClientChild[] = [];
  const result: E2eResult = {
    node: process.version,
    apiServer: api.kind,
    proxies,
    services: SERVICES,
    kinds: [],
  };
  try {
    for (const o of meshObjects()) await api.write(o);
    const store = join(dir, 'store');
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, api.kubeconfig);
    relay = await startRelayProcess(['--store', store, '--max-streams', String(proxies * 2)]);
    watch = startWatch([
      '--kubeconfig',
      kubeconfig,
      '--store',
      store,
      '--http-port',
      '0',
      '--namespace',
      BENCH_NAMESPACE,
      '--notify',
      `http://127.0.0.1:${relay.httpPort}`,
    ]);
    const r = relay;
    await until(
      async () => ((await r.getJson('/readyz')) as { ready?: boolean }).ready === true,
      60_000,
      'ready relay',
    );

    for (let i = 0; i < CLIENT_PROCESSES; i++) clients.push(startClient());
    const per = Math.ceil(proxies / CLIENT_PROCESSES);
    const opened = await Promise.all(
      clients.map((c, i) =>
        c.send({
          op: 'open',
          port: relay!.xdsPort,
          streams: Math.min(per, proxies - i * per),
          perChannel: STREAMS_PER_CHANNEL,
          firstIndex: i * per,
          services: SERVICES,
          wildcardClusters: true,
        }),
      ),
    );
    const failed = opened.reduce((n, o) => n + Number(o.failed ?? 0), 0);
    if (failed > 0) throw new Error(`${failed} streams failed to open: ${String(opened.find((o) => o.error)?.error)}`);

    let generation = 0;
    let relayVersion = relayTimings(relay.logs(), 0).last;
    for (const kind of KINDS) {
      process.stderr.write(`bench e2e: ${changes} × ${kind} → ${proxies} proxies…\n`);
      const perProxy: number[] = [];
      const allProxies: number[] = [];
      const publishedAfter: number[] = [];
      const toRelay: number[] = [];
      const afterSwitch: number[] = [];
      const roundsBefore = watch.rounds().length;
      let missed = 0;
      for (let c = 0; c < changes; c++) {
        generation++;
        await Promise.all(clients.map((cl) => cl.send({ op: 'arm', type: TYPE_OF[kind] })));
        const change =
          kind === 'virtualservice'
            ? virtualService(10 + ((c * 7) % 80))
            : kind === 'endpoint'
              ? endpointSlice(generation)
              : newService(generation);
        await api.write(change);
        const accepted = now();
        const waited = await Promise.all(clients.map((cl) => cl.send({ op: 'wait', timeoutMs: WAIT_MS, times: true })));
        const times = waited.flatMap((w) => (w.times as number[] | undefined) ?? []);
        missed += proxies - times.length;
        for (const t of times) perProxy.push(Math.max(0, t - accepted));
        if (times.length === proxies) allProxies.push(Math.max(...times) - accepted);
        const at = watch.published().find((t) => t >= accepted);
        if (at !== undefined) publishedAfter.push(at - accepted);
        // Log times, whole milliseconds of one clock: the watcher's published line → the relay's load start.
        const switched = latestSwitch(relay.logs());
        const published = watch.rounds().at(-1);
        if (switched && published) toRelay.push(switched.at - switched.loadMs - Date.parse(published.time));
        if (switched && times.length === proxies) afterSwitch.push(Math.max(...times) - switched.at);
        // Let the debounce window of this change close before the next one (changes are measured one at a time).
        await sleep(150);
      }
      const { last, ...timings } = relayTimings(relay.logs(), relayVersion);
      relayVersion = last;
      result.kinds.push({
        kind,
        changes,
        perProxy: percentiles(perProxy),
        allProxies: percentiles(allProxies),
        published: percentiles(publishedAfter),
        watcher: medians(watch.rounds().slice(roundsBefore)),
        relay: timings,
        hops: { toRelayMs: percentiles(toRelay).p50, afterSwitchMs: percentiles(afterSwitch).p50 },
        missed,
      });
    }
  } catch (err) {
    return { ...result, error: (err as Error).message };
  } finally {
    for (const c of clients) {
      c.child.stdin?.end();
      c.child.kill('SIGTERM');
    }
    await watch?.close();
    await relay?.close();
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

export function formatE2e(r: E2eResult): string {
  const lines = [
    `End to end (${r.apiServer} API server → meshsnap watch → folder store → meshsnap relay → ${r.proxies} ADS clients; ${r.services} services)`,
    '',
    '| change | changes | API → stored p50 / p99 (ms) | per proxy p50 / p99 / max (ms) | last proxy p50 / p99 / max (ms) | missed | target p99 |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...r.kinds.map(
      (k) =>
        `| ${k.kind} | ${k.changes} | ${k.published.p50} / ${k.published.p99} | ${k.perProxy.p50} / ${k.perProxy.p99} / ${k.perProxy.max} | ${k.allProxies.p50} / ${k.allProxies.p99} / ${k.allProxies.max} | ${k.missed} | ≤ ${E2E_TARGET_P99_MS} ${k.allProxies.p99 <= E2E_TARGET_P99_MS && k.missed === 0 ? '✅' : '❌'} |`,
    ),
  ];
  lines.push(
    '',
    'The watcher’s own medians per round (inputs / compile / publish, ms): ' +
      r.kinds
        .map(
          (k) =>
            `${k.kind} ${k.watcher.inputsMs} / ${k.watcher.compileMs} / ${k.watcher.publishMs} (${k.watcher.modes.join(', ')})`,
        )
        .join('; '),
  );
  lines.push(
    '',
    'The relay’s own medians per switch (load and verify / responses queued / all written, ms; its CPU until all written, ms): ' +
      r.kinds
        .map(
          (k) =>
            `${k.kind} ${k.relay.loadMs} / ${k.relay.queuedMs} / ${k.relay.writtenMs}; ${k.relay.cpuMs} (${k.relay.switches})`,
        )
        .join('; '),
  );
  lines.push(
    '',
    'Between the processes, medians per change (published → relay starts loading / relay switch → last proxy, ms): ' +
      r.kinds.map((k) => `${k.kind} ${k.hops.toRelayMs} / ${k.hops.afterSwitchMs}`).join('; '),
  );
  if (r.error) lines.push('', `error: ${r.error}`);
  return lines.join('\n');
}

export async function runE2eAndReport(args: { proxies?: number; changes?: number }): Promise<void> {
  const r = await runE2eBench(args);
  process.stdout.write(formatE2e(r) + '\n');
  const out = join(process.cwd(), 'bench-results');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'e2e.json'), JSON.stringify(r, null, 2) + '\n');
  process.stderr.write(`bench e2e: wrote ${join(out, 'e2e.json')}\n`);
}
