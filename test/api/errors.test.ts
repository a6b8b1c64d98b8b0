/**
 * Every documented error case of the HTTP API (README "HTTP API", src/api/openapi.ts): each answers
 * `{"error":{"code","message"}}` with the status of its code (src/errors.ts) — a malformed selector
 * is 400, a well-formed one naming nothing 404, an unknown channel 404 on every channel route, bad
 * bodies 400, tokens 401/403, bodies over the limit 413 (a chunked one refused as it arrives), store
 * faults 500/503 without a server path or stack in the body.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { actorHeaderIdentity } from '../../src/api/auth.js';
import { historyBinding } from '../../src/api/history-binding.js';
import { startApiServer } from '../../src/api/node-server.js';
import { ERROR_STATUS, MeshsnapError } from '../../src/errors.js';
import { HistoryError } from '../../src/history/errors.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { RetriesExhaustedError } from '../../src/snapshot/store/retry.js';
import { CorruptObjectError, type SnapshotStore } from '../../src/snapshot/store/store.js';
import { BOOKINFO_STATE } from '../helpers/paths.js';

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-api-errors-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const WRITE = 'write-token';
const READ = 'read-token';
const store = new LocalStore(join(tmp, 'store'));
const compile = { hasher: nodeSha256Hex };
const app = createApp({ store, auth: { writeToken: WRITE }, compile, maxBodyBytes: 64 * 1024 });
const STATE = { file: 'state.yaml', text: readFileSync(BOOKINFO_STATE, 'utf8') };

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
interface Reply {
  readonly status: number;
  readonly json: Json;
  readonly headers: Headers;
}

async function call(
  method: string,
  path: string,
  opts: { body?: string; headers?: Record<string, string>; app?: typeof app } = {},
): Promise<Reply> {
  const res = await (opts.app ?? app).request(path, {
    method,
    headers: { 'content-type': 'application/json', ...(opts.headers ?? {}) },
    ...(opts.body !== undefined ? { body: opts.body } : {}),
  });
  const text = await res.text();
  assert.match(res.headers.get('content-type') ?? '', /application\/json/, `${method} ${path}: ${text}`);
  return { status: res.status, json: JSON.parse(text) as Json, headers: res.headers };
}
const writeAuth = { authorization: `Bearer ${WRITE}` };
const get = (path: string, a = app) => call('GET', path, { app: a });
const post = (path: string, body: unknown, headers: Record<string, string> = writeAuth, a = app) =>
  call('POST', path, { body: typeof body === 'string' ? body : JSON.stringify(body), headers, app: a });

/** Asserts the error shape, the code and the status that belongs to it. */
function isError(r: Reply, code: keyof typeof ERROR_STATUS, what: string): void {
  assert.equal(r.json.error?.code, code, `${what}: ${JSON.stringify(r.json)}`);
  assert.equal(r.status, ERROR_STATUS[code], what);
  assert.equal(typeof r.json.error.message, 'string', what);
}

before(async () => {
  const first = await post('/api/v1/channels/main/compile', { files: [STATE], reason: 'setup' });
  assert.equal(first.status, 201, JSON.stringify(first.json));
  const tag = await post('/api/v1/channels/main/tags', { version: 1, name: 'release-1' });
  assert.equal(tag.status, 201, JSON.stringify(tag.json));
});

