/**
 * LastKnownGood validates an object's first version only when a second one arrives (nothing can
 * be substituted for a first version): its substitutions must be those of reviewing every version
 * at once, for any sequence of versions, valid or not, and deletes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Diagnostic } from '../../src/model/diagnostics.js';
import { LastKnownGood } from '../../src/watch/last-known-good.js';
import type { CachedObject } from '../../src/watch/object-cache.js';

const invalid = (o: CachedObject): Diagnostic => ({
  severity: 'error',
  code: 'invalid',
  message: `version ${o.resourceVersion ?? '?'} is invalid`,
});

function version(name: string, rv: number, valid: boolean): CachedObject {
  return {
    key: { kind: 'VirtualService', namespace: 'default', name },
    layer: 'config',
    bytes: new Uint8Array(),
    digest: `${valid ? 'good' : 'bad'}-${name}-${rv}`,
    object: {},
    resourceVersion: String(rv),
  };
}

const isValid = (o: CachedObject): boolean => o.digest.startsWith('good-');

/** The reference: every version validated when it is reviewed. */
class EagerLastKnownGood {
  private readonly good = new Map<string, CachedObject>();
  private readonly use = new Map<string, CachedObject>();

  review(o: CachedObject): void {
    const k = o.key.name;
    if (isValid(o)) {
      this.good.set(k, o);
      this.use.delete(k);
      return;
    }
    const previous = this.good.get(k);
    if (previous) this.use.set(k, previous);
    else this.use.delete(k);
  }

  forget(k: string): void {
    this.good.delete(k);
    this.use.delete(k);
  }

  resolve(o: CachedObject): CachedObject {
    return this.use.get(o.key.name) ?? o;
  }
}

/** A small deterministic generator (no Math.random: a failure must replay). */
function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

test('last-known-good: an object first version is not validated when it is reviewed', () => {
  const validated: string[] = [];
  const lkg = new LastKnownGood((o) => {
    validated.push(o.digest);
    return isValid(o) ? undefined : invalid(o);
  });
  const first = version('a', 1, true);
  assert.equal(lkg.review(first), undefined);
  assert.deepEqual(validated, [], 'nothing can be substituted for a first version');
  const second = version('a', 2, false);
  const substitution = lkg.review(second);
  assert.deepEqual(validated, [first.digest, second.digest]);
  assert.equal(lkg.resolve(second), first, 'the first version was valid: it is compiled instead');
  assert.equal(substitution?.usedResourceVersion, '1');
  assert.equal(substitution?.rejectedResourceVersion, '2');
  assert.deepEqual(
    lkg.diagnostics().map((d) => d.code),
    ['last-known-good'],
  );
});

test('last-known-good: an invalid first version is never used for a later invalid one', () => {
  const lkg = new LastKnownGood((o) => (isValid(o) ? undefined : invalid(o)));
  lkg.review(version('a', 1, false));
  const second = version('a', 2, false);
  assert.equal(lkg.review(second), undefined);
  assert.equal(lkg.resolve(second), second);
  assert.equal(lkg.isSubstituted('VirtualService/default/a'), false);
});

test('last-known-good: the same substitutions as validating every version at once, for random histories', () => {
  for (let seed = 1; seed <= 200; seed++) {
    const next = lcg(seed);
    const lkg = new LastKnownGood((o) => (isValid(o) ? undefined : invalid(o)));
    const eager = new EagerLastKnownGood();
    const names = ['a', 'b', 'c'];
    for (let step = 0; step < 40; step++) {
      const name = names[Math.floor(next() * names.length)] as string;
      if (next() < 0.15) {
        lkg.forget(`VirtualService/default/${name}`);
        eager.forget(name);
        continue;
      }
      const o = version(name, step, next() < 0.6);
      lkg.review(o);
      eager.review(o);
      assert.equal(lkg.resolve(o), eager.resolve(o), `seed ${seed}, step ${step}`);
      assert.equal(lkg.isSubstituted(`VirtualService/default/${name}`), eager.resolve(o) !== o);
    }
  }
});
