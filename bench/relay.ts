/**
 * The relay benchmark: how many xDS streams one relay holds, at what memory, and how fast a
 * snapshot switch reaches all of them.
 *
 * The relay runs in its own child process (`meshsnap relay`, so its RSS is its own); the load is
 * a few client child processes (relay-client.ts) holding raw SotW ADS streams, 100 per HTTP/2
 * connection, ACKing every response. Per level (1k, 5k, 10k streams, added cumulatively): the
 * relay's RSS, then an endpoint change is published to the store and the clients report when each
 * stream received the new ClusterLoadAssignment. "switch" is publish → last stream (it includes
 * the relay's head polling); "fan-out" is first stream → last stream.
 *
 *   node dist/bench/relay.js [--relay-streams 1000,5000,10000]     (also called from bench/run.ts)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { compileTexts } from '../src/pipeline.js';
import { LocalStore, nodeSha256Hex } from '../src/snapshot/store/local.js';
import { publishSnapshot } from '../src/snapshot/store/publish.js';
import { benchMeshYaml } from './relay-mesh.js';
import { startRelayProcess, type RelayProcess } from './relay-process.js';

export const RELAY_TARGETS = { streams: 10_000, rssMB: 1024, switchMs: 1000 } as const;

export const CLIENT_PROCESSES = 4;
export const STREAMS_PER_CHANNEL = 100;
export const SERVICES = 50;
export const POLL_MS = 100;
export const SWITCH_TIMEOUT_MS = 15_000;
/** Stop adding streams beyond this relay RSS (a shared 2-core machine). */
const RSS_GUARD_MB = 1536;
export const CHANNEL = 'main';

export interface RelayLevel {
  streams: number;
  opened: number;
  failed: number;
  openMs: number;
  relayRssMB: number;
  /** (RSS − RSS with no streams) / streams, KB. */
  rssPerStreamKB: number;
  switch: { reached: number; total: number; publishToLastMs?: number; fanoutMs?: number; publishToFirstMs?: number };
  /** The relay's own view (its push-latency histogram, EDS, this switch only): every write done within this bound, ms. */
  relayEdsPushWithinMs?: number;
  error?: string;
}

export interface RelayBenchResult {
  node: string;
  platform: string;
  targets: typeof RELAY_TARGETS;
  config: { clientProcesses: number; streamsPerChannel: number; services: number; relayPollMs: number };
  baselineRssMB: number;
  levels: RelayLevel[];
}