test('selectors: malformed is 400 bad_request, well-formed naming nothing is 404 not_found', async () => {
  // The grammar (src/history/select.ts): latest | N | candidate:N | candidate:latest | tag:NAME | NAME,
  // NAME not all digits — so `tag:123` is malformed (a tag is never a number), not an unknown tag.
  for (const bad of ['tag:123', 'a:b', 'tag:', 'candidate:0', 'candidate:x', '0', '007', '-1', 'tag:-x']) {
    isError(
      await get(`/api/v1/channels/main/snapshots/${encodeURIComponent(bad)}`),
      'bad_request',
      `GET snapshot ${bad}`,
    );
    isError(
      await get(`/api/v1/channels/main/diff?from=1&to=${encodeURIComponent(bad)}`),
      'bad_request',
      `diff to ${bad}`,
    );
  }
  isError(
    await post('/api/v1/channels/main/rollback', { version: 'tag:123', reason: 'r' }),
    'bad_request',
    'rollback tag:123',
  );
  isError(await post('/api/v1/channels/main/tags', { version: 'a:b', name: 'x' }), 'bad_request', 'tag a:b');
  for (const missing of ['tag:nope', 'nope', '99', 'candidate:5', 'candidate:latest']) {
    isError(
      await get(`/api/v1/channels/main/snapshots/${encodeURIComponent(missing)}`),
      'not_found',
      `GET snapshot ${missing}`,
    );
    isError(
      await get(`/api/v1/channels/main/diff?from=1&to=${encodeURIComponent(missing)}`),
      'not_found',
      `diff to ${missing}`,
    );
  }
  for (const ok of ['1', 'latest', 'tag:release-1', 'release-1'])
    assert.equal((await get(`/api/v1/channels/main/snapshots/${ok}`)).status, 200, ok);
  isError(await post('/api/v1/channels/main/rollback', { version: 42, reason: 'r' }), 'not_found', 'rollback 42');
});

test('an unknown channel is 404 not_found on every channel route; a malformed name 400', async () => {
  const ch = '/api/v1/channels/nosuch';
  for (const path of [
    `${ch}/snapshots`,
    `${ch}/snapshots/latest`,
    `${ch}/snapshots/1`,
    `${ch}/snapshots/1/diagnostics`,
    `${ch}/snapshots/1/inputs`,
    `${ch}/snapshots/1/config?node=n`,
    `${ch}/diff?from=1&to=1`,
  ]) {
    isError(await get(path), 'not_found', `GET ${path}`);
  }
  for (const [action, body] of [
    ['rollback', { version: 1, reason: 'r' }],
    ['pin', { reason: 'r' }],
    ['unpin', {}],
    ['promote', { version: 'candidate:1', reason: 'r' }],
    ['tags', { version: 1, name: 'x' }],
  ] as const) {
    isError(await post(`${ch}/${action}`, body), 'not_found', `POST ${action}`);
  }
  // The default channel is known before its first version; compile creates a channel.
  const fresh = createApp({
    store: new LocalStore(join(tmp, 'empty')),
    auth: { writeToken: WRITE },
    channelDefault: 'main',
    channels: ['staging'],
  });
  assert.deepEqual((await get('/api/v1/channels/main/snapshots', fresh)).json.snapshots, []);
  assert.deepEqual((await get('/api/v1/channels/staging/snapshots', fresh)).json.snapshots, []);
  isError(await get('/api/v1/channels/main/snapshots/latest', fresh), 'not_found', 'latest of an empty channel');
  isError(await get('/api/v1/channels/other/snapshots', fresh), 'not_found', 'unknown channel of a fresh store');

  for (const bad of ['-x', 'a..b', 'x%20y'])
    isError(await get(`/api/v1/channels/${bad}/snapshots`), 'bad_request', `channel ${bad}`);
  isError(await get('/api/v1/audit?channel=a..b'), 'bad_request', 'audit channel');
});

test('unknown routes are 404; bad parameters 400', async () => {
  isError(await get('/api/v1/nothing'), 'not_found', 'unknown route');
  isError(await call('DELETE', '/api/v1/channels/main/snapshots/1'), 'not_found', 'unknown method');
  isError(await get('/api/v1/channels/main/snapshots?limit=0'), 'bad_request', 'limit');
  isError(await get('/api/v1/channels/main/snapshots?cursor=abc'), 'bad_request', 'cursor');
  isError(await get('/api/v1/channels/main/snapshots/1/config'), 'bad_request', 'config without node');
  isError(await get('/api/v1/channels/main/snapshots/1/config?node=n&type=nope'), 'bad_request', 'config type');
  isError(await get('/api/v1/channels/main/snapshots/1/config?node=n&metadata=%7B'), 'bad_request', 'config metadata');
  isError(await get('/api/v1/channels/main/diff?from=1'), 'bad_request', 'diff without to');
  isError(await get('/api/v1/audit?since=yesterday'), 'bad_request', 'audit since');
});

