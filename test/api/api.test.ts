/**
 * The HTTP API in process (app.request) over a LocalStore in a temp dir: every route, auth, bad
 * input, pagination, and the history writes through the real history library.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { actorHeaderIdentity } from '../../src/api/auth.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { BOOKINFO_NODES } from '../helpers/mesh.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const file = (p: string) => ({ file: p.split('/').pop() as string, text: readFileSync(p, 'utf8') });
const STATE = file(BOOKINFO_STATE);
const DR = file(join(NET, 'destination-rule-all.yaml'));
const V3 = file(join(NET, 'virtual-service-reviews-v3.yaml'));
const V50 = file(join(NET, 'virtual-service-reviews-50-v3.yaml'));
const V8020 = file(join(NET, 'virtual-service-reviews-80-20.yaml'));
const BAD_WEIGHTS = {
  file: 'bad.yaml',
  text: `apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: bad-weights, namespace: default}
spec:
  hosts: [ratings]
  http:
  - route:
    - {destination: {host: ratings, subset: v1}, weight: 50}
    - {destination: {host: ratings, subset: v1}, weight: 40}
`,
};

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-api-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const WRITE = 'write-token-1';
let tick = 0;
const clock = () => new Date(Date.UTC(2030, 0, 1, 0, 0, tick++));
const store = new LocalStore(join(tmp, 'store'));
const app = createApp({ store, auth: { writeToken: WRITE }, clock, compile: { hasher: nodeSha256Hex } });

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  a = app,
): Promise<{ status: number; json: Json; res: Response }> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const res = await a.request(path, init);
  const text = await res.text();
  assert.match(res.headers.get('content-type') ?? '', /application\/json/, `${method} ${path}: ${text}`);
  return { status: res.status, json: JSON.parse(text) as Json, res };
}
const auth = { authorization: `Bearer ${WRITE}` };
const post = (path: string, body: unknown, headers: Record<string, string> = auth) => call('POST', path, body, headers);
const get = (path: string) => call('GET', path);
const errorCode = (r: { json: Json }) => r.json.error?.code as string;

test('compile: publish, unchanged, new version; dry run stores nothing', async () => {
  const first = await post('/api/v1/channels/main/compile', { files: [STATE, DR, V3], reason: 'first' });
  assert.equal(first.status, 201, JSON.stringify(first.json));
  assert.equal(first.json.status, 'published');
  assert.equal(first.json.version, 1);
  assert.match(first.json.digest, /^sha256:/);
  assert.equal(first.json.record.actor, 'api');
  assert.equal(first.json.record.reason, 'first');

  const same = await post('/api/v1/channels/main/compile', { files: [V3, DR, STATE] });
  assert.equal(same.status, 200);
  assert.equal(same.json.status, 'unchanged');
  assert.equal(same.json.digest, first.json.digest, 'file order does not change the digest');

  const dry = await post('/api/v1/channels/main/compile', { files: [STATE, DR, V50], dryRun: true });
  assert.equal(dry.json.status, 'dry-run');
  assert.equal((await get('/api/v1/channels/main/snapshots')).json.snapshots.length, 1);

  const second = await post('/api/v1/channels/main/compile', { files: [STATE, DR, V50] });
  assert.equal(second.json.version, 2);
});

test('bad inputs are 400 with a stable code, never 500', async () => {
  const malformed = await post('/api/v1/channels/main/compile', '{"files": [');
  assert.equal(malformed.status, 400);
  assert.equal(errorCode(malformed), 'bad_request');
  assert.equal(errorCode(await post('/api/v1/channels/main/compile', '[1]')), 'bad_request');
  assert.equal(errorCode(await post('/api/v1/channels/main/compile', {})), 'bad_request');
  assert.equal(errorCode(await post('/api/v1/channels/main/compile', { files: [{ file: 'x' }] })), 'bad_request');
  assert.equal(
    errorCode(await post('/api/v1/channels/main/compile', { files: [STATE], strict: 'yes' })),
    'bad_request',
  );

  const unparsable = await post('/api/v1/channels/main/compile', {
    files: [{ file: 'junk.yaml', text: 'kind: [unclosed\n  - : :' }],
  });
  assert.equal(unparsable.status, 400);
  assert.equal(errorCode(unparsable), 'invalid_inputs');
  assert.ok(unparsable.json.error.diagnostics.length > 0);
  assert.equal(unparsable.json.error.diagnostics[0].code, 'parse-error');

  const strict = await post('/api/v1/channels/main/compile', { files: [STATE, DR, BAD_WEIGHTS], strict: true });
  assert.equal(strict.status, 400);
  assert.equal(errorCode(strict), 'invalid_inputs');
  assert.ok(strict.json.error.diagnostics.some((d: Json) => d.code === 'invalid-field' && d.name === 'bad-weights'));

  const badChannel = await post('/api/v1/channels/bad!name/compile', { files: [STATE] });
  assert.equal(badChannel.status, 400);
  assert.equal(errorCode(await post('/api/v1/channels/main/tags', { version: 1, name: '123' })), 'bad_request');
  assert.equal(
    errorCode(await post('/api/v1/channels/main/rollback', { version: 1 })),
    'bad_request',
    'a rollback needs a reason',
  );
  assert.equal(
    errorCode(await post('/api/v1/channels/main/rollback', { version: { n: 1 }, reason: 'x' })),
    'bad_request',
  );

  assert.equal(errorCode(await get('/api/v1/channels/main/snapshots/99')), 'not_found');
  assert.equal((await get('/api/v1/channels/main/snapshots/99')).status, 404);
  assert.equal(errorCode(await get('/api/v1/channels/nochannel/snapshots/latest')), 'not_found');
  assert.equal(errorCode(await get('/api/v1/channels/main/snapshots/no-such-tag')), 'not_found');
  assert.equal(errorCode(await get('/api/v1/channels/main/snapshots/1/config')), 'bad_request', 'node is required');
  assert.equal(errorCode(await get('/api/v1/channels/main/snapshots/1/config?node=x&type=secrets')), 'bad_request');
  assert.equal(errorCode(await get('/api/v1/channels/main/snapshots/1/config?node=x&metadata=%7Bnope')), 'bad_request');
  assert.equal(errorCode(await get('/api/v1/channels/main/diff?from=1')), 'bad_request');
  assert.equal(errorCode(await get('/api/v1/channels/main/snapshots?limit=0')), 'bad_request');
  assert.equal(errorCode(await get('/api/v1/channels/main/snapshots?cursor=abc')), 'bad_request');
  assert.equal(errorCode(await get('/api/v1/audit?since=yesterday')), 'bad_request');
  assert.equal(errorCode(await get('/api/v1/proxies?channel=..')), 'bad_request');
  const unknown = await get('/api/v1/nothing');
  assert.equal(unknown.status, 404);
  assert.equal(errorCode(unknown), 'not_found');
});

test('auth: writes need the write token; wrong and missing tokens get 401', async () => {
  const none = await post('/api/v1/channels/main/pin', { reason: 'x' }, {});
  assert.equal(none.status, 401);
  assert.equal(errorCode(none), 'unauthorized');
  assert.match(none.res.headers.get('www-authenticate') ?? '', /Bearer/);
  const wrong = await post('/api/v1/channels/main/pin', { reason: 'x' }, { authorization: 'Bearer write-token-2' });
  assert.equal(wrong.status, 401);
  for (const path of ['compile', 'rollback', 'pin', 'unpin', 'promote', 'tags']) {
    assert.equal((await post(`/api/v1/channels/main/${path}`, {}, {})).status, 401, path);
  }
});

test('reads: channels, pages of snapshots newest first, one snapshot, diagnostics, inputs, config', async () => {
  const ch = await get('/api/v1/channels');
  assert.equal(ch.status, 200);
  assert.deepEqual(
    ch.json.channels.map((c: Json) => [c.name, c.current]),
    [['main', 2]],
  );

  const p1 = await get('/api/v1/channels/main/snapshots?limit=1');
  assert.deepEqual(
    p1.json.snapshots.map((s: Json) => s.version),
    [2],
  );
  assert.equal(p1.json.snapshots[0].status.current, true);
  assert.equal(p1.json.nextCursor, '2');
  const p2 = await get(`/api/v1/channels/main/snapshots?limit=1&cursor=${p1.json.nextCursor}`);
  assert.deepEqual(
    p2.json.snapshots.map((s: Json) => [s.version, s.status.current]),
    [[1, false]],
  );
  assert.equal(p2.json.nextCursor, null);

  const one = await get('/api/v1/channels/main/snapshots/latest');
  assert.equal(one.json.version, 2);
  assert.ok(one.json.counts.clusters > 0);
  assert.equal(one.json.diagnostics, undefined, 'the list of diagnostics has its own route');

  const diags = await get('/api/v1/channels/main/snapshots/1/diagnostics');
  assert.equal(diags.json.version, 1);
  assert.ok(Array.isArray(diags.json.diagnostics));
  assert.equal(diags.json.counts.error, 0);

  const inputs = await get('/api/v1/channels/main/snapshots/2/inputs');
  assert.match(inputs.json.inputs, /^sha256:/);
  const vs = inputs.json.objects['VirtualService//reviews'];
  assert.equal(vs.layer, 'config');
  assert.equal(vs.object.spec.http[0].route.length, 2);

  const node = BOOKINFO_NODES.productpage;
  const cfg = await get(
    `/api/v1/channels/main/snapshots/2/config?node=${encodeURIComponent(node.id)}&metadata=${encodeURIComponent(JSON.stringify(node.metadata))}&type=routes`,
  );
  assert.equal(cfg.status, 200, JSON.stringify(cfg.json));
  assert.match(cfg.json.classId, /^sidecar\/default\//);
  const text = JSON.stringify(cfg.json.config);
  assert.match(text, /RoutesConfigDump/);
  assert.doesNotMatch(text, /ClustersConfigDump/);
  assert.match(text, /"weight":50/);
});

test('diff between two versions shows the weight change', async () => {
  const d = await get('/api/v1/channels/main/diff?from=1&to=latest&type=routes');
  assert.equal(d.status, 200, JSON.stringify(d.json));
  assert.equal(d.json.from, 1);
  assert.equal(d.json.to, 2);
  assert.ok(d.json.diff.classes.length > 0);
  assert.match(JSON.stringify(d.json.diff), /weight/);
  assert.ok(d.json.diff.inputs.some((c: Json) => JSON.stringify(c).includes('VirtualService')));
});

test('writes: tag, pin (compiles become candidates), promote, unpin, rollback — all audit-logged with the caller', async () => {
  const tag = await post('/api/v1/channels/main/tags', { version: 1, name: 'good' });
  assert.equal(tag.status, 201, JSON.stringify(tag.json));
  assert.equal((await get('/api/v1/channels/main/snapshots/good')).json.version, 1);
  assert.equal((await get('/api/v1/channels/main/snapshots/tag:good')).json.version, 1);
  assert.deepEqual((await get('/api/v1/channels/main/snapshots/1')).json.status.tags, ['good']);

  const pin = await post('/api/v1/channels/main/pin', { reason: 'freeze for release' });
  assert.equal(pin.status, 200, JSON.stringify(pin.json));
  assert.equal(pin.json.pin.version, 2);
  assert.equal(pin.json.pin.actor, 'api');

  const cand = await post('/api/v1/channels/main/compile', { files: [STATE, DR, V8020], reason: 'try 80/20' });
  assert.equal(cand.json.status, 'candidate', JSON.stringify(cand.json));
  assert.equal(cand.json.candidate, 1);
  const candRecord = (await get('/api/v1/channels/main/snapshots/candidate:1')).json;
  assert.deepEqual(
    [candRecord.actor, candRecord.reason],
    ['api', 'try 80/20'],
    'a candidate records who compiled it and why',
  );
  const list = await get('/api/v1/channels/main/snapshots');
  assert.deepEqual(
    list.json.candidates.map((c: Json) => [c.label, c.status.candidate]),
    [['candidate:1', true]],
  );
  assert.equal((await get('/api/v1/channels')).json.channels[0].pinned.version, 2);

  const tagCandidate = await post('/api/v1/channels/main/tags', { version: 'candidate:1', name: 'nope' });
  assert.equal(tagCandidate.status, 409, JSON.stringify(tagCandidate.json));
  assert.equal(errorCode(tagCandidate), 'conflict');

  const promoted = await post('/api/v1/channels/main/promote', { version: 'candidate:1', reason: 'looks good' });
  assert.equal(promoted.status, 200, JSON.stringify(promoted.json));
  assert.equal(promoted.json.status, 'published');
  const v = promoted.json.version as number;
  assert.equal((await get(`/api/v1/channels/main/snapshots/${v}`)).json.origin.kind, 'promote');

  const unpin = await post('/api/v1/channels/main/unpin', {});
  assert.equal(unpin.json.unpinned.version, v);

  const rb = await post('/api/v1/channels/main/rollback', { version: 'good', reason: 'bad deploy' });
  assert.equal(rb.status, 200, JSON.stringify(rb.json));
  assert.equal(rb.json.version, v + 1);
  const rec = (await get('/api/v1/channels/main/snapshots/latest')).json;
  assert.deepEqual(rec.origin, { kind: 'rollback', from: 1 });
  assert.equal(rec.actor, 'api');
  assert.equal(
    rec.digest,
    (await get('/api/v1/channels/main/snapshots/1')).json.digest,
    'same config and endpoints as version 1',
  );
  assert.equal(rec.status.pinned, true);

  const audit = await get('/api/v1/audit?channel=main');
  const kinds = audit.json.entries.map((e: Json) => e.kind);
  for (const k of ['tag', 'pin', 'unpin', 'promote', 'rollback', 'publish', 'candidate'])
    assert.ok(kinds.includes(k), `${k} in ${kinds}`);
  assert.ok(audit.json.entries.filter((e: Json) => e.kind !== 'publish').every((e: Json) => e.actor === 'api'));
  assert.equal(audit.json.entries[0].kind, 'rollback', 'newest first');
  const all = await get('/api/v1/audit');
  assert.equal(all.json.entries.length, audit.json.entries.length);
  const recent = await get(`/api/v1/audit?since=${encodeURIComponent('2030-01-01T00:00:05Z')}`);
  assert.ok(recent.json.entries.length < audit.json.entries.length);
});

test('proxies: latest ACK per type and last NACK per node, from the relay records', async () => {
  const base = {
    relay: 'r1',
    channel: 'main',
    classId: 'sidecar/default/productpage',
    nodeId: 'sidecar~1~pp.default~default.svc.cluster.local',
    digest: 'sha256:' + '0'.repeat(64),
  };
  const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
  const RDS = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';
  await store.appendAudit([
    { ...base, at: '2030-01-02T00:00:00.000Z', kind: 'connect', typeUrl: '', version: '', snapshotVersion: 1 },
    { ...base, at: '2030-01-02T00:00:01.000Z', kind: 'ack', typeUrl: CDS, version: '1', snapshotVersion: 1 },
    { ...base, at: '2030-01-02T00:00:02.000Z', kind: 'ack', typeUrl: RDS, version: '1', snapshotVersion: 1 },
    { ...base, at: '2030-01-02T00:00:03.000Z', kind: 'ack', typeUrl: CDS, version: '2', snapshotVersion: 2 },
    {
      ...base,
      at: '2030-01-02T00:00:04.000Z',
      kind: 'nack',
      typeUrl: RDS,
      version: '2',
      snapshotVersion: 2,
      error: 'route: bad regex',
    },
    {
      ...base,
      nodeId: 'other',
      channel: 'staging',
      at: '2030-01-02T00:00:05.000Z',
      kind: 'ack',
      typeUrl: CDS,
      version: '7',
      snapshotVersion: 7,
    },
  ]);
  const r = await get('/api/v1/proxies?channel=main');
  assert.equal(r.json.proxies.length, 1);
  const p = r.json.proxies[0];
  assert.equal(p.nodeId, base.nodeId);
  assert.equal(p.acked[CDS].snapshotVersion, 2);
  assert.equal(p.acked[RDS].snapshotVersion, 1);
  assert.equal(p.ackedVersion, null, 'types disagree');
  assert.equal(p.lastNack.error, 'route: bad regex');
  assert.equal((await get('/api/v1/proxies')).json.proxies.length, 2);
  const byProxy = await get(`/api/v1/audit?channel=main&proxy=${encodeURIComponent(base.nodeId)}`);
  assert.ok(byProxy.json.entries.length >= 5);
  assert.ok(byProxy.json.entries.every((e: Json) => e.nodeId === base.nodeId));
});

test('closed reads: a read token or the write token; a read token cannot write', async () => {
  const closed = createApp({ store, auth: { writeToken: [{ name: 'deployer', token: 'w' }], readToken: 'r' }, clock });
  const g = (h: Record<string, string>) => call('GET', '/api/v1/channels/main/snapshots', undefined, h, closed);
  assert.equal((await g({})).status, 401);
  assert.equal((await g({ authorization: 'Bearer x' })).status, 401);
  assert.equal((await g({ authorization: 'Bearer r' })).status, 200);
  assert.equal((await g({ authorization: 'Bearer w' })).status, 200);
  const w = await call(
    'POST',
    '/api/v1/channels/main/tags',
    { version: 1, name: 'x' },
    { authorization: 'Bearer r' },
    closed,
  );
  assert.equal(w.status, 403);
  assert.equal(errorCode(w), 'forbidden');
  assert.equal(
    (await call('GET', '/api/openapi.json', undefined, {}, closed)).status,
    200,
    'the document stays readable',
  );
});

test('a trusted X-Meshsnap-Actor header names the person in the audit log', async () => {
  const proxied = createApp({
    store,
    auth: { writeToken: [{ name: 'sso-proxy', token: 'p' }] },
    clock,
    identity: actorHeaderIdentity,
  });
  const r = await call(
    'POST',
    '/api/v1/channels/main/tags',
    { version: 2, name: 'reviewed', reason: 'ok' },
    { authorization: 'Bearer p', 'X-Meshsnap-Actor': 'alice@example.com' },
    proxied,
  );
  assert.equal(r.status, 201, JSON.stringify(r.json));
  const audit = await get('/api/v1/audit?channel=main');
  const entry = audit.json.entries.find((e: Json) => e.kind === 'tag' && e.detail?.tag === 'reviewed');
  assert.equal(entry.actor, 'alice@example.com (via sso-proxy)');
  assert.equal(entry.reason, 'ok');
});