export interface ClientChild {
  readonly child: ChildProcess;
  send(cmd: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export function startClient(): ClientChild {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./relay-client.js', import.meta.url))], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting: ((v: Record<string, unknown>) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) =>
    waiting.shift()?.(JSON.parse(line) as Record<string, unknown>),
  );
  const exited = new Promise<Record<string, unknown>>((resolve) =>
    child.once('exit', (code) => resolve({ error: `client exited (${code})` })),
  );
  return {
    child,
    send: (cmd) =>
      Promise.race([
        new Promise<Record<string, unknown>>((resolve) => {
          waiting.push(resolve);
          child.stdin!.write(`${JSON.stringify(cmd)}\n`);
        }),
        exited,
      ]),
  };
}

const mb = (bytes: number): number => Math.round((bytes / (1 << 20)) * 10) / 10;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function publish(store: LocalStore, generation: number): Promise<void> {
  const result = compileTexts([{ file: 'bench-relay.yaml', text: benchMeshYaml(SERVICES, generation) }], {
    hasher: nodeSha256Hex,
  });
  const r = await publishSnapshot(store, CHANNEL, result.snapshot, { createdAt: new Date().toISOString() });
  if (r.status !== 'published') throw new Error(`generation ${generation} was not a new snapshot`);
}

export async function measureRelay(levels: readonly number[] = [1000, 5000, 10_000]): Promise<RelayBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'meshsnap-relay-bench-'));
  const store = new LocalStore(join(dir, 'store'));
  let generation = 1;
  await publish(store, generation);
  let relay: RelayProcess | undefined;
  const clients: ClientChild[] = [];
  const result: RelayBenchResult = {
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    targets: RELAY_TARGETS,
    config: {
      clientProcesses: CLIENT_PROCESSES,
      streamsPerChannel: STREAMS_PER_CHANNEL,
      services: SERVICES,
      relayPollMs: POLL_MS,
    },
    baselineRssMB: 0,
    levels: [],
  };
  try {
    relay = await startRelayProcess([
      '--store',
      join(dir, 'store'),
      '--channel',
      CHANNEL,
      '--poll-ms',
      String(POLL_MS),
      '--max-streams',
      String(Math.max(...levels) * 2),
    ]);
    await sleep(500);
    const baseline = relay.rssBytes();
    result.baselineRssMB = mb(baseline);
    for (let i = 0; i < CLIENT_PROCESSES; i++) clients.push(startClient());

    let held = 0;
    for (const target of levels) {
      process.stderr.write(`bench relay: ${target} streams…\n`);
      const add = target - held;
      const t0 = Date.now();
      const opened = await Promise.all(
        clients.map((c, i) => {
          const share = Math.floor(add / CLIENT_PROCESSES) + (i < add % CLIENT_PROCESSES ? 1 : 0);
          const perChild = Math.floor(held / CLIENT_PROCESSES);
          return c.send({
            op: 'open',
            port: relay!.xdsPort,
            streams: share,
            perChannel: STREAMS_PER_CHANNEL,
            firstIndex: i * 1_000_000 + perChild,
            services: SERVICES,
          });
        }),
      );
      const openMs = Date.now() - t0;
      const ok = opened.reduce((s, r) => s + Number(r.ok ?? 0), 0);
      const failed = opened.reduce((s, r) => s + Number(r.failed ?? 0), 0);
      held += ok;
      await sleep(1000); // let the ACK burst settle before reading RSS
      const rss = relay.rssBytes();
      const level: RelayLevel = {
        streams: target,
        opened: held,
        failed,
        openMs,
        relayRssMB: mb(rss),
        rssPerStreamKB: held > 0 ? Math.round(((rss - baseline) / held / 1024) * 10) / 10 : 0,
        switch: { reached: 0, total: held },
      };
      const firstError = opened.find((r) => r.error)?.error;
      if (firstError) level.error = String(firstError);

      await Promise.all(clients.map((c) => c.send({ op: 'arm' })));
      const bucketsBefore = edsPushBuckets(await relay.getText('/metrics'));
      generation++;
      await publish(store, generation);
      const published = Date.now();
      const waits = await Promise.all(clients.map((c) => c.send({ op: 'wait', timeoutMs: SWITCH_TIMEOUT_MS })));
      const firsts = waits.map((w) => w.first).filter((v): v is number => typeof v === 'number');
      const lasts = waits.map((w) => w.last).filter((v): v is number => typeof v === 'number');
      const reached = waits.reduce((s, w) => s + Number(w.reached ?? 0), 0);
      level.switch = { reached, total: held };
      if (lasts.length) {
        // Client times are sub-millisecond (performance clock): whole milliseconds are enough here.
        level.switch.publishToFirstMs = Math.round(Math.min(...firsts) - published);
        level.switch.publishToLastMs = Math.round(Math.max(...lasts) - published);
        level.switch.fanoutMs = Math.round(Math.max(...lasts) - Math.min(...firsts));
      }
      const bound = pushBound(bucketsBefore, edsPushBuckets(await relay.getText('/metrics')));
      if (bound !== undefined) level.relayEdsPushWithinMs = bound;
      result.levels.push(level);
      if (failed > 0 || rss > RSS_GUARD_MB * (1 << 20) || reached < held) {
        for (const rest of levels.slice(levels.indexOf(target) + 1))
          result.levels.push({
            streams: rest,
            opened: 0,
            failed: 0,
            openMs: 0,
            relayRssMB: 0,
            rssPerStreamKB: 0,
            switch: { reached: 0, total: 0 },
            error: `skipped after ${target}`,
          });
        break;
      }
    }
  } finally {
    for (const c of clients) c.child.kill('SIGKILL');
    await relay?.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

/** Cumulative counts of the relay's EDS push-latency histogram, by upper bound (seconds). */
function edsPushBuckets(metrics: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of metrics.split('\n')) {
    const m = /^meshsnap_relay_push_latency_seconds_bucket\{([^}]*)\} (\d+)/.exec(line);
    if (!m || !/type="[^"]*(endpoint|eds|ClusterLoadAssignment)[^"]*"/i.test(m[1]!)) continue;
    const le = /le="([^"]+)"/.exec(m[1]!)?.[1];
    if (le !== undefined)
      out.set(
        le === '+Inf' ? Infinity : Number(le),
        (out.get(le === '+Inf' ? Infinity : Number(le)) ?? 0) + Number(m[2]),
      );
  }
  return out;
}

