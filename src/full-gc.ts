/**
 * A full (mark-compact) garbage collection on demand, for a Node process that knows where its
 * memory peaks: `meshsnap compile` runs one where much has just died (PipelineOptions.collect,
 * src/pipeline.ts). V8 sets its next heap limit from what a full collection leaves, so a few
 * well-placed ones keep the high-water mark near the live data at less CPU than a tighter heap
 * growth for the whole process, which collects every few dozen MB all along (README, Benchmarks:
 * session 2026-11-25 second day). Node only (node:v8, node:vm): not for the Worker.
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's `gc()`, without starting the process with --expose-gc: a context made after the flag has
 * it. A call is skipped when the heap has grown too little since the last collection it ran for
 * one to pay (worthCollecting).
 */
export function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  let liveAfterLast = 0;
  return () => {
    if (!worthCollecting(usedHeap(), liveAfterLast)) return;
    gc();
    liveAfterLast = usedHeap();
  };
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
