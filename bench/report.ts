/** The benchmark's Markdown table and the targets it is judged against. */
import type { Stages } from './compile-state.js';
import type { SizeResult } from './measure.js';

export const TARGETS = {
  /** Full compile of 10k services, inputs → snapshot. */
  fullMs10k: 2500,
  peakRssMB10k: 512,
  endpointChangeMs: 5,
  /** The watcher's first round at 10k (every object → first publish), and a restart's readiness. */
  firstRoundMs10k: 5000,
  restartReadyMs10k: 3000,
} as const;

type Row = SizeResult | { services: number; error: string };

/** `–` for a value not measured (NaN comes back from JSON as null). */
const ms = (v: number | null): string =>
  typeof v !== 'number' || !Number.isFinite(v) ? '–' : v >= 100 ? v.toFixed(0) : v.toFixed(1);
const mb = (bytes: number): string => (bytes / (1 << 20)).toFixed(1);
const mark = (ok: boolean): string => (ok ? '✅' : '❌');

const stage = (s: Stages, k: string): string => (s[k] === undefined ? '–' : ms(s[k]));

export function formatTable(rows: readonly Row[]): string {
  const head = [
    '| services | docs | full compile ms (cold / warm) | inputs + stored inputs (one pass) / compile / snapshot ms | snapshot w/ noble ms | 1 endpoint change → store ms | full recompile ms | peak RSS MB (full compile / watcher process) | resources | objects | snapshot MB | YAML parse ms |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const ok = rows.filter((r): r is SizeResult => !('error' in r));
  const lines = rows.map((r) => {
    if ('error' in r) return `| ${r.services} | failed: ${r.error.replace(/\|/g, '/')} |||||||||||`;
    const s = r.stagesMs;
    const big = r.services >= 10000;
    const full = `${ms(r.fullMs)} / ${ms(r.fullWarmMs)}${big ? ` ${mark(r.fullMs <= TARGETS.fullMs10k)}` : ''}`;
    const e = r.endpointChange;
    const ep = `${ms(e.ms)} ${mark(e.ms <= TARGETS.endpointChangeMs)}${e.matchesFullRecompile ? '' : ' (≠ full recompile!)'}${e.mode === 'incremental' ? '' : ` (${e.mode})`}`;
    const rss = `${r.peakRssMB.toFixed(0)}${big ? ` ${mark(r.peakRssMB <= TARGETS.peakRssMB10k)}` : ''} / ${r.peakRssWatchMB.toFixed(0)}`;
    const stages = ['inputs', 'compile', 'snapshot'].map((k) => stage(s, k)).join(' / ');
    return `| ${r.services} | ${r.documents} | ${full} | ${stages} | ${ms(r.snapshotNobleMs)} | ${ep} | ${ms(e.fullRecompileMs)} | ${rss} | ${r.resources} | ${r.objects} | ${mb(r.snapshotBytes)} | ${ms(r.yaml.parseMs)} (+${ms(r.yaml.inputSetMs)}) |`;
  });
  const breakdown = [
    '',
    'One endpoint change reaches the store (median of several): a changed EndpointSlice object handed to the watcher',
    '(src/watch/watcher.ts, no API server, no debounce wait) until the new head is written in a LocalStore in a temp dir.',
    'receive: object cache (canonical form, digest); inputs: last-known-good review + stored inputs tree update;',
    'compile: InputSet patch + IncrementalCompiler.update + SnapshotBuilder.applyDelta; publish: head read, one pack (inputs',
    'and snapshot objects and documents), version record, head. Watcher compile: its full first round vs the median incremental one.',
    '',
    '| services | total ms | receive | inputs | compile | publish | bytes written (objects + documents) | documents written | version record bytes (diagnostics) | watcher compile ms (full / incremental) | first round ms (all objects → published) | watcher restart ms (ready / first round, what it published and wrote) |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...ok.map((r) => {
      const e = r.endpointChange;
      const w = r.watcher;
      return `| ${r.services} | ${ms(e.ms)} | ${['receive', 'inputs', 'compile', 'publish'].map((k) => stage(e.stagesMs, k)).join(' | ')} | ${e.bytesWritten} | ${e.documentsWritten} | ${e.recordBytes ?? '–'} (${r.diagnostics}) | ${ms(w.fullCompileMs)} / ${ms(w.incrementalCompileMs)} | ${ms(w.firstRoundMs)} | ${restartCell(w.restart)} |`;
    }),
  ];
  const restartNote = [
    '',
    `Watcher restart: a new watcher over the store that already holds the state, fed every object (ready: its informers synced), then its first round, which should publish nothing and write nothing. Targets: ready ≤ ${TARGETS.restartReadyMs10k} ms at 10k; first round at 10k ≤ ${TARGETS.firstRoundMs10k} ms.`,
  ];
  const config = [
    '',
    'Config changes in the same watcher after the endpoint changes (each compiled in full, published as a delta; ms per change in order, first to last):',
    '',
    '| services | VirtualService (a route timeout) | DestinationRule (a pool limit) | new Service (a copy under a new name) | new pod (a replica) | watcher RSS after, MB |',
    '|---:|---:|---:|---:|---:|---:|',
    ...ok.map((r) => {
      const c = r.configChange;
      if (!c) return `| ${r.services} | – | – | – | – | – |`;
      const list = (xs: readonly number[]) => xs.map(ms).join(', ');
      return `| ${r.services} | ${list(c.virtualServiceMs)} | ${list(c.destinationRuleMs)} | ${list(c.newServiceMs)} | ${list(c.newPodMs ?? [])} | ${c.rssAfterMB.toFixed(0)} |`;
    }),
  ];
  const targets = `Targets: 10k services ≤ ${TARGETS.fullMs10k} ms and ≤ ${TARGETS.peakRssMB10k} MB peak RSS (full compile); one endpoint change reaches the store ≤ ${TARGETS.endpointChangeMs} ms.`;
  return [...head, ...lines, ...breakdown, ...restartNote, ...config, '', targets].join('\n');
}

function restartCell(r: SizeResult['watcher']['restart'] | undefined): string {
  if (!r) return '–';
  const quiet = r.publish === 'unchanged' && r.bytesWritten === 0;
  return `${ms(r.readyMs)} / ${ms(r.roundMs)} (${r.publish}, ${r.bytesWritten} B) ${mark(quiet)}`;
}