test('bad bodies are 400: not JSON, not an object, wrong field types, unknown gc fields, missing reason; nothing parsed is invalid_inputs', async () => {
  isError(await post('/api/v1/channels/main/compile', '{"files": ['), 'bad_request', 'malformed JSON');
  isError(await post('/api/v1/channels/main/compile', '[1]'), 'bad_request', 'array body');
  isError(await post('/api/v1/channels/main/compile', { files: 'x' }), 'bad_request', 'files not an array');
  isError(
    await post('/api/v1/channels/main/compile', { files: [STATE], strict: 'yes' }),
    'bad_request',
    'strict not boolean',
  );
  isError(await post('/api/v1/channels/main/pin', {}), 'bad_request', 'pin without reason');
  isError(await post('/api/v1/gc', { keep: 1, kep: 2 }), 'bad_request', 'unknown gc field');
  isError(await post('/api/v1/channels/main/tags', { version: 1, name: '123' }), 'bad_request', 'numeric tag name');
  const none = await post('/api/v1/channels/main/compile', {
    files: [{ file: 'x.yaml', text: 'kind: [unclosed\n  - : :' }],
  });
  isError(none, 'invalid_inputs', 'nothing parsed');
  assert.ok(
    Array.isArray(none.json.error.diagnostics) && none.json.error.diagnostics.length > 0,
    'invalid_inputs carries the diagnostics',
  );
});

test('tokens: none or wrong is 401 with a Bearer challenge; a read token on a write is 403; closed reads need one', async () => {
  const none = await post('/api/v1/channels/main/pin', { reason: 'r' }, {});
  isError(none, 'unauthorized', 'no token');
  assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer /);
  isError(
    await post('/api/v1/channels/main/pin', { reason: 'r' }, { authorization: 'Bearer wrong' }),
    'unauthorized',
    'wrong token',
  );
  isError(
    await post('/api/v1/channels/main/pin', { reason: 'r' }, { authorization: 'Basic dzp3' }),
    'unauthorized',
    'not a bearer token',
  );
  const closed = createApp({ store, auth: { writeToken: WRITE, readToken: READ } });
  isError(await get('/api/v1/channels', closed), 'unauthorized', 'closed read without a token');
  assert.equal(
    (await call('GET', '/api/v1/channels', { app: closed, headers: { authorization: `Bearer ${READ}` } })).status,
    200,
  );
  isError(
    await post('/api/v1/channels/main/pin', { reason: 'r' }, { authorization: `Bearer ${READ}` }, closed),
    'forbidden',
    'read token on a write',
  );
  isError(
    await post(
      '/api/v1/channels/main/pin',
      { reason: 'r' },
      { ...writeAuth, 'X-Meshsnap-Actor': 'a\tb' },
      createApp({ store, auth: { writeToken: WRITE }, identity: actorHeaderIdentity }),
    ),
    'bad_request',
    'bad actor header',
  );
});

test('a body over the limit is 413 payload_too_large (declared length), before the handler reads it', async () => {
  const big = JSON.stringify({ files: [{ file: 'big.yaml', text: 'x'.repeat(100 * 1024) }] });
  const r = await post('/api/v1/channels/main/compile', big);
  isError(r, 'payload_too_large', 'declared length over the limit');
  // The token is checked first: an unauthenticated body is never read.
  isError(await post('/api/v1/channels/main/compile', big, {}), 'unauthorized', 'no token, big body');
  assert.equal(
    (await post('/api/v1/channels/main/compile', { files: [STATE], dryRun: true })).status,
    200,
    'a body under the limit passes',
  );
});

