/**
 * /debug/* (node ids, identities) answers loopback clients, or remote ones presenting the debug
 * token; probes and metrics stay open to everyone.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { test } from 'node:test';
import { relayHttpApp, type HttpSources } from '../../../src/relay/http.js';

const sources: HttpSources = {
  readiness: () => ({ ready: true }),
  proxies: () => ({ proxies: [] }),
  snapshot: () => ({}),
  metrics: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
  notify: () => true,
};
const from = (remoteAddress: string): { incoming: IncomingMessage } => ({
  incoming: { socket: { remoteAddress } } as unknown as IncomingMessage,
});

test('/debug/*: loopback yes, remote only with the token; /readyz and /metrics open', async () => {
  const app = relayHttpApp(sources, undefined, 's3cret');
  const status = async (path: string, peer: string, auth?: string): Promise<number> =>
    (await app.request(path, auth ? { headers: { authorization: auth } } : {}, from(peer))).status;
  assert.equal(await status('/debug/proxies', '127.0.0.1'), 200);
  assert.equal(await status('/debug/snapshot', '::1'), 200);
  assert.equal(await status('/debug/proxies', '::ffff:127.0.0.1'), 200);
  assert.equal(await status('/debug/proxies', '10.1.2.3'), 403);
  assert.equal(await status('/debug/proxies', '10.1.2.3', 'Bearer wrong!'), 403);
  assert.equal(await status('/debug/proxies', '10.1.2.3', 'Bearer s3cret'), 200);
  assert.equal(await status('/readyz', '10.1.2.3'), 200);
  assert.equal(await status('/metrics', '10.1.2.3'), 200);
  const closed = relayHttpApp(sources);
  const res = await closed.request('/debug/proxies', {}, from('10.1.2.3'));
  assert.equal(res.status, 403);
  assert.match(((await res.json()) as { error: string }).error, /only on the relay host/);
});