/** The smallest bucket bound holding every push between two readings, ms (undefined: no pushes seen). */
function pushBound(before: Map<number, number>, after: Map<number, number>): number | undefined {
  const total = (after.get(Infinity) ?? 0) - (before.get(Infinity) ?? 0);
  if (total <= 0) return undefined;
  for (const le of [...after.keys()].sort((a, b) => a - b))
    if ((after.get(le) ?? 0) - (before.get(le) ?? 0) >= total) return le * 1000;
  return undefined;
}

export function formatRelayTable(r: RelayBenchResult): string {
  const mark = (ok: boolean): string => (ok ? '✅' : '❌');
  const lines = [
    `relay: baseline RSS ${r.baselineRssMB} MB; ${r.config.clientProcesses} client processes, ${r.config.streamsPerChannel} streams per connection, relay polls every ${r.config.relayPollMs} ms`,
    '| streams | opened (failed) | open s | relay RSS MB | RSS/stream KB | switch reached | publish→first ms | publish→last ms | fan-out ms | relay wrote all EDS within ms |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const l of r.levels) {
    if (l.error?.startsWith('skipped')) {
      lines.push(`| ${l.streams} | ${l.error} |||||||||`);
      continue;
    }
    const big = l.streams >= r.targets.streams;
    const s = l.switch;
    lines.push(
      `| ${l.streams} | ${l.opened} (${l.failed}) | ${(l.openMs / 1000).toFixed(1)} | ${l.relayRssMB}${big ? ` ${mark(l.relayRssMB <= r.targets.rssMB)}` : ''} | ${l.rssPerStreamKB} | ${s.reached}/${s.total} | ${s.publishToFirstMs ?? '–'} | ${s.publishToLastMs ?? '–'}${s.publishToLastMs !== undefined ? ` ${mark(s.publishToLastMs <= r.targets.switchMs && s.reached === s.total)}` : ''} | ${s.fanoutMs ?? '–'} | ≤ ${l.relayEdsPushWithinMs ?? '–'} |`,
    );
  }
  return lines.join('\n');
}

export function writeRelayResults(r: RelayBenchResult): string {
  const dir = join(process.cwd(), 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'relay.json');
  writeFileSync(file, JSON.stringify(r, null, 2) + '\n');
  return file;
}

/**
 * Bench entry (bench/run.ts calls it last): measures, prints the table, writes
 * bench-results/relay.json. `--relay-streams 1000,5000` picks the levels.
 */
export async function runRelayBench(argv: readonly string[] = process.argv.slice(2)): Promise<RelayBenchResult> {
  const i = argv.indexOf('--relay-streams');
  const levels =
    i >= 0
      ? (argv[i + 1] ?? '')
          .split(',')
          .map(Number)
          .filter((n) => Number.isInteger(n) && n > 0)
      : undefined;
  const r = await measureRelay(levels);
  process.stdout.write(formatRelayTable(r) + '\n');
  process.stderr.write(`bench relay: wrote ${writeRelayResults(r)}\n`);
  return r;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runRelayBench();
