/**
 * The fake kube-apiserver's status subresources (Gateway API kinds), as kube-apiserver's status
 * strategy answers them: PUT and merge PATCH change only `status` (a new resourceVersion, the same
 * generation, one MODIFIED event; nothing for an unchanged status), a stale resourceVersion is a
 * 409 Conflict, a missing object a 404, the CRDs' status defaults are filled in, other writes 405.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  DEFAULT_RESOURCES,
  GATEWAY_API_RESOURCES,
  startFakeApiServer,
  type FakeApiServer,
  type KubeObject,
} from '../helpers/fake-apiserver.js';

const PATH = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/web';
const route: KubeObject = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'web', namespace: 'default' },
  spec: { parentRefs: [{ name: 'gw' }] },
};
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- answers read back

async function send(s: FakeApiServer, method: string, path: string, body?: unknown, type = 'application/json') {
  const r = await fetch(s.url + path, {
    method,
    headers: { 'content-type': type },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(5000),
  });
  return { status: r.status, body: (await r.json()) as Json };
}

describe('fake API server: status subresources', () => {
  let s: FakeApiServer;
  before(async () => {
    s = await startFakeApiServer({ objects: [route], resources: [...DEFAULT_RESOURCES, ...GATEWAY_API_RESOURCES] });
  });
  after(() => s.close());

  it('PUT .../status: only the status changes, with the CRD defaults; the generation stays; a stale resourceVersion is 409', async () => {
    const current = (await send(s, 'GET', `${PATH}/status`)).body;
    assert.equal(current.metadata.name, 'web', 'GET of the subresource answers the object');
    const rv = current.metadata.resourceVersion as string;
    const status = { parents: [{ parentRef: { name: 'gw' }, controllerName: 'x.io/c', conditions: [] }] };
    const put = await send(s, 'PUT', `${PATH}/status`, { ...current, spec: { changed: true }, status });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body.spec, route.spec, 'the spec in a status write is ignored');
    assert.deepEqual(put.body.status.parents[0].parentRef, {
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      name: 'gw',
    });
    assert.equal(put.body.metadata.generation, current.metadata.generation);
    assert.notEqual(put.body.metadata.resourceVersion, rv);

    const stale = await send(s, 'PUT', `${PATH}/status`, { ...current, status: { parents: [] } });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
    assert.match(stale.body.message, /the object has been modified/);

    const before = s.resourceVersion();
    const same = await send(s, 'PUT', `${PATH}/status`, { ...put.body, status: put.body.status });
    assert.equal(same.status, 200);
    assert.equal(s.resourceVersion(), before, 'an unchanged status writes nothing');
  });

  it('merge PATCH .../status (with a resourceVersion precondition); other patch types 415; a missing object 404; writes elsewhere 405', async () => {
    const current = (await send(s, 'GET', PATH)).body;
    const patch = { metadata: { resourceVersion: current.metadata.resourceVersion }, status: { parents: [] } };
    const ok = await send(s, 'PATCH', `${PATH}/status`, patch, 'application/merge-patch+json');
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body.status, { parents: [] });
    assert.equal((await send(s, 'PATCH', `${PATH}/status`, patch, 'application/merge-patch+json')).status, 409);
    assert.equal((await send(s, 'PATCH', `${PATH}/status`, {}, 'application/strategic-merge-patch+json')).status, 415);
    const missing = PATH.replace(/web$/, 'nope');
    assert.equal((await send(s, 'PUT', `${missing}/status`, { ...current, metadata: { name: 'nope' } })).status, 404);
    assert.equal((await send(s, 'PUT', PATH, current)).status, 405);
    assert.equal(
      (await send(s, 'PUT', '/api/v1/namespaces/default/services/x/status', { metadata: { name: 'x' } })).status,
      404,
      'no status subresource served for other kinds here',
    );
  });
});