test(
  'a chunked body over the limit is refused with 413 as it arrives, over the real node server',
  { timeout: 60_000 },
  async () => {
    const server = await startApiServer(app, { host: '127.0.0.1', port: 0 });
    try {
      // The client never ends its body: only a server that counts chunks as they arrive can answer.
      const cap = 256 * 1024 * 1024;
      const { status, body, sent } = await new Promise<{ status: number; body: string; sent: number }>(
        (resolve, reject) => {
          let sent = 0;
          let answered = false;
          const req = httpRequest(
            {
              host: '127.0.0.1',
              port: server.port,
              method: 'POST',
              path: '/api/v1/channels/main/compile',
              headers: { ...writeAuth, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
            },
            (res) => {
              answered = true;
              let text = '';
              res.setEncoding('utf8');
              res.on('data', (d: string) => (text += d));
              res.on('end', () => {
                resolve({ status: res.statusCode ?? 0, body: text, sent });
                req.destroy();
              });
            },
          );
          req.on('error', (e) => (answered ? undefined : reject(e)));
          const chunk = Buffer.alloc(16 * 1024, 0x20);
          const pump = (): void => {
            while (!answered && sent < cap) {
              sent += chunk.length;
              if (!req.write(chunk)) return void req.once('drain', pump);
            }
            if (!answered) reject(new Error(`no answer after ${sent} bytes: the body was buffered, not counted`));
          };
          req.write('{"files":[{"file":"a.yaml","text":"');
          pump();
        },
      );
      assert.equal(status, 413, body);
      assert.equal((JSON.parse(body) as Json).error.code, 'payload_too_large');
      assert.ok(sent < cap, `answered after ${sent} bytes`);
    } finally {
      await server.close();
    }
  },
);

/** A store whose reads fail as a broken disk or bucket would. */
function failingStore(err: () => unknown): SnapshotStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'getVersion' || prop === 'listVersions') return () => Promise.reject(err());
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

test('store faults are 500 internal / 503 unavailable, with no server path or stack in the body', async () => {
  const logged: unknown[] = [];
  const appOver = (err: () => unknown) =>
    createApp({ store: failingStore(err), auth: { writeToken: WRITE }, onInternalError: (e) => logged.push(e) });
  const corrupt = await get(
    '/api/v1/channels/main/snapshots/1',
    appOver(() => new CorruptObjectError('sha256:aa', 'sha256:bb', '/srv/meshsnap/store/objects/aa/aa')),
  );
  isError(corrupt, 'internal', 'corrupt object');
  assert.match(corrupt.json.error.message, /corrupt object sha256:aa/);
  const foreign = await get(
    '/api/v1/channels/main/snapshots/1',
    appOver(() =>
      Object.assign(new Error("ENOENT: no such file or directory, open '/srv/meshsnap/store/versions/main/1.json'"), {
        code: 'ENOENT',
      }),
    ),
  );
  isError(foreign, 'internal', 'a foreign error');
  const exhausted = await get(
    '/api/v1/channels/main/snapshots',
    appOver(() => new RetriesExhaustedError(5, new Error('connect ECONNREFUSED s3://bucket/prefix/versions'))),
  );
  isError(exhausted, 'unavailable', 'retries exhausted');
  for (const r of [corrupt, foreign, exhausted]) {
    const text = JSON.stringify(r.json);
    assert.doesNotMatch(text, /\/srv\/|s3:\/\/|\n\s+at /, text);
  }
  assert.equal(logged.length, 3, 'every 5xx reaches onInternalError (the server log) with its details');
});

test('mapping is by code, never by class: history conflicts are 409, a foreign error carrying a code maps too', async () => {
  const history = historyBinding(nodeSha256Hex);
  const conflicted = createApp({
    store,
    auth: { writeToken: WRITE },
    history: { ...history, pin: () => Promise.reject(new HistoryError('already pinned by someone else')) },
  });
  isError(
    await post('/api/v1/channels/main/pin', { reason: 'r' }, writeAuth, conflicted),
    'conflict',
    'history conflict',
  );
  // A second copy of src/errors.ts in a bundle makes another class: only the code counts.
  const foreign = Object.assign(new Error('gone'), { code: 'not_found' });
  const other = createApp({
    store,
    auth: { writeToken: WRITE },
    history: { ...history, pin: () => Promise.reject(foreign) },
  });
  isError(
    await post('/api/v1/channels/main/pin', { reason: 'r' }, writeAuth, other),
    'not_found',
    'a foreign error with a code',
  );
  assert.equal(new MeshsnapError('payload_too_large', 'x').status, 413);
});
