/**
 * Safe publishing through the HTTP API: a body that compiles to nothing is refused (409
 * `publish_guard`) and recorded as a candidate, not served to every proxy; rollback refuses to
 * serve clusters emptied of endpoints unless `force`; pin and tag do not move silently.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const file = (p: string) => ({ file: p.split('/').pop() as string, text: readFileSync(p, 'utf8') });
const STATE = file(BOOKINFO_STATE);
const DR = file(join(NET, 'destination-rule-all.yaml'));
const V3 = file(join(NET, 'virtual-service-reviews-v3.yaml'));
const V50 = file(join(NET, 'virtual-service-reviews-50-v3.yaml'));
/** What used to replace the whole mesh: a Deployment without apiVersion, nothing else. */
const DEPLOYMENT_ONLY = {
  file: 'deploy.yaml',
  text: 'kind: Deployment\nmetadata: {name: web, namespace: default}\nspec: {replicas: 1}\n',
};
const SERVICES_ONLY = {
  file: 'services.yaml',
  text: STATE.text
    .split(/^---$/m)
    .filter((d) => !/^kind: (Pod|EndpointSlice)$/m.test(d))
    .join('---'),
};

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-api-safety-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const WRITE = 'write-token-1';
let tick = 0;
const clock = () => new Date(Date.UTC(2030, 0, 1, 0, 0, tick++));

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function apiOn(dir: string) {
  const app = createApp({
    store: new LocalStore(join(tmp, dir)),
    auth: { writeToken: WRITE },
    clock,
    compile: { hasher: nodeSha256Hex },
  });
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: Json }> => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${WRITE}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, json: (await res.json()) as Json };
  };
  return {
    post: (path: string, body: unknown) => call('POST', `/api/v1/channels/main/${path}`, body),
    get: (path: string) => call('GET', `/api/v1/channels/main${path}`),
  };
}

test('compile: a body that compiles to nothing is a 409 publish_guard, recorded as a candidate; allowShrink serves it', async () => {
  const api = apiOn('guard');
  assert.equal((await api.post('compile', { files: [STATE, DR, V3] })).status, 201);

  const refused = await api.post('compile', { files: [DEPLOYMENT_ONLY], reason: 'oops' });
  assert.equal(refused.status, 409, JSON.stringify(refused.json));
  assert.equal(refused.json.error.code, 'publish_guard');
  assert.match(refused.json.error.message, /no proxy classes/);
  assert.match(refused.json.error.message, /every service of namespace\(s\) default, istio-system/);
  assert.match(refused.json.error.message, /candidate:1/);

  const snapshots = (await api.get('/snapshots')).json;
  assert.deepEqual(
    snapshots.snapshots.map((s: Json) => s.version),
    [1],
    'the served channel did not move',
  );
  assert.equal((await api.get('/snapshots/candidate:1')).json.counts.classes, 0);

  const forced = await api.post('compile', { files: [DEPLOYMENT_ONLY], allowShrink: true, reason: 'on purpose' });
  assert.equal(forced.status, 201, JSON.stringify(forced.json));
  assert.equal(forced.json.version, 2);
});

test('rollback and promote refuse clusters emptied of endpoints unless force; pin and tag need force to move', async () => {
  const api = apiOn('rollback');
  assert.equal((await api.post('compile', { files: [STATE, DR, V3] })).status, 201);
  assert.equal((await api.post('compile', { files: [SERVICES_ONLY, DR, V50], allowShrink: true })).status, 201);

  const rb = await api.post('rollback', { version: 1, reason: 'undo' });
  assert.equal(rb.status, 409, JSON.stringify(rb.json));
  assert.equal(rb.json.error.code, 'conflict');
  assert.match(rb.json.error.message, /would have none \(services: .*productpage\.default\.svc\.cluster\.local/);
  const forced = await api.post('rollback', { version: 1, reason: 'undo anyway', force: true });
  assert.equal(forced.status, 200, JSON.stringify(forced.json));
  assert.equal(forced.json.pin.version, 3);

  const older = await api.post('pin', { version: 2, reason: 'x' });
  assert.equal(older.status, 409, JSON.stringify(older.json));
  assert.match(older.json.error.message, /rollback 2/);
  assert.equal(
    (await api.post('pin', { version: 3, reason: 'same' })).status,
    200,
    'pinning the pinned version again is fine',
  );

  assert.equal((await api.post('tags', { version: 1, name: 'good' })).status, 201);
  const retag = await api.post('tags', { version: 3, name: 'good' });
  assert.equal(retag.status, 409, JSON.stringify(retag.json));
  assert.match(retag.json.error.message, /already names version 1/);
  assert.equal((await api.post('tags', { version: 3, name: 'good', force: true })).status, 201);
});

test('compile on a pinned channel: the pinned config with every endpoint gone is a 409 publish_guard naming the pin; allowShrink serves it', async () => {
  const api = apiOn('pinned-guard');
  assert.equal((await api.post('compile', { files: [STATE, DR, V3] })).status, 201);
  assert.equal((await api.post('pin', { reason: 'freeze' })).status, 200);

  const refused = await api.post('compile', { files: [SERVICES_ONLY, DR, V50], reason: 'pods gone' });
  assert.equal(refused.status, 409, JSON.stringify(refused.json));
  assert.equal(refused.json.error.code, 'publish_guard');
  assert.match(refused.json.error.message, /pinned to version 1 and keeps serving version 1.*serves 0 endpoints/);
  assert.deepEqual(
    (await api.get('/snapshots')).json.snapshots.map((s: Json) => s.version),
    [1],
    'the served channel did not move',
  );

  const forced = await api.post('compile', {
    files: [SERVICES_ONLY, DR, V50],
    allowShrink: true,
    reason: 'on purpose',
  });
  assert.notEqual(forced.status, 409, JSON.stringify(forced.json));
  assert.deepEqual([forced.json.status, forced.json.version], ['candidate', 2]);
});
