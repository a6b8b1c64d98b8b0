/**
 * wrangler.toml as users deploy it: `wrangler deploy --dry-run` bundles functions/cloudflare/
 * worker.ts with wrangler's own build (and the [build] step), lists the R2 binding, and the bundle
 * it would upload runs in workerd (Miniflare) with that binding: a write and a read answer.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Miniflare } from 'miniflare';
import { REPO } from '../helpers/paths.js';

let dir: string;
let output: string;
let mf: Miniflare | undefined;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'meshsnap-wrangler-'));
  const wrangler = join(REPO, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
  const run = await promisify(execFile)(process.execPath, [wrangler, 'deploy', '--dry-run', '--outdir', dir], {
    cwd: REPO,
    timeout: 90_000,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', NO_COLOR: '1' },
  });
  output = run.stdout + run.stderr;
  mf = new Miniflare({
    modules: true,
    modulesRoot: dir,
    scriptPath: join(dir, 'worker.js'),
    compatibilityDate: '2025-09-01',
    r2Buckets: ['MESHSNAP_BUCKET'],
    bindings: { MESHSNAP_WRITE_TOKEN: 'from-secret', MESHSNAP_PREFIX: 'store' },
  });
  await mf.ready;
});

after(async () => {
  await mf?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test(
  'wrangler bundles the Worker with the R2 binding, and the bundle serves in workerd',
  { timeout: 120_000 },
  async () => {
    assert.match(output, /env\.MESHSNAP_BUCKET \(meshsnap\)\s+R2 Bucket/, output);
    assert.ok(mf);
    const pin = await mf.dispatchFetch('http://worker.test/api/v1/channels/main/pin', {
      method: 'POST',
      headers: { authorization: 'Bearer from-secret' },
      body: '{"reason":"x"}',
    });
    // Nothing is published yet: the history library refuses, as a JSON error, not a crash.
    assert.ok([404, 409].includes(pin.status), `pin on an empty channel answered ${pin.status}: ${await pin.text()}`);
    const channels = await mf.dispatchFetch('http://worker.test/api/v1/channels');
    assert.equal(channels.status, 200);
    assert.deepEqual(
      ((await channels.json()) as { channels: { name: string }[] }).channels.map((c) => c.name),
      ['main'],
    );
  },
);

test(
  'wrangler.toml schedules the daily gc, and the wrangler bundle has the scheduled handler',
  { timeout: 60_000 },
  async () => {
    const toml = await readFile(join(REPO, 'wrangler.toml'), 'utf8');
    assert.match(toml, /^\[triggers\]\ncrons = \["23 3 \* \* \*"\]$/m);
    assert.match(output, /env\.MESHSNAP_GC_KEEP \("10"\)/);
    assert.match(output, /env\.MESHSNAP_GC_GRACE_MINUTES \("60"\)/);
    assert.ok(mf);
    const worker = (await mf.getWorker()) as unknown as {
      scheduled(e: { cron: string; scheduledTime: Date }): Promise<{ outcome: string }>;
    };
    // Default settings (keep 10, grace 60 min ≥ the 10 min freshen interval): a run over the bucket succeeds.
    assert.equal((await worker.scheduled({ cron: '23 3 * * *', scheduledTime: new Date() })).outcome, 'ok');
  },
);
