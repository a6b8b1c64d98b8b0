/**
 * The stalled-readers benchmark: 1k healthy xDS streams (relay-client.ts children, ACKing), then
 * the same switch with 300 hostile streams connected that never read (HTTP/2 window 0,
 * stalled-client.ts): each holds an unread response (before the fix, each held one of the shared
 * write slots for good). Three switches each way; reports the median publish → last healthy
 * stream for both, and the ratio (target ≤ 1.5).
 *
 *   node --expose-gc dist/bench/run.js --relay-stalled        (also part of `npm run bench`)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalStore } from '../src/snapshot/store/local.js';
import {
  CHANNEL,
  CLIENT_PROCESSES,
  POLL_MS,
  publish,
  SERVICES,
  startClient,
  STREAMS_PER_CHANNEL,
  SWITCH_TIMEOUT_MS,
  type ClientChild,
} from './relay.js';
import { startRelayProcess } from './relay-process.js';
import { openStalledClient, type StalledClient } from './stalled-client.js';

export const STALLED_TARGET_RATIO = 1.5;
const HEALTHY = 1000;
const STALLED = 300;
const TRIALS = 3;

export interface StalledSwitch {
  readonly stalled: number;
  readonly reached: number;
  readonly total: number;
  readonly publishToLastMs?: number;
  readonly fanoutMs?: number;
}

export interface StalledBenchResult {
  readonly node: string;
  readonly healthy: number;
  readonly runs: readonly StalledSwitch[];
  /** publish→last with stalled streams / without. */
  readonly ratio?: number;
  readonly target: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function switchOnce(
  store: LocalStore,
  generation: number,
  clients: readonly ClientChild[],
  stalled: number,
  total: number,
): Promise<StalledSwitch> {
  await Promise.all(clients.map((c) => c.send({ op: 'arm' })));
  await publish(store, generation);
  const published = Date.now();
  const waits = await Promise.all(clients.map((c) => c.send({ op: 'wait', timeoutMs: SWITCH_TIMEOUT_MS })));
  const firsts = waits.map((w) => w.first).filter((v): v is number => typeof v === 'number');
  const lasts = waits.map((w) => w.last).filter((v): v is number => typeof v === 'number');
  const reached = waits.reduce((s, w) => s + Number(w.reached ?? 0), 0);
  return {
    stalled,
    reached,
    total,
    ...(lasts.length
      ? {
          publishToLastMs: Math.round(Math.max(...lasts) - published),
          fanoutMs: Math.round(Math.max(...lasts) - Math.min(...firsts)),
        }
      : {}),
  };
}

export async function measureStalled(): Promise<StalledBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'meshsnap-relay-stalled-'));
  const store = new LocalStore(join(dir, 'store'));
  let generation = 1;
  await publish(store, generation);
  const relay = await startRelayProcess([
    '--store',
    join(dir, 'store'),
    '--channel',
    CHANNEL,
    '--poll-ms',
    String(POLL_MS),
    '--max-streams',
    String((HEALTHY + STALLED) * 2),
  ]);
  const clients: ClientChild[] = [];
  const hostile: StalledClient[] = [];
  try {
    for (let i = 0; i < CLIENT_PROCESSES; i++) clients.push(startClient());
    const opened = await Promise.all(
      clients.map((c, i) =>
        c.send({
          op: 'open',
          port: relay.xdsPort,
          streams: HEALTHY / CLIENT_PROCESSES,
          perChannel: STREAMS_PER_CHANNEL,
          firstIndex: i * 1_000_000,
          services: SERVICES,
        }),
      ),
    );
    const total = opened.reduce((s, r) => s + Number(r.ok ?? 0), 0);
    await sleep(1000);
    const trials = async (stalled: number): Promise<StalledSwitch> => {
      const all: StalledSwitch[] = [];
      for (let i = 0; i < TRIALS; i++) {
        all.push(await switchOnce(store, ++generation, clients, stalled, total));
        await sleep(500);
      }
      return median(all);
    };
    process.stderr.write(`bench relay-stalled: ${TRIALS} switches with ${total} healthy streams, none stalled…\n`);
    const none = await trials(0);
    for (let i = 0; i < STALLED; i++) {
      hostile.push(
        openStalledClient(relay.xdsPort, {
          id: `sidecar~10.66.${Math.floor(i / 250)}.${(i % 250) + 1}~stalled-${i}.bench~bench.svc.cluster.local`,
          metadata: { GENERATOR: 'grpc', NAMESPACE: 'bench' },
        }),
      );
    }
    const stuck = await unreadResponses(() => relay.getText('/metrics'), STALLED);
    process.stderr.write(
      `bench relay-stalled: ${TRIALS} switches with ${STALLED} stalled streams connected (${stuck} unread responses)…\n`,
    );
    const some = await trials(STALLED);
    const runs = [none, some];
    const ratio =
      none?.publishToLastMs && some?.publishToLastMs !== undefined && some.reached === some.total
        ? Math.round((some.publishToLastMs / none.publishToLastMs) * 100) / 100
        : undefined;
    return {
      node: process.version,
      healthy: total,
      runs,
      ...(ratio !== undefined ? { ratio } : {}),
      target: STALLED_TARGET_RATIO,
    };
  } finally {
    for (const h of hostile) h.close();
    for (const c of clients) c.child.kill('SIGKILL');
    await relay.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(runs: readonly StalledSwitch[]): StalledSwitch {
  const sorted = [...runs].sort((a, b) => (a.publishToLastMs ?? Infinity) - (b.publishToLastMs ?? Infinity));
  return sorted[Math.floor(sorted.length / 2)] as StalledSwitch;
}

/** Waits (up to 10 s) until the relay reports `n` unread responses; returns how many it reports. */
async function unreadResponses(metrics: () => Promise<string>, n: number): Promise<number> {
  let seen = 0;
  for (let i = 0; i < 100 && seen < n; i++) {
    seen = Number(/^meshsnap_relay_slow_writes (\d+)/m.exec(await metrics())?.[1] ?? 0);
    if (seen < n) await sleep(100);
  }
  return seen;
}

export function formatStalledTable(r: StalledBenchResult): string {
  const lines = [
    `relay with stalled readers: ${r.healthy} healthy streams; ratio = publish→last with stalled / without (target ≤ ${r.target})`,
    '| stalled streams | reached | publish→last ms | fan-out ms | ratio |',
    '|---:|---:|---:|---:|---:|',
  ];
  for (const s of r.runs) {
    const ratio =
      s.stalled === 0
        ? '1'
        : r.ratio === undefined
          ? '❌ (not all reached)'
          : `${r.ratio} ${r.ratio <= r.target ? '✅' : '❌'}`;
    lines.push(
      `| ${s.stalled} | ${s.reached}/${s.total} | ${s.publishToLastMs ?? '–'} | ${s.fanoutMs ?? '–'} | ${ratio} |`,
    );
  }
  return lines.join('\n');
}

/** Measures, prints the table, writes bench-results/relay-stalled.json. */
export async function runStalledBench(): Promise<StalledBenchResult> {
  const r = await measureStalled();
  process.stdout.write(formatStalledTable(r) + '\n');
  const out = join(process.cwd(), 'bench-results');
  mkdirSync(out, { recursive: true });
  const file = join(out, 'relay-stalled.json');
  writeFileSync(file, JSON.stringify(r, null, 2) + '\n');
  process.stderr.write(`bench relay-stalled: wrote ${file}\n`);
  return r;
}
