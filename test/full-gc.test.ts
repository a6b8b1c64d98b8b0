/** src/full-gc.ts: V8's gc() in a process started without --expose-gc, a full collection. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { setImmediate as nextTurn, setTimeout as delay } from 'node:timers/promises';
import { runInNewContext } from 'node:vm';
import { fullGc, worthCollecting } from '../src/full-gc.js';

test('fullGc gives a collection that frees an object nothing references', async () => {
  const collect = fullGc();
  const ref = new WeakRef({ payload: new Array<string>(1000).fill('x') });
  // A WeakRef's target stays alive until the end of the job that made or read it.
  await nextTurn();
  collect();
  assert.equal(ref.deref(), undefined);
});

test('worthCollecting: a collection pays only when the heap grew by an eighth of what the last one left', () => {
  const mb = 1 << 20;
  assert.equal(worthCollecting(10 * mb, 0), true); // the first
  assert.equal(worthCollecting(191 * mb, 180 * mb), false); // 11 MB since a collection that left 180
  assert.equal(worthCollecting(203 * mb, 180 * mb), true); // 23 MB
  assert.equal(worthCollecting(260 * mb, 220 * mb), true); // 40 MB
});

test('fullGc skips a collection asked right after one, with nothing allocated between', async () => {
  const majors: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors.push(1);
  });
  observer.observe({ entryTypes: ['gc'] });
  const collect = fullGc();
  collect();
  collect();
  collect();
  // gc entries are delivered asynchronously: wait for the first, then a little for any other
  for (let waited = 0; majors.length === 0 && waited < 2000; waited += 10) await delay(10);
  await delay(50);
  observer.disconnect();
  assert.equal(majors.length, 1);
});

test('fullGc counts a full collection it did not run: none right after one V8 ran', async () => {
  const majors = majorCollections();
  const collect = fullGc();
  const v8Collects = runInNewContext('gc') as () => void; // fullGc set --expose-gc
  collect(); // 1
  // Kept: the heap grows by more than an eighth of what the collection left…
  const kept = Array.from({ length: 8 }, () => new Array<number>(64 * 1024).fill(1.5));
  v8Collects(); // 2: a full collection fullGc did not run (as V8's own are)
  collect(); // …but not since the last full collection: skipped
  // On a later turn fullGc no longer watches (it knows its own collections only): it collects.
  await nextTurn();
  const more = Array.from({ length: 8 }, () => new Array<number>(64 * 1024).fill(2.5));
  collect(); // 3
  assert.equal(await majors.count(3), 3);
  assert.equal(kept.length + more.length, 16);
});

/** Counts the full collections from now on ('gc' entries come asynchronously): `count(n)` waits for n, then a little for more. */
function majorCollections(): { count(n: number): Promise<number> } {
  let majors = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++;
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    async count(n) {
      for (let waited = 0; majors < n && waited < 2000; waited += 10) await delay(10);
      await delay(50);
      observer.disconnect();
      return majors;
    },
  };
}
