/**
 * UI test fixture: the API app (with the page mounted) over a temp LocalStore, seeded through the
 * API's own compile route with three bookinfo versions (base, reviews-v3, reviews-50-v3) and a few
 * relay ACK/NACK records, served on 127.0.0.1, port 0.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { createApp } from '../../src/api/app.js';
import { startApiServer } from '../../src/api/node-server.js';
import { mountUi } from '../../src/api/ui/mount.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';
import { BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

export const TOKEN = 'ui-test-token';
const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
/** The GitOps revisions versions 2 and 3 are compiled from (rev: selectors on the page). */
export const REVISIONS = {
  2: 'c0ffee5a17e2d94b0e1f3a6c8b7d9e0f1a2b3c4d',
  3: 'deadbeef4c1a7e9b2d3f5a6c7b8e9d0f1a2b3c4d',
} as const;

const SETS: { reason: string; files: string[]; revision?: string }[] = [
  { reason: 'bookinfo with subsets', files: [BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml')] },
  {
    reason: 'send all reviews traffic to v3',
    files: [BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml'), join(NET, 'virtual-service-reviews-v3.yaml')],
    revision: REVISIONS[2],
  },
  {
    reason: 'canary: 50% of reviews to v3',
    files: [BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml'), join(NET, 'virtual-service-reviews-50-v3.yaml')],
    revision: REVISIONS[3],
  },
];

const textOf = (f: string) => ({ file: f.slice(f.lastIndexOf('/') + 1), text: readFileSync(f, 'utf8') });

/** A fourth input set (reviews 80/20) for a compile made during the tests. */
export const reviews8020 = () =>
  [BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml'), join(NET, 'virtual-service-reviews-80-20.yaml')].map(textOf);

export const PRODUCTPAGE = 'sidecar~10.244.0.11~productpage-v1-1.default~default.svc.cluster.local';
const CDS = 'type.googleapis.com/envoy.config.cluster.v3.Cluster';
const RDS = 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration';

export interface UiServer {
  readonly url: string;
  readonly app: Hono;
  readonly store: LocalStore;
  close(): Promise<void>;
}

export async function startUiServer(): Promise<UiServer> {
  const dir = mkdtempSync(join(tmpdir(), 'meshsnap-ui-'));
  const store = new LocalStore(dir);
  // A clock that moves a minute per call, so the timeline's times differ and sort as published.
  let t = Date.parse('2026-05-04T09:00:00Z');
  const clock = () => new Date((t += 60_000));
  const app = createApp({
    store,
    auth: { writeToken: [{ name: 'ops', token: TOKEN }] },
    compile: { hasher: nodeSha256Hex },
    clock,
  }) as unknown as Hono;
  mountUi(app);
  for (const set of SETS) {
    const files = set.files.map(textOf);
    const res = await app.request('/api/v1/channels/main/compile', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ files, reason: set.reason, ...(set.revision ? { sourceRevision: set.revision } : {}) }),
    });
    if (res.status !== 201) throw new Error(`seed compile: ${res.status} ${await res.text()}`);
  }
  const at = (m: number) => new Date(Date.parse('2026-05-04T09:10:00Z') + m * 60_000).toISOString();
  const base = { relay: 'relay-a', channel: 'main', classId: 'sidecar/default/productpage' };
  await store.appendAudit([
    { ...base, at: at(0), kind: 'connect', nodeId: PRODUCTPAGE, typeUrl: '', version: '', snapshotVersion: 3 },
    { ...base, at: at(1), kind: 'ack', nodeId: PRODUCTPAGE, typeUrl: CDS, version: '3', snapshotVersion: 3 },
    { ...base, at: at(1), kind: 'ack', nodeId: PRODUCTPAGE, typeUrl: RDS, version: '3', snapshotVersion: 3 },
    {
      ...base,
      at: at(2),
      kind: 'ack',
      nodeId: 'sidecar~10.244.0.12~reviews-v1-1.default~default.svc.cluster.local',
      classId: 'sidecar/default/reviews',
      typeUrl: CDS,
      version: '2',
      snapshotVersion: 2,
    },
    {
      ...base,
      at: at(3),
      kind: 'nack',
      nodeId: 'sidecar~10.244.0.12~reviews-v1-1.default~default.svc.cluster.local',
      classId: 'sidecar/default/reviews',
      typeUrl: RDS,
      version: '3',
      snapshotVersion: 3,
      error: 'Proto constraint validation failed: route: value is required',
    },
    {
      ...base,
      at: at(4),
      kind: 'disconnect',
      nodeId: 'sidecar~10.244.0.12~reviews-v1-1.default~default.svc.cluster.local',
      classId: 'sidecar/default/reviews',
      typeUrl: '',
      version: '',
      snapshotVersion: 0,
    },
  ]);
  const server = await startApiServer(app, { host: '127.0.0.1', port: 0 });
  return {
    url: `http://127.0.0.1:${server.port}/`,
    app,
    store,
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
