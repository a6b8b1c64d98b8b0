/**
 * What holds memory in the full pipeline built by a SnapshotBuilder (what the watcher keeps; the CLI and
 * functions now build one-shot, bench/compile-state.ts `compileState`), for issue 16:
 *
 *   node --expose-gc dist/bench/heap-profile.js <services> [--sampling] [--exclusive] [--snapshots DIR]
 *
 * Prints, as Markdown:
 * - per stage (after a full GC): live heap, external memory (array buffers included), RSS, and the peak RSS so far;
 * - with every stage's result held, the heap each holder frees when released in pipeline order
 *   (documents first, the builder's tables of messages last): the marginal retained size, the rows sum to the total;
 * - `--exclusive`: per holder, the heap only it retains (a fresh pipeline run per holder, that
 *   holder alone released), which is what dropping it early would save;
 * - `--sampling`: V8's sampling heap profiler at the end (objects still alive, by the source file
 *   and function that allocated them), by owner area and top functions;
 * - `--snapshots DIR`: a V8 heap snapshot per stage (open them in Chrome DevTools; ~1 GB at 2k).
 */
import { Session } from 'node:inspector/promises';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { compileContext, createContext } from '../src/compile/index.js';
import { Diagnostics } from '../src/model/diagnostics.js';
import type { RawDocument } from '../src/inputs/parse.js';
import { inputSetAndStoredInputs } from '../src/snapshot/stored-inputs/index.js';
import { SnapshotBuilder } from '../src/snapshot/build.js';
import type { Hasher } from '../src/snapshot/digest.js';
import { ResourceEncoder } from '../src/snapshot/encoder.js';
import { BENCH_COMPILER } from './compile-state.js';
import { generateMesh } from './synthetic.js';

const MB = 1024 * 1024;
const hasher: Hasher = (bytes) => createHash('sha256').update(bytes).digest('hex');

function gc(): void {
  const run = (globalThis as { gc?: () => void }).gc;
  if (!run) throw new Error('run with node --expose-gc');
  run();
  run();
}

interface Memory {
  readonly heapMB: number;
  readonly externalMB: number;
  readonly rssMB: number;
  readonly peakRssMB: number;
}

function memory(): Memory {
  gc();
  const m = process.memoryUsage();
  return {
    heapMB: m.heapUsed / MB,
    // `external` includes the array buffers (the encoded bytes).
    externalMB: m.external / MB,
    rssMB: m.rss / MB,
    peakRssMB: process.resourceUsage().maxRSS / 1024,
  };
}

/** Every stage's result, as the bench's `compileState` keeps them; a holder is released by deleting its key. */
interface Held {
  docs?: readonly RawDocument[];
  stored?: object;
  inputs?: object;
  ctx?: object;
  output?: object;
  snapshot?: object;
  builder?: object;
  encoder?: object;
}

/** The builder's private parts, reached into here only to release them one by one. */
interface BuilderInternals {
  current?: unknown;
  encoder?: unknown;
  trees: { encoder?: unknown; refs?: unknown; groups: Map<string, { trees?: unknown }> };
}
const internals = (held: Held): BuilderInternals | undefined => held.builder as BuilderInternals | undefined;

/** Pipeline order: what a stage no longer needs is released first; then the builder's parts; the
 * encoder before the tables, so the tables' row is the messages (and every WeakMap entry keyed by them). */
const RELEASES: readonly (readonly [name: string, release: (held: Held) => void])[] = [
  ['documents', (h) => delete h.docs],
  ['stored inputs', (h) => delete h.stored],
  ['compile context', (h) => delete h.ctx],
  ['InputSet', (h) => delete h.inputs],
  ['compile output (its maps)', (h) => delete h.output],
  [
    'snapshot (objects, documents)',
    (h) => {
      delete h.snapshot;
      const b = internals(h);
      if (b) b.current = undefined;
    },
  ],
  [
    "builder: the tables' Merkle trees",
    (h) => {
      for (const state of internals(h)?.trees.groups.values() ?? []) state.trees = undefined;
    },
  ],
  [
    'builder: object refcounts',
    (h) => {
      const b = internals(h);
      if (b) b.trees.refs = undefined;
    },
  ],
  [
    'encoder (bytes and digests per message)',
    (h) => {
      delete h.encoder;
      const b = internals(h);
      if (b) b.encoder = b.trees.encoder = undefined;
    },
  ],
  ["builder: tables (the compile output's messages)", (h) => internals(h)?.trees.groups.clear()],
  ['builder: the rest (consistency, content chain, index)', (h) => delete h.builder],
];

type StageRow = readonly [stage: string, memory: Memory];

/** The pipeline of bench/compile-state.ts `compileState`, stage by stage, everything kept in `held`. */
function runPipeline(services: number, onStage: (stage: string) => void): Held {
  const held: Held = {};
  held.docs = generateMesh({ services }).docs;
  onStage('documents (synthetic mesh)');
  const { inputs, stored } = inputSetAndStoredInputs(held.docs, hasher);
  held.inputs = inputs;
  held.stored = stored;
  onStage('InputSet + stored inputs');
  const diags = new Diagnostics();
  for (const d of inputs.diagnostics) diags.add(d);
  const ctx = createContext(inputs, diags);
  held.ctx = ctx;
  held.output = compileContext(ctx);
  onStage('compile output');
  const encoder = new ResourceEncoder(hasher);
  const builder = new SnapshotBuilder({ inputsDigest: stored.digest, compiler: BENCH_COMPILER }, { encoder });
  held.encoder = encoder;
  held.builder = builder;
  held.snapshot = builder.build(held.output as Parameters<SnapshotBuilder['build']>[0]);
  onStage('snapshot built');
  return held;
}

