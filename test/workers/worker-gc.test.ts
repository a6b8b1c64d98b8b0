/* eslint-disable @typescript-eslint/no-explicit-any -- JSON answers of the API are read loosely */
/**
 * Retention in the Cloudflare Worker (functions/cloudflare/worker.ts), bundled and run in workerd
 * through Miniflare over an R2 binding: POST /api/v1/gc and the cron's scheduled handler. The
 * Worker has no injectable clock, so the store's freshen interval is set to 0
 * (MESHSNAP_FRESHEN_MINUTES) and the grace period to 0: what was written before the run is old.
 * The vars change between steps through setOptions; the bucket persists in a temp folder.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Miniflare, type MiniflareOptions } from 'miniflare';
import type { InputText } from '../../src/pipeline.js';
import { BASE_PATHS, nodeDigest, readInputs, REVIEWS_50_V3, REVIEWS_V3 } from '../functions/bookinfo.js';
import { BOOKINFO_NODES } from '../helpers/mesh.js';
import { ISTIO_SAMPLES, REPO } from '../helpers/paths.js';
import { bundleWorker } from './bundle.js';

const TOKEN = 'w0rker-gc-token';
const CRON = '23 3 * * *'; // wrangler.toml's

let dir: string;
let bundlePath: string;
let mf: Miniflare | undefined;
let inputs: InputText[][];
const logs: string[] = [];

type Vars = Readonly<Record<string, string>>;

const options = (vars: Vars): MiniflareOptions => ({
  modules: true,
  modulesRoot: dir,
  scriptPath: bundlePath,
  compatibilityDate: '2025-09-01',
  r2Buckets: ['MESHSNAP_BUCKET'],
  r2Persist: join(dir, 'r2'),
  bindings: { MESHSNAP_WRITE_TOKEN: TOKEN, MESHSNAP_PREFIX: 'store', ...vars },
  handleStructuredLogs: ({ message }: { message: string }) => void logs.push(message),
});

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meshsnap-worker-gc-'));
  bundlePath = (await bundleWorker(join(REPO, 'functions', 'cloudflare', 'worker.ts'), dir, REPO)).path;
  const net = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
  inputs = await Promise.all(
    [
      REVIEWS_V3,
      REVIEWS_50_V3,
      join(net, 'virtual-service-reviews-80-20.yaml'),
      join(net, 'virtual-service-reviews-90-10.yaml'),
    ].map((vs) => readInputs([...BASE_PATHS, vs])),
  );
  mf = new Miniflare(options({}));
  await mf.ready;
});

after(async () => {
  await mf?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function vars(v: Vars): Promise<void> {
  assert.ok(mf);
  await mf.setOptions(options(v));
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  token: string | null = TOKEN,
): Promise<{ status: number; json: Record<string, any> }> {
  assert.ok(mf, 'miniflare did not start');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await mf.dispatchFetch(`http://worker.test${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function publish(files: InputText[]): Promise<number> {
  const r = await call('POST', '/api/v1/channels/main/compile', { files });
  assert.equal(r.status, 201, JSON.stringify(r.json).slice(0, 500));
  return r.json.version as number;
}

const versions = async (): Promise<number[]> =>
  ((await call('GET', '/api/v1/channels/main/snapshots', undefined, null)).json.snapshots as { version: number }[]).map(
    (s) => s.version,
  );

/** The version serves its config (every object of the node's class is read) and has the digest Node computes. */
async function assertServes(selector: string, files: InputText[]): Promise<void> {
  const { id, metadata } = BOOKINFO_NODES.productpage;
  const config = await call(
    'GET',
    `/api/v1/channels/main/snapshots/${selector}/config?node=${encodeURIComponent(id)}&metadata=${encodeURIComponent(JSON.stringify(metadata))}`,
    undefined,
    null,
  );
  assert.equal(config.status, 200, `${selector}: ${JSON.stringify(config.json).slice(0, 500)}`);
  assert.equal(
    (await call('GET', `/api/v1/channels/main/snapshots/${selector}`, undefined, null)).json.digest,
    nodeDigest(files),
  );
}

const gcAudit = async (): Promise<Record<string, any>[]> =>
  ((await call('GET', '/api/v1/audit?channel=main', undefined, null)).json.entries as Record<string, any>[]).filter(
    (e) => e.kind === 'gc',
  );

/** The part of workerd's Fetcher (Miniflare's getWorker) that dispatches a `scheduled` event. */
interface ScheduledFetcher {
  scheduled(event: { cron: string; scheduledTime: Date }): Promise<{ outcome: string }>;
}

async function scheduled(): Promise<string> {
  assert.ok(mf);
  const worker = (await mf.getWorker()) as unknown as ScheduledFetcher;
  const r = await worker.scheduled({ cron: CRON, scheduledTime: new Date() });
  return r.outcome;
}

/** The log lines of the given event, parsed (after the runtime's output has been read). */
async function logLines(event: string): Promise<Record<string, any>[]> {
  const parsed = () =>
    logs
      .flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as Record<string, unknown>] : []))
      .filter((l) => l.event === event);
  for (let i = 0; i < 50 && parsed().length === 0; i++) await new Promise((r) => setTimeout(r, 100));
  return parsed();
}

