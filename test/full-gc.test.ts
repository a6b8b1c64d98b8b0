/** src/full-gc.ts: V8's gc() in a process started without --expose-gc, a full collection. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fullGc } from '../src/full-gc.js';

test('fullGc gives a collection that frees an object nothing references', async () => {
  const collect = fullGc();
  const ref = new WeakRef({ payload: new Array<string>(1000).fill('x') });
  // A WeakRef's target stays alive until the end of the job that made or read it.
  await nextTurn();
  collect();
  assert.equal(ref.deref(), undefined);
});
