/** OverlayMap (src/history/overlay-map.ts) behaves as a plain Map copy with the updates applied, and leaves the map it came from as it was. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OverlayMap } from '../../src/history/overlay-map.js';

const sorted = (m: ReadonlyMap<string, number>): [string, number][] =>
  [...m].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

test('random updates: every OverlayMap equals the plain map, and earlier ones stay as they were', () => {
  let seed = 7;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  let plain = new Map<string, number>(Array.from({ length: 200 }, (_, i) => [`k${i}`, i]));
  let overlay: ReadonlyMap<string, number> = new Map(plain);
  const history: { overlay: ReadonlyMap<string, number>; expected: [string, number][] }[] = [];
  for (let step = 0; step < 300; step++) {
    const updates = new Map<string, number | undefined>();
    for (let i = 0, n = 1 + rand(6); i < n; i++) updates.set(`k${rand(260)}`, rand(4) === 0 ? undefined : rand(1000));
    const next = new Map(plain);
    for (const [k, v] of updates) {
      if (v === undefined) next.delete(k);
      else next.set(k, v);
    }
    overlay = OverlayMap.updated(overlay, updates);
    plain = next;
    assert.equal(overlay.size, plain.size, `step ${step}: size`);
    assert.deepEqual(sorted(overlay), sorted(plain), `step ${step}: entries`);
    for (const k of updates.keys()) {
      assert.equal(overlay.has(k), plain.has(k), `step ${step}: has ${k}`);
      assert.equal(overlay.get(k), plain.get(k), `step ${step}: get ${k}`);
    }
    history.push({ overlay, expected: sorted(plain) });
  }
  for (const [i, h] of history.entries()) assert.deepEqual(sorted(h.overlay), h.expected, `map of step ${i} changed`);
});

test('keys, values, forEach and a deleted key that comes back', () => {
  const base = new Map([
    ['a', 1],
    ['b', 2],
  ]);
  const gone = OverlayMap.updated(base, new Map([['a', undefined]]));
  assert.equal(gone.has('a'), false);
  assert.equal(gone.get('a'), undefined);
  assert.equal(gone.size, 1);
  const back = OverlayMap.updated(gone, new Map([['a', 3]]));
  assert.deepEqual([...back.keys()].sort(), ['a', 'b']);
  assert.deepEqual([...back.values()].sort(), [2, 3]);
  const seen: string[] = [];
  back.forEach((v, k) => seen.push(`${k}=${v}`));
  assert.deepEqual(seen.sort(), ['a=3', 'b=2']);
  assert.deepEqual([...base].sort(), [
    ['a', 1],
    ['b', 2],
  ]);
});
