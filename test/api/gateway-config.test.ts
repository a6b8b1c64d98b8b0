/** The API serves a gateway (router) node's config and diff, placed by its labels like any proxy. */
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
const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-api-gw-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const WRITE = 'write-token-gw';
const app = createApp({
  store: new LocalStore(join(tmp, 'store')),
  auth: { writeToken: WRITE },
  compile: { hasher: nodeSha256Hex },
});
const ROUTER = {
  id: 'router~10.244.0.20~istio-ingressgateway-0.istio-system~istio-system.svc.cluster.local',
  metadata: { LABELS: { app: 'istio-ingressgateway', istio: 'ingressgateway' } },
};
const query = `node=${encodeURIComponent(ROUTER.id)}&metadata=${encodeURIComponent(JSON.stringify(ROUTER.metadata))}`;

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await app.request(path, {
    method,
    headers: { authorization: `Bearer ${WRITE}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

test('config and diff for the ingress gateway node', async () => {
  const files = [file(BOOKINFO_STATE), file(join(NET, 'bookinfo-gateway.yaml'))];
  assert.equal((await call('POST', '/api/v1/channels/main/compile', { files })).status, 201);
  const more = [...files, file(join(NET, 'destination-rule-all.yaml'))];
  assert.equal((await call('POST', '/api/v1/channels/main/compile', { files: more })).status, 201);

  const cfg = await call('GET', `/api/v1/channels/main/snapshots/1/config?${query}&type=listeners,routes`);
  assert.equal(cfg.status, 200, JSON.stringify(cfg.json));
  assert.equal(cfg.json.classId, 'router/istio-system/istio-ingressgateway/default/bookinfo-gateway');
  const text = JSON.stringify(cfg.json.config);
  assert.match(text, /"name":"0\.0\.0\.0_8080"/);
  assert.match(text, /"route_config_name":"http\.8080"/);
  assert.match(text, /outbound\|9080\|\|productpage\.default\.svc\.cluster\.local/);

  const diff = await call('GET', `/api/v1/channels/main/diff?from=1&to=2&type=clusters&${query}`);
  assert.equal(diff.status, 200, JSON.stringify(diff.json));
  assert.match(JSON.stringify(diff.json.diff), /outbound\|9080\|v1\|productpage\.default\.svc\.cluster\.local/);
});
