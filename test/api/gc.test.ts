/**
 * POST /api/v1/gc over a local store with a bookinfo history: write-authenticated, bad bodies are
 * 400s, a grace period shorter than the store's freshen interval is refused, a dry run deletes
 * nothing, a real run deletes the dropped versions and what only they referenced while tagged and
 * head versions stay complete, and the audit log names who ran it and why.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { selectVersion } from '../../src/history/select.js';
import { verifyVersion } from '../../src/history/verify.js';
import { resourcesForClass } from '../../src/snapshot/classify.js';
import { nodeSha256Hex, type LocalStore } from '../../src/snapshot/store/local.js';
import type { SnapshotStore } from '../../src/snapshot/store/store.js';
import { XDS_TYPES } from '../../src/xds/type-urls.js';
import { compileAndPublish, STATE, tempStore } from '../history/helpers.js';

const TOKEN = 'gc-write-token';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
// Two hours ahead: everything the history wrote is past the default 1 h grace period.
const clock = () => new Date(Date.now() + 2 * 3_600_000);

let store: LocalStore;
let cleanup: () => void = () => undefined;

before(async () => {
  ({ store, cleanup } = tempStore());
  for (const vs of [
    'virtual-service-reviews-v3.yaml',
    'virtual-service-reviews-50-v3.yaml',
    'virtual-service-reviews-80-20.yaml',
    'virtual-service-reviews-90-10.yaml',
  ])
    await compileAndPublish(store, STATE, [vs]);
});
after(() => cleanup());

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const appOver = (s: SnapshotStore) =>
  createApp({
    store: s,
    auth: { writeToken: [{ name: 'ops', token: TOKEN }] },
    clock,
    compile: { hasher: nodeSha256Hex },
  });

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = auth,
  s: SnapshotStore = store,
): Promise<{ status: number; json: Json }> {
  const res = await appOver(s).request(path, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Json };
}
const gc = (body: unknown, headers?: Record<string, string>, s?: SnapshotStore) => post('/api/v1/gc', body, headers, s);

/** Every document and object of the version is readable, and it recompiles to its digest. */
async function assertComplete(selector: string): Promise<void> {
  const record = await selectVersion(store, 'main', selector);
  const content = await store.getSnapshot(record.digest);
  assert.ok(content, `snapshot of ${selector}`);
  for (const c of content.classes) {
    const r = resourcesForClass(content, c.id);
    for (const t of XDS_TYPES)
      for (const [name, d] of r?.[t] ?? []) assert.ok(await store.getObject(d), `${t} ${name} of ${selector}`);
  }
  const v = await verifyVersion(store, record, nodeSha256Hex);
  assert.ok(v.ok, `${selector}: ${v.reasons.join('; ')}`);
}

test('POST /api/v1/gc needs the write token', { timeout: 30_000 }, async () => {
  const none = await gc({}, { 'content-type': 'application/json' });
  assert.equal(none.status, 401);
  assert.equal(none.json.error.code, 'unauthorized');
  assert.equal((await gc({}, { ...auth, authorization: 'Bearer nope' })).status, 401);
  assert.deepEqual(await store.listVersions('main'), [4, 3, 2, 1]);
});

test('bad bodies are 400 bad_request, and nothing is deleted', { timeout: 30_000 }, async () => {
  const bad: [unknown, RegExp][] = [
    [{ keep: 0 }, /keep must be a whole number ≥ 1/],
    [{ keep: 1.5 }, /keep must be a whole number/],
    [{ keep: '3' }, /keep must be a whole number/],
    [{ keepDays: -1 }, /keepDays must be a number ≥ 0/],
    [{ graceMinutes: 'soon' }, /graceMinutes must be a number/],
    [{ dryRun: 'yes' }, /dryRun must be true or false/],
    [{ reason: 7 }, /reason must be a string/],
    [{ keep_days: 30 }, /unknown field "keep_days"/],
    [[1], /must be a JSON object/],
    ['{"keep":', /not JSON/],
  ];
  for (const [body, message] of bad) {
    const r = await gc(body);
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.json)}`);
    assert.equal(r.json.error.code, 'bad_request');
    assert.match(r.json.error.message, message);
  }
  assert.deepEqual(await store.listVersions('main'), [4, 3, 2, 1]);
});

test('a grace period shorter than the store’s freshen interval is a 400 naming both', { timeout: 30_000 }, async () => {
  // The local store refreshes on every reuse; an object store refreshes after 10 min by default.
  const objectStoreLike = Object.assign(Object.create(store) as LocalStore, { freshenAfterMs: 600_000 });
  const r = await gc({ keep: 1, graceMinutes: 5 }, auth, objectStoreLike);
  assert.equal(r.status, 400, JSON.stringify(r.json));
  assert.equal(r.json.error.code, 'bad_request');
  assert.match(r.json.error.message, /graceMinutes 5 is shorter than the store's freshen interval of 10 min/);
  assert.equal(
    (await gc({ keep: 1, graceMinutes: 10, dryRun: true }, auth, objectStoreLike)).status,
    200,
    'equal to the interval is enough',
  );
  assert.deepEqual(await store.listVersions('main'), [4, 3, 2, 1]);
});

test(
  'dry run reports and deletes nothing; a real run deletes the dropped versions, keeps tagged and head complete, and is audited',
  { timeout: 60_000 },
  async () => {
    const tagged = await post('/api/v1/channels/main/tags', { version: 1, name: 'release-1' });
    assert.equal(tagged.status, 201, JSON.stringify(tagged.json));

    const dry = await gc({ keep: 1, dryRun: true });
    assert.equal(dry.status, 200, JSON.stringify(dry.json));
    assert.equal(dry.json.action, 'gc');
    assert.equal(dry.json.dryRun, true);
    assert.deepEqual(dry.json.keptVersions.main, [4, 1]);
    assert.deepEqual(dry.json.deletedVersions.main, [3, 2]);
    assert.ok(dry.json.deletedDocuments > 0, 'the dry run counts what it would delete');
    assert.deepEqual(await store.listVersions('main'), [4, 3, 2, 1], 'a dry run deletes nothing');
    for (const v of ['2', '3']) await assertComplete(v);

    const real = await gc({ keep: 1, reason: 'weekly cleanup' });
    assert.equal(real.status, 200, JSON.stringify(real.json));
    assert.equal(real.json.dryRun, false);
    assert.deepEqual(real.json.deletedVersions.main, [3, 2]);
    assert.ok(real.json.deletedDocuments > 0 && real.json.deletedObjects > 0, JSON.stringify(real.json));
    assert.equal(real.json.deletedDocuments, dry.json.deletedDocuments, 'the dry run counted what the run deleted');
    assert.deepEqual(await store.listVersions('main'), [4, 1]);
    for (const v of ['latest', 'release-1']) await assertComplete(v);

    const again = await gc({ keep: 1 });
    assert.equal(again.json.deletedDocuments + again.json.deletedObjects, 0, 'nothing left to collect');

    const res = await appOver(store).request('/api/v1/audit?channel=main');
    const entries = ((await res.json()) as Json).entries as Json[];
    const runs = entries.filter((e) => e.kind === 'gc');
    assert.equal(runs.length, 2, 'one record per real run, none for the dry run');
    const first = runs.find((e) => e.reason === 'weekly cleanup');
    assert.ok(first, JSON.stringify(runs));
    assert.equal(first.actor, 'ops', 'the token name is the actor');
    assert.deepEqual(first.detail.deletedVersions, { main: [3, 2] });
    assert.equal(first.detail.keep, 1);
  },
);