test(
  'POST /api/v1/gc over R2: auth, the freshen interval bound, dry run, then the old versions and their data go',
  { timeout: 180_000 },
  async () => {
    for (const files of inputs.slice(0, 3)) await publish(files); // versions 1..3
    const tagged = await call('POST', '/api/v1/channels/main/tags', { version: 1, name: 'first' });
    assert.equal(tagged.status, 201, JSON.stringify(tagged.json));

    assert.equal((await call('POST', '/api/v1/gc', {}, null)).status, 401);
    // The store's default freshen interval (10 min) bounds the grace period.
    const short = await call('POST', '/api/v1/gc', { keep: 1, graceMinutes: 5 });
    assert.equal(short.status, 400, JSON.stringify(short.json));
    assert.match(short.json.error.message, /graceMinutes 5 .* freshen interval of 10 min/);
    const bad = await call('POST', '/api/v1/gc', { keep: 'one' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, 'bad_request');

    await vars({ MESHSNAP_FRESHEN_MINUTES: '0' });
    const dry = await call('POST', '/api/v1/gc', { keep: 1, graceMinutes: 0, dryRun: true });
    assert.equal(dry.status, 200, JSON.stringify(dry.json));
    assert.equal(dry.json.action, 'gc');
    assert.deepEqual(dry.json.deletedVersions, { main: [2] });
    assert.ok(dry.json.deletedObjects + dry.json.deletedDocuments > 0, JSON.stringify(dry.json));
    assert.deepEqual(await versions(), [3, 2, 1], 'a dry run deletes nothing');

    const real = await call('POST', '/api/v1/gc', { keep: 1, graceMinutes: 0, reason: 'trim' });
    assert.equal(real.status, 200, JSON.stringify(real.json));
    assert.deepEqual(real.json.deletedVersions, { main: [2] });
    assert.deepEqual(real.json.keptVersions, { main: [3, 1] });
    assert.ok(real.json.deletedObjects > 0 && real.json.deletedDocuments > 0, JSON.stringify(real.json));
    assert.deepEqual(await versions(), [3, 1]);
    assert.equal((await call('GET', '/api/v1/channels/main/snapshots/2', undefined, null)).status, 404);
    await assertServes('latest', inputs[2] as InputText[]);
    await assertServes('first', inputs[0] as InputText[]);

    const audit = await gcAudit();
    assert.equal(audit.length, 1);
    assert.equal(audit[0]?.actor, 'api');
    assert.equal(audit[0]?.reason, 'trim');
  },
);

test('the cron: bad vars are logged and delete nothing; then gc runs as actor cron', { timeout: 180_000 }, async () => {
  await publish(inputs[3] as InputText[]); // version 4
  await vars({ MESHSNAP_FRESHEN_MINUTES: '0', MESHSNAP_GC_KEEP: 'ten', MESHSNAP_GC_GRACE_MINUTES: '0' });
  assert.equal(await scheduled(), 'exception');
  const failed = await logLines('gc.failed');
  assert.equal(failed.length, 1, logs.join('\n'));
  assert.equal(failed[0]?.cron, CRON);
  assert.match(failed[0]?.error, /MESHSNAP_GC_KEEP must be a whole number ≥ 1, not "ten"/);
  assert.deepEqual(await versions(), [4, 3, 1], 'nothing deleted');

  // The default freshen interval (10 min) refuses a 0 grace period: logged, nothing deleted.
  await vars({ MESHSNAP_GC_KEEP: '1', MESHSNAP_GC_GRACE_MINUTES: '0' });
  assert.equal(await scheduled(), 'exception');
  const refused = await logLines('gc.failed');
  assert.match(
    refused.at(-1)?.error,
    /MESHSNAP_GC_GRACE_MINUTES 0 is shorter than the store's freshen interval of 10 min/,
  );
  assert.deepEqual(await versions(), [4, 3, 1]);

  await vars({ MESHSNAP_FRESHEN_MINUTES: '0', MESHSNAP_GC_KEEP: '1', MESHSNAP_GC_GRACE_MINUTES: '0' });
  assert.equal(await scheduled(), 'ok');
  const done = await logLines('gc.done');
  assert.equal(done.length, 1, logs.join('\n'));
  assert.equal(done[0]?.cron, CRON);
  assert.deepEqual(done[0]?.deletedVersions, { main: [3] });
  assert.ok(done[0]?.deletedObjects > 0, JSON.stringify(done[0]));
  assert.deepEqual(await versions(), [4, 1]);
  await assertServes('latest', inputs[3] as InputText[]);
  await assertServes('first', inputs[0] as InputText[]);

  const audit = await gcAudit();
  const byCron = audit.filter((e) => e.actor === 'cron');
  assert.equal(byCron.length, 1, JSON.stringify(audit));
  assert.match(byCron[0]?.reason, /cron "23 3 \* \* \*"/);
});
