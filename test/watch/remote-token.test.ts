/** `--compile-url` with $MESHSNAP_COMPILE_TOKEN: the watcher's client sends it as a bearer token. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RemoteCompiler } from '../../src/watch/remote-compile.js';

function capturing(): { fetch: typeof fetch; headers: Record<string, string>[] } {
  const headers: Record<string, string>[] = [];
  const fake = (async (_url: string | URL | Request, init?: RequestInit) => {
    headers.push({ ...(init?.headers as Record<string, string>) });
    return new Response(JSON.stringify({ error: { code: 'unauthorized', message: 'no' } }), {
      status: 401,
      headers: { 'content-type': 'application/json' },
    });
  }) as typeof fetch;
  return { fetch: fake, headers };
}

test('a configured token goes out as Authorization: Bearer; none when unset', async () => {
  const withToken = capturing();
  await assert.rejects(
    new RemoteCompiler('http://compile.test/compile', { fetch: withToken.fetch, token: 's3cret' }).compile({
      objects: [],
      changed: new Set(),
    }),
  );
  assert.equal(withToken.headers[0]?.authorization, 'Bearer s3cret');

  const without = capturing();
  await assert.rejects(
    new RemoteCompiler('http://compile.test/compile', { fetch: without.fetch }).compile({
      objects: [],
      changed: new Set(),
    }),
  );
  assert.equal(without.headers[0]?.authorization, undefined);
});
