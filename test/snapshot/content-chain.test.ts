/**
 * The chain of a watcher's unread delta contents (src/snapshot/build/lazy-content.ts): bounded by
 * its steps and by what they hold, it materializes the older content only when one bound is
 * reached, and the newest content always reads back as every step applied.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BuiltSnapshot, ContentStep } from '../../src/snapshot/build/types.js';
import { ContentChain, LazyContent, type ChainLimits } from '../../src/snapshot/build/lazy-content.js';
import { SNAPSHOT_SCHEMA, type SnapshotContent } from '../../src/snapshot/content.js';
import { INFO, sidecarClass } from './sample-output.js';

const digest = (n: number): string => `sha256:${n.toString(16).padStart(64, '0')}`;

const BASE: SnapshotContent = {
  schema: SNAPSHOT_SCHEMA,
  compiler: INFO.compiler,
  inputsDigest: INFO.inputsDigest,
  groups: {
    endpoints: { clusters: {}, endpoints: { a: digest(0), b: digest(0) }, listeners: {}, routes: {} },
    outbound: { clusters: { c: digest(0) }, endpoints: {}, listeners: {}, routes: {} },
  },
  classes: [],
  selectors: [],
};

/** A step that gives `names` of the endpoints group the digest `n`. */
const step = (n: number, names: readonly string[] = ['a']): ContentStep => ({
  info: INFO,
  changes: names.map((name) => ({ group: 'endpoints', type: 'endpoints', name, digest: digest(n) })),
  removed: [],
  added: [],
  classes: undefined,
});

/** A chain on BASE; `push` adds steps and returns the newest content. */
function chainOn(limits?: ChainLimits): { chain: ContentChain; push: (s: ContentStep) => LazyContent } {
  const chain = new ContentChain(limits);
  chain.reset(LazyContent.computed(() => BASE));
  const unused = {} as BuiltSnapshot; // only read before a full build
  return { chain, push: (s) => chain.next(unused, s) };
}

test('a chain materializes when it holds its step limit, and reads back every step applied', () => {
  const { chain, push } = chainOn({ steps: 4, entries: 1000 });
  let last: LazyContent | undefined;
  for (let n = 1; n <= 10; n++) last = push(step(n));
  // Materialized when the 5th and the 9th step came (four steps held each time).
  assert.equal(chain.materialized, 2);
  assert.equal(last?.get().groups.endpoints?.endpoints.a, digest(10));
  assert.equal(last?.get().groups.endpoints?.endpoints.b, digest(0));
});

test('a chain materializes when its steps hold its entry limit, a class list counting one per class', () => {
  const { chain, push } = chainOn({ steps: 100, entries: 10 });
  for (let n = 1; n <= 9; n++) push(step(n, ['a', 'b', 'x']));
  // 3 entries a step: 12 held when the 5th came, 12 again when the 9th did.
  assert.equal(chain.materialized, 2);
  const classes = Array.from({ length: 10 }, (_, i) =>
    sidecarClass(`sidecar/default/c${i}`, ['a'], 'inbound/default/a'),
  );
  const withClasses: ContentStep = { ...step(20), classes: { classes, selectors: [] } };
  const { chain: other, push: pushOther } = chainOn({ steps: 100, entries: 10 });
  pushOther(withClasses);
  const last = pushOther(step(21));
  assert.equal(other.materialized, 1, 'a step with ten classes fills the limit');
  assert.equal(last.get().classes.length, 10);
  assert.equal(last.get().groups.endpoints?.endpoints.a, digest(21));
});

test('by default, 200 endpoint changes of five entries each are never materialized (a chain of 32 steps did so six times)', () => {
  const { chain, push } = chainOn();
  let last: LazyContent | undefined;
  for (let n = 1; n <= 200; n++) last = push(step(n, ['a', 'b', 'c', 'd', 'e']));
  assert.equal(chain.materialized, 0);
  const content = last?.get();
  assert.deepEqual(content?.groups.endpoints?.endpoints, {
    a: digest(200),
    b: digest(200),
    c: digest(200),
    d: digest(200),
    e: digest(200),
  });
  assert.deepEqual(content?.groups.outbound, BASE.groups.outbound);
});
