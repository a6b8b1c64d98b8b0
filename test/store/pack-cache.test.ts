/** The pack cache a long-running publisher injects into writePacks: bounded by bytes, least recently used out first. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newPackCache } from '../../src/snapshot/store/pack-cache.js';

const entries = (name: string): Map<string, Uint8Array> => new Map([[name, new Uint8Array([1])]]);

test('the pack cache keeps packs within its byte budget, dropping the least recently used', () => {
  const cache = newPackCache(100);
  cache.remember('a', entries('a'), 40);
  cache.remember('b', entries('b'), 40);
  assert.ok(cache.get('a'), 'a was used last: b goes first');
  cache.remember('c', entries('c'), 40);
  assert.equal(cache.get('b'), undefined);
  assert.deepEqual([...(cache.get('a') ?? [])], [...entries('a')]);
  assert.deepEqual([...(cache.get('c') ?? [])], [...entries('c')]);
});

test('a pack bigger than the whole budget is not kept, and evicts nothing', () => {
  const cache = newPackCache(100);
  cache.remember('a', entries('a'), 60);
  cache.remember('huge', entries('huge'), 101);
  assert.equal(cache.get('huge'), undefined);
  assert.ok(cache.get('a'));
});
