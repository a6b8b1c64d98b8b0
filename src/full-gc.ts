/**
 * A full (mark-compact) garbage collection on demand, for a Node process that knows where its
 * memory peaks: `meshsnap compile` runs one where much has just died (PipelineOptions.collect,
 * src/pipeline.ts). V8 sets its next heap limit from what a full collection leaves, so a few
 * well-placed ones keep the high-water mark near the live data at less CPU than a tighter heap
 * growth for the whole process, which collects every few dozen MB all along (docs/benchmarks-journal.md,
 * session 2026-11-25 second day). Node only (node:v8, node:vm): not for the Worker.
 */
import { GCProfiler, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's `gc()`, without starting the process with --expose-gc: a context made after the flag has
 * it. A call is skipped when the heap has grown too little since the last full collection for one
 * to pay (worthCollecting): the last one it ran, or one V8 ran itself since (naturalSince).
 */
export function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const natural = new NaturalCollections();
  let liveAfterLast = 0;
  return () => {
    liveAfterLast = natural.liveAfterLatest() ?? liveAfterLast;
    if (!worthCollecting(usedHeap(), liveAfterLast)) return;
    gc();
    liveAfterLast = usedHeap();
    natural.watch();
  };
}

/**
 * The full collections V8 runs itself after one of ours, in the same synchronous stretch of work
 * (a compile and build, whose calls come without an event-loop turn between them, so a 'gc'
 * PerformanceObserver would hear of them too late). At 10k services the watcher's first round
 * had V8 collect 572 → 511 MB near the end of its build, then forced one 1.4 s later that freed
 * 32 MB for ~0.5 s. A GCProfiler records every collection while it runs; it is stopped at the
 * next turn of the event loop, so it never runs, nor keeps its records, between rounds.
 */
class NaturalCollections {
  private profiler: GCProfiler | undefined;

  watch(): void {
    if (this.profiler) return;
    const profiler = new GCProfiler();
    profiler.start();
    this.profiler = profiler;
    setImmediate(() => this.stop()).unref();
  }

  /** The heap a full collection by V8 left since `watch`, if it ran one. Stops watching. */
  liveAfterLatest(): number | undefined {
    const statistics = this.stop();
    let live: number | undefined;
    for (const s of statistics) if (s.gcType === 'MarkSweepCompact') live = s.afterGC.heapStatistics.usedHeapSize;
    return live;
  }

  private stop(): readonly GcRecord[] {
    const profiler = this.profiler;
    this.profiler = undefined;
    // Node's records name their heap statistics in camelCase, not as @types/node says.
    const result = profiler?.stop() as unknown as { readonly statistics?: readonly GcRecord[] } | undefined;
    return result?.statistics ?? [];
  }
}

interface GcRecord {
  readonly gcType: string;
  readonly afterGC: { readonly heapStatistics: { readonly usedHeapSize: number } };
}

/** A collection marks the whole live heap but frees at most what was allocated since the last one. */
const MIN_GROWTH = 1 / 8;

/**
 * Whether a full collection may free enough to pay for marking the live heap: not when the heap
 * (`used`, live and garbage) grew by less than MIN_GROWTH of what the last collection left
 * (`liveAfterLast`, 0 before the first). At 10k services, the build's second collection among
 * its groups came 11 MB after one that left 180 MB, and freed those 11 MB for ~0.25 s of CPU.
 */
export function worthCollecting(used: number, liveAfterLast: number): boolean {
  return used - liveAfterLast >= liveAfterLast * MIN_GROWTH;
}

const usedHeap = (): number => getHeapStatistics().used_heap_size;
