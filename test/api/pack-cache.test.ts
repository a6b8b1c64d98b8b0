/**
 * The API publishes with its own pack cache: a publish merges its delta into the packs the API
 * wrote before without reading them back from the store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { packDigests } from '../../src/snapshot/store/pack-policy.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const file = (p: string) => ({ file: p.split('/').pop() as string, text: readFileSync(p, 'utf8') });
const STATE = file(BOOKINFO_STATE);
const DR = file(join(NET, 'destination-rule-all.yaml'));
const ROUTES = [
  'virtual-service-reviews-v3.yaml',
  'virtual-service-reviews-50-v3.yaml',
  'virtual-service-reviews-80-20.yaml',
  'virtual-service-reviews-90-10.yaml',
].map((f) => file(join(NET, f)));

/** A folder store that remembers which objects were read. */
class ReadRecordingStore extends LocalStore {
  readonly reads = new Set<string>();
  override async getObject(digest: string): Promise<Uint8Array | null> {
    this.reads.add(digest);
    return super.getObject(digest);
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-api-packs-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('API publishes merge delta packs without reading the packs they wrote back from the store', async () => {
  const WRITE = 'write-token-1';
  const store = new ReadRecordingStore(join(tmp, 'store'));
  const app = createApp({ store, auth: { writeToken: WRITE }, compile: { hasher: nodeSha256Hex } });
  const written = new Set<string>();
  for (const [i, route] of ROUTES.entries()) {
    const res = await app.request('/api/v1/channels/main/compile', {
      method: 'POST',
      headers: { authorization: `Bearer ${WRITE}`, 'content-type': 'application/json' },
      body: JSON.stringify({ files: [STATE, DR, route], allowShrink: true }),
    });
    assert.equal(res.status, 201, await res.text());
    const record = await store.getVersion('main', i + 1);
    assert.ok(record?.packs, `version ${i + 1} has packs`);
    for (const digest of packDigests(record)) written.add(digest);
  }
  assert.deepEqual(
    [...written].filter((d) => store.reads.has(d)),
    [],
    'no pack was read back from the store',
  );
});