/** The owner area of a source file (the session's split of the code, /work/prof/perf-common.md). */
function ownerOf(url: string): string {
  const areas: readonly [RegExp, string][] = [
    [/node_modules\//, 'libraries'],
    [/src\/xds\/validate\/|envoy-acceptance/, 'genchk'],
    [
      /src\/xds\/wire\/|src\/xds\/proto|route-config-encoder|snapshot\/encoder|route-chunks|snapshot\/composite/,
      'genenc',
    ],
    [/snapshot\/build\/|snapshot\/(tree|consistency|references|digest|content)\./, 'books'],
    [/src\/compile\/|src\/model\//, 'cout'],
    [/src\/inputs\/|stored-inputs\/|canonical-json/, 'inp'],
    [/src\/watch\/|snapshot\/store\/|src\/history\//, 'wfirst'],
    [/bench\/synthetic/, 'bench mesh'],
    [/src\/pipeline|bench\//, 'mem'],
  ];
  for (const [re, owner] of areas) if (re.test(url)) return owner;
  return url ? 'other' : '(V8/native)';
}

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

function sampledLive(root: SamplingNode): { byOwner: Map<string, number>; byFunction: Map<string, number> } {
  const byOwner = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const stack = [root];
  for (let n = stack.pop(); n; n = stack.pop()) {
    stack.push(...n.children);
    if (n.selfSize === 0) continue;
    const { url, functionName, lineNumber } = n.callFrame;
    const owner = ownerOf(url);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + n.selfSize);
    const file = url.replace(/^.*\/dist\//, '').replace(/^.*node_modules\//, '');
    const fn = `${functionName || '(anonymous)'} ${file}:${lineNumber + 1} [${owner}]`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + n.selfSize);
  }
  return { byOwner, byFunction };
}

const fmt = (mb: number): string => mb.toFixed(0);
const sortedDesc = (m: Map<string, number>): [string, number][] => [...m].sort((a, b) => b[1] - a[1]);

function printStages(rows: readonly StageRow[]): void {
  console.log(
    '| stage (after a full GC) | heap MB | external (incl. array buffers) MB | RSS MB | peak RSS so far MB |',
  );
  console.log('|---|---:|---:|---:|---:|');
  for (const [stage, m] of rows)
    console.log(`| ${stage} | ${fmt(m.heapMB)} | ${fmt(m.externalMB)} | ${fmt(m.rssMB)} | ${fmt(m.peakRssMB)} |`);
}

/** Releases the holders one by one in pipeline order; returns what each freed (heap + external). */
function marginal(held: Held): Map<string, number> {
  const freed = new Map<string, number>();
  let before = memory();
  for (const [name, release] of RELEASES) {
    release(held);
    const after = memory();
    freed.set(name, before.heapMB + before.externalMB - (after.heapMB + after.externalMB));
    before = after;
  }
  return freed;
}

/** Per holder: a fresh run, that holder alone released: what only it retains. */
function exclusive(services: number): Map<string, number> {
  const only = new Map<string, number>();
  for (const [name, release] of RELEASES) {
    let held: Held | undefined = runPipeline(services, () => {});
    const all = memory();
    release(held);
    const without = memory();
    only.set(name, all.heapMB + all.externalMB - (without.heapMB + without.externalMB));
    held = undefined;
  }
  return only;
}

async function main(): Promise<void> {
  const services = Number(process.argv[2] ?? 2000);
  const flags = new Set(process.argv.slice(3));
  const snapshotsAt = process.argv.indexOf('--snapshots');
  const snapshotDir = snapshotsAt >= 0 ? process.argv[snapshotsAt + 1] : undefined;
  if (snapshotDir) mkdirSync(snapshotDir, { recursive: true });

  const session = new Session();
  if (flags.has('--sampling')) {
    session.connect();
    await session.post('HeapProfiler.startSampling', { samplingInterval: 64 * 1024 });
  }
  const rows: StageRow[] = [['start', memory()]];
  let k = 0;
  const held = runPipeline(services, (stage) => {
    rows.push([stage, memory()]);
    if (snapshotDir) writeHeapSnapshot(join(snapshotDir, `${services}-${++k}.heapsnapshot`));
  });
  console.log(`## ${services} services (${held.docs?.length} documents), node ${process.version}\n`);
  printStages(rows);

  if (flags.has('--sampling')) {
    const { profile } = (await session.post('HeapProfiler.getSamplingProfile')) as unknown as {
      profile: { head: SamplingNode };
    };
    await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    const { byOwner, byFunction } = sampledLive(profile.head);
    console.log('\nLive at the end, by the area that allocated it (sampled, MB):\n');
    console.log('| area | MB |\n|---|---:|');
    for (const [owner, bytes] of sortedDesc(byOwner)) console.log(`| ${owner} | ${fmt(bytes / MB)} |`);
    console.log('\nTop allocating functions of what is live at the end (sampled, MB):\n');
    console.log('| function | MB |\n|---|---:|');
    for (const [fn, bytes] of sortedDesc(byFunction).slice(0, 30))
      console.log(`| ${fn} | ${(bytes / MB).toFixed(1)} |`);
  }

  const freed = marginal(held);
  const only = flags.has('--exclusive') ? exclusive(services) : undefined;
  console.log('\nHeap + external each holder frees (MB): released in pipeline order / released alone:\n');
  console.log('| holder | in order | alone |\n|---|---:|---:|');
  for (const [name] of RELEASES) {
    const alone = only?.get(name);
    console.log(`| ${name} | ${fmt(freed.get(name) ?? 0)} | ${alone === undefined ? '—' : fmt(alone)} |`);
  }
  const end = memory();
  console.log(`\nAfter releasing everything: heap ${fmt(end.heapMB)} MB (module-level caches and code).`);
}

await main();
