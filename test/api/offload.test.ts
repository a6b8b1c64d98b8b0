/**
 * Heavy API work off the relay's event loop, as `meshsnap serve` wires it: a relay and the API
 * (with the worker-thread runner) in this process over one LocalStore. A large compile leaves the
 * main thread free (the relay's /healthz keeps answering), a diff of two large versions is bounded
 * (200 with truncated: true, not a 500), and a worker that dies answers a 5xx with a stable code
 * while the server keeps serving.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { after, before, test } from 'node:test';
import { generateMesh, toYaml } from '../../bench/synthetic.js';
import { createApp } from '../../src/api/app.js';
import { startApiServer, type ApiServer } from '../../src/api/node-server.js';
import { workerRunner, type WorkerRunner } from '../../src/api/worker-runner.js';
import { silentLogger } from '../../src/relay/log.js';
import { startRelay, type Relay } from '../../src/relay/relay.js';
import { LocalStore, nodeSha256Hex } from '../../src/snapshot/store/local.js';

const TOKEN = 'offload-token';
const SERVICES = 300;
const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-offload-'));
const storeDir = join(tmp, 'store');
const store = new LocalStore(storeDir);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const meshFile = (seed: number) => ({
  file: `mesh-${seed}.yaml`,
  text: toYaml(generateMesh({ services: SERVICES, seed }).docs),
});

let relay: Relay;
const servers: ApiServer[] = [];
const runners: WorkerRunner[] = [];

/** An API server over the shared store with its own worker runner. */
async function startApi(opts: Partial<Parameters<typeof workerRunner>[0]> = {}): Promise<string> {
  const offload = workerRunner({ storeSpec: storeDir, ...opts });
  runners.push(offload);
  const app = createApp({ store, auth: { writeToken: TOKEN }, compile: { hasher: nodeSha256Hex }, offload });
  const server = await startApiServer(app, { host: '127.0.0.1', port: 0 });
  servers.push(server);
  return `http://127.0.0.1:${server.port}`;
}

const compile = async (base: string, file: { file: string; text: string }) => {
  const res = await fetch(`${base}/api/v1/channels/main/compile`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ files: [file] }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), json: (await res.json()) as Json };
};

const healthz = async () => (await fetch(`http://127.0.0.1:${relay.httpPort}/healthz`)).status;

let api: string;
before(async () => {
  relay = await startRelay({
    store,
    channel: 'main',
    host: '127.0.0.1',
    port: 0,
    httpPort: 0,
    pollMs: 200,
    log: silentLogger,
  });
  api = await startApi();
});
after(async () => {
  for (const s of servers) await s.close();
  for (const r of runners) await r.close();
  await relay.close();
  rmSync(tmp, { recursive: true, force: true });
});

test(
  'a large compile runs off the main thread: the relay answers /healthz all along',
  { timeout: 300_000 },
  async (t) => {
    const file = meshFile(1);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    let answered = 0;
    let polling = true;
    const poll = (async () => {
      while (polling) {
        assert.equal(await healthz(), 200);
        answered++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    delay.enable();
    const started = performance.now();
    const res = await compile(api, file);
    const wall = performance.now() - started;
    delay.disable();
    polling = false;
    await poll;

    assert.equal(res.status, 201, JSON.stringify(res.json).slice(0, 500));
    assert.equal(res.json.version, 1);
    assert.ok(res.json.counts.clusters > SERVICES, 'a large snapshot');
    const maxDelayMs = delay.max / 1e6;
    t.diagnostic(
      `event loop max delay ${maxDelayMs.toFixed(0)} ms during a ${wall.toFixed(0)} ms compile; /healthz answered ${answered} times`,
    );
    // Inline, the compile would hold the loop for most of its wall time; off the loop, the main
    // thread only parses the request and takes the result.
    assert.ok(
      maxDelayMs < 0.25 * wall,
      `event loop blocked ${maxDelayMs.toFixed(0)} ms during a ${wall.toFixed(0)} ms compile`,
    );
    assert.ok(answered >= 2, `/healthz answered ${answered} times during the compile`);
  },
);

test(
  'a diff of two large versions answers 200, bounded: truncated with counts of what was left out',
  { timeout: 300_000 },
  async () => {
    const second = await compile(api, meshFile(2));
    assert.equal(second.status, 201, JSON.stringify(second.json).slice(0, 500));
    assert.equal(second.json.version, 2);

    const res = await fetch(`${api}/api/v1/channels/main/diff?from=1&to=2`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as Json;
    assert.equal(body.truncated, true);
    assert.ok(body.omitted.resources > 0, JSON.stringify(body.omitted));
    assert.equal(typeof body.omitted.inputs, 'number');

    const small = (await (await fetch(`${api}/api/v1/channels/main/diff?from=1&to=2&limit=5`)).json()) as Json;
    const listed = (small.diff.classes as Json[])
      .flatMap((c) => Object.values(c.types as Record<string, Json>))
      .reduce((n, t) => n + t.added.length + t.removed.length + t.changed.length, 0);
    assert.equal(listed + (small.diff.inputs?.length ?? 0), 5);
    assert.equal(small.truncated, true);
    // Everything is accounted for: listed + omitted is the same whatever the limit.
    assert.equal(listed + small.omitted.resources, countResources(body) + body.omitted.resources);

    const tooLarge = await fetch(`${api}/api/v1/channels/main/diff?from=1&to=2&limit=999999`);
    assert.equal(tooLarge.status, 400);
    assert.equal(((await tooLarge.json()) as Json).error.code, 'bad_request');

    const same = (await (await fetch(`${api}/api/v1/channels/main/diff?from=2&to=2`)).json()) as Json;
    assert.equal(same.truncated, false);
    assert.equal(same.omitted, undefined);
  },
);

const countResources = (body: Json): number =>
  (body.diff.classes as Json[])
    .flatMap((c) => Object.values(c.types as Record<string, Json>))
    .reduce((n, t) => n + t.added.length + t.removed.length + t.changed.length, 0);

test(
  'a worker that runs out of memory answers 500 worker_failed; the server keeps serving',
  { timeout: 300_000 },
  async () => {
    const starved = await startApi({ compileLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 } });
    const file = meshFile(3);
    for (let i = 0; i < 2; i++) {
      // Twice: the lane replaces the dead worker for the next job.
      const res = await compile(starved, file);
      assert.equal(res.status, 500, JSON.stringify(res.json).slice(0, 500));
      assert.equal(res.json.error.code, 'worker_failed');
      assert.match(res.json.error.message, /compile worker failed/);
    }
    assert.equal(await healthz(), 200);
    const channels = await fetch(`${starved}/api/v1/channels`);
    assert.equal(channels.status, 200);
    await channels.body?.cancel();
    const diff = await fetch(`${starved}/api/v1/channels/main/diff?from=1&to=2&limit=1`);
    assert.equal(diff.status, 200, 'the diff worker is not the one that died');
    await diff.body?.cancel();
    assert.equal((await store.readChannel('main'))?.version, 2, 'nothing published by the failed compiles');
  },
);
