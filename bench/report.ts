/** The benchmark's Markdown table and the targets it is judged against. */
import type { SizeResult } from './measure.js';

export const TARGETS = {
  /** Full compile of 10k services, inputs → snapshot. */
  fullMs10k: 2500,
  peakRssMB10k: 512,
  endpointChangeMs: 5,
} as const;

type Row = SizeResult | { services: number; error: string };

const ms = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
const mb = (bytes: number): string => (bytes / (1 << 20)).toFixed(1);
const mark = (ok: boolean): string => (ok ? '✅' : '❌');

export function formatTable(rows: readonly Row[]): string {
  const head = [
    '| services | docs | full compile ms (cold / warm) | inputs / compile / snapshot ms | snapshot w/ noble ms | 1 endpoint change ms | peak RSS MB | resources | objects | snapshot MB | YAML parse ms |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const lines = rows.map((r) => {
    if ('error' in r) return `| ${r.services} | failed: ${r.error.replace(/\|/g, '/')} |||||||||| `;
    const s = r.stagesMs;
    const big = r.services >= 10000;
    const full = `${ms(r.fullMs)} / ${ms(r.fullWarmMs)}${big ? ` ${mark(r.fullMs <= TARGETS.fullMs10k)}` : ''}`;
    const ep = `${ms(r.endpointChange.ms)} (${r.endpointChange.mode}) ${mark(r.endpointChange.ms <= TARGETS.endpointChangeMs)}`;
    const rss = `${r.peakRssMB.toFixed(0)}${big ? ` ${mark(r.peakRssMB <= TARGETS.peakRssMB10k)}` : ''}`;
    return `| ${r.services} | ${r.documents} | ${full} | ${ms(s.inputs)} / ${ms(s.compile)} / ${ms(s.snapshot)} | ${ms(r.snapshotNobleMs)} | ${ep} | ${rss} | ${r.resources} | ${r.objects} | ${mb(r.snapshotBytes)} | ${ms(r.yaml.parseMs)} (+${ms(r.yaml.inputSetMs)}) |`;
  });
  const targets = `Targets: 10k services ≤ ${TARGETS.fullMs10k} ms and ≤ ${TARGETS.peakRssMB10k} MB peak RSS; one endpoint change ≤ ${TARGETS.endpointChangeMs} ms.`;
  return [...head, ...lines, '', targets].join('\n');
}
