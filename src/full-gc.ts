/**
 * A full (mark-compact) garbage collection on demand, for a Node process that knows where its
 * memory peaks: `meshsnap compile` runs one where much has just died (PipelineOptions.collect,
 * src/pipeline.ts). V8 sets its next heap limit from what a full collection leaves, so a few
 * well-placed ones keep the high-water mark near the live data at less CPU than a tighter heap
 * growth for the whole process, which collects every few dozen MB all along (README, Benchmarks:
 * session 2026-11-25 second day). Node only (node:v8, node:vm): not for the Worker.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's `gc()`, without starting the process with --expose-gc: a context made after the flag has it. */
export function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
