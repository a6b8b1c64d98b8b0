/** POST /compile (functions/shared/compile-route.ts): its token, its body limit (declared or streamed) and bad JSON, in the API's error shape. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Hono } from 'hono';
import { mountCompileRoute } from '../../functions/shared/compile-route.js';

const app = new Hono();
mountCompileRoute(app, { token: 'compile-token', maxBodyBytes: 1024 });
const auth = { authorization: 'Bearer compile-token', 'content-type': 'application/json' };

async function code(res: Response): Promise<[number, string]> {
  return [res.status, ((await res.json()) as { error: { code: string } }).error.code];
}

/** A body that arrives in chunks with no declared length, as a chunked request does. */
const streamed = (chunks: number, size: number): ReadableStream<Uint8Array> => {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent++ >= chunks) return controller.close();
      controller.enqueue(new Uint8Array(size).fill(0x20));
    },
  });
};

test('POST /compile: 401 without the token, 413 over the limit (declared or streamed), 400 for bad JSON', async () => {
  assert.deepEqual(await code(await app.request('/compile', { method: 'POST', body: '{}' })), [401, 'unauthorized']);
  assert.deepEqual(
    await code(await app.request('/compile', { method: 'POST', headers: auth, body: ' '.repeat(2048) })),
    [413, 'payload_too_large'],
  );
  const chunked = new Request('http://x/compile', {
    method: 'POST',
    headers: auth,
    body: streamed(1000, 512),
    duplex: 'half',
  } as RequestInit);
  assert.deepEqual(await code(await app.request(chunked)), [413, 'payload_too_large']);
  assert.deepEqual(
    await code(await app.request('/compile', { method: 'POST', headers: auth, body: '{"objects": [' })),
    [400, 'bad_request'],
  );
});
