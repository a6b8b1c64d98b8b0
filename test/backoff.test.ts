/** The shared backoff formula: doubling from the base, capped, with or without full jitter. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { backoff, type BackoffPolicy } from '../src/backoff.js';

const exact: BackoffPolicy = { baseMs: 500, maxMs: 30_000, jitter: 'none' };
const jittered: BackoffPolicy = { baseMs: 100, maxMs: 5000, jitter: 'full' };

test('backoff doubles from the base after each failure and stops at the cap', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoff(n, exact)),
    [500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000],
  );
});

test('backoff stays at the cap (finite) after any number of failures', () => {
  assert.equal(backoff(1e6, exact), 30_000);
  assert.equal(backoff(1e6, { baseMs: 0, maxMs: 10, jitter: 'none' }), 0);
  assert.equal(backoff(0, exact), 500, 'no failure yet counts as the first');
});

test('full jitter draws a whole number of ms in [0, delay) from the injected random source', () => {
  assert.equal(
    backoff(1, jittered, () => 0),
    0,
  );
  assert.equal(
    backoff(1, jittered, () => 0.5),
    50,
  );
  assert.equal(
    backoff(3, jittered, () => 0.999),
    399,
  );
  assert.equal(
    backoff(20, jittered, () => 0.5),
    2500,
    'jitter applies below the cap',
  );
  assert.equal(
    backoff(2, jittered, () => 0.123456),
    24,
  );
});

test('without jitter the random source is not consulted', () => {
  assert.equal(
    backoff(3, exact, () => {
      throw new Error('random used');
    }),
    2000,
  );
});
