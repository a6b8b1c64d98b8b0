/**
 * The publish guard on a pinned channel: a pinned round serves the pinned config with the
 * cluster's endpoints, and endpoints that collapsed are refused (audited, head unchanged) unless
 * allowShrink.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { auditTrail } from '../../src/history/audit.js';
import { candidatesChannel } from '../../src/history/context.js';
import { pin } from '../../src/history/pin.js';
import { pinnedRefusalMessage, pinnedRound } from '../../src/history/pinned-round.js';
import { parseDocuments } from '../../src/inputs/parse.js';
import { compileTexts } from '../../src/pipeline.js';
import { storedDocument } from '../../src/snapshot/stored-inputs/index.js';
import { nodeSha256Hex, type LocalStore } from '../../src/snapshot/store/local.js';
import { compileAndPublish, context, sample, STATE, tempStore } from './helpers.js';

/** The bookinfo state with every EndpointSlice gone (every pod of the mesh lost). */
const NO_ENDPOINTS = STATE.split(/^---$/m)
  .filter((doc) => !/^kind: EndpointSlice$/m.test(doc))
  .join('---');

const files = (state: string, vs: string) => [
  { file: 'state.yaml', text: state },
  sample('destination-rule-all.yaml'),
  sample(vs),
];
const round = (state: string, vs: string, allowShrink?: boolean) => {
  const c = compileTexts(files(state, vs), { hasher: nodeSha256Hex });
  const objects = files(state, vs).flatMap((f) =>
    parseDocuments(f.text, f.file).docs.flatMap((d) => storedDocument(d.object, nodeSha256Hex) ?? []),
  );
  return pinnedRound({
    store,
    channel: 'main',
    objects,
    snapshot: c.snapshot,
    diagnostics: c.diagnostics,
    createdAt: new Date().toISOString(),
    hasher: nodeSha256Hex,
    actor: 'watcher',
    ...(allowShrink !== undefined ? { allowShrink } : {}),
  });
};

let store: LocalStore;
let cleanup: () => void;
before(async () => {
  ({ store, cleanup } = tempStore());
  assert.equal(await compileAndPublish(store, STATE, ['virtual-service-reviews-v3.yaml']), 1);
  await pin(context(store), 'latest');
});
after(() => cleanup());

test('the fixture without EndpointSlices still has its services', () => {
  assert.notEqual(NO_ENDPOINTS, STATE);
  assert.match(NO_ENDPOINTS, /^kind: Service$/m);
  assert.doesNotMatch(NO_ENDPOINTS, /^kind: EndpointSlice$/m);
});

test('a pinned round whose endpoints collapsed is refused: the head stays, a guard event says why', async () => {
  const r = await round(NO_ENDPOINTS, 'virtual-service-reviews-50-v3.yaml');
  assert.ok(r?.refused, 'refused');
  assert.equal(r.refused.pinned, 1);
  assert.equal(r.refused.served, 1);
  assert.equal(r.served.status, 'unchanged');
  assert.ok(
    r.refused.verdict.problems.some((p) => /serves 0 endpoints where [1-9][0-9]* are served now/.test(p)),
    r.refused.verdict.problems.join('; '),
  );
  assert.match(
    pinnedRefusalMessage('main', r.refused),
    /pinned to version 1 and keeps serving version 1.*--allow-shrink/,
  );
  assert.equal((await store.readChannel('main'))?.version, 1, 'the head did not move');
  // The config change is still a candidate (config changes are what candidates hold)…
  assert.deepEqual(await store.listVersions(candidatesChannel('main')), [1]);
  assert.equal(r.candidateVersion, 1);
  // …and the refusal is audited, naming the pin.
  const guard = (await auditTrail(store, { channel: 'main' })).filter((e) => e.kind === 'guard');
  assert.equal(guard.length, 1);
  assert.equal(guard[0]?.version, 1);
  assert.equal((guard[0]?.detail as { pinned?: number } | undefined)?.pinned, 1);
  assert.equal((guard[0]?.detail as { candidate?: string } | undefined)?.candidate, 'candidate:1');
});

test('the same pinned round with allowShrink is served', async () => {
  const r = await round(NO_ENDPOINTS, 'virtual-service-reviews-50-v3.yaml', true);
  assert.equal(r?.refused, undefined);
  assert.equal(r?.served.status, 'published');
  assert.equal((await store.readChannel('main'))?.version, 2);
});

test('a pinned round that keeps its endpoints passes the guard', async () => {
  const r = await round(STATE, 'virtual-service-reviews-50-v3.yaml');
  assert.equal(r?.refused, undefined, 'growing back is never refused');
  assert.equal(r?.served.status, 'published');
  assert.equal((await store.readChannel('main'))?.version, 3);
});
