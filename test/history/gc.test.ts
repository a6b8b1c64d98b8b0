/**
 * gc: retention keeps the newest N, tagged, pinned and current versions, deletes what nothing
 * kept references, never what is inside the grace period — and a compile running in another
 * process at the same time (reusing objects only old, dropped versions referenced) ends with a
 * complete, verifiable version.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gc } from '../../src/history/gc.js';
import { publishCompiled } from '../../src/history/publish.js';
import { compileTexts } from '../../src/pipeline.js';
import type { VersionDraft } from '../../src/snapshot/manifest.js';
import { setPin } from '../../src/history/pin.js';
import { selectVersion } from '../../src/history/select.js';
import { tag } from '../../src/history/tag.js';
import { verifyVersion } from '../../src/history/verify.js';
import { resourcesForClass } from '../../src/snapshot/classify.js';
import { nodeSha256Hex, type LocalStore } from '../../src/snapshot/store/local.js';
import { XDS_TYPES } from '../../src/xds/type-urls.js';
import { BOOKINFO_STATE } from '../helpers/paths.js';
import { compileAndPublish, context, NET, sample, STATE, tempStore } from './helpers.js';

/** Makes every file of the store look written `ms` ago. */
function backdate(dir: string, ms: number): void {
  const t = new Date(Date.now() - ms);
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const p = join(dir, name);
    if (statSync(p).isFile()) utimesSync(p, t, t);
  }
}

/** Reads the whole version back: every document, every object (verified by the store), and recompiles it. */
async function assertComplete(store: LocalStore, version: string): Promise<void> {
  const record = await selectVersion(store, 'main', version);
  const content = await store.getSnapshot(record.digest);
  assert.ok(content, `snapshot of ${version}`);
  for (const c of content.classes) {
    const r = resourcesForClass(content, c.id);
    for (const t of XDS_TYPES)
      for (const [name, d] of r?.[t] ?? []) assert.ok(await store.getObject(d), `${t} ${name} of version ${version}`);
  }
  const v = await verifyVersion(store, record, nodeSha256Hex);
  assert.ok(v.ok, `version ${version}: ${v.reasons.join('; ')}`);
}

async function history(store: LocalStore): Promise<void> {
  await compileAndPublish(store, STATE, ['virtual-service-reviews-v3.yaml']);
  await compileAndPublish(store, STATE, ['virtual-service-reviews-50-v3.yaml']);
  await compileAndPublish(store, STATE, ['virtual-service-reviews-80-20.yaml']);
  await compileAndPublish(store, STATE, ['virtual-service-reviews-90-10.yaml']);
}

test('retention: newest N, tagged, pinned and head are kept; the rest goes; nothing inside the grace period is deleted', async () => {
  const { store, dir, cleanup } = tempStore();
  try {
    await history(store);
    const ctx = context(store);
    await tag(ctx, '1', 'release-1');
    // A pin on a version that is not the head (as a rollback leaves one; `pin` itself pins what is served).
    await setPin(ctx, { version: 2, actor: ctx.actor, at: ctx.now().toISOString() });
    const fresh = await gc(ctx, { keep: 1 });
    assert.deepEqual(fresh.keptVersions.main, [4, 2, 1]);
    assert.deepEqual(fresh.deletedVersions.main, [3]);
    assert.equal(fresh.deletedObjects + fresh.deletedDocuments, 0, 'everything is younger than the grace period');
    assert.ok(fresh.spared > 0);

    await compileAndPublish(store, STATE, ['virtual-service-reviews-jason-v2-v3.yaml']); // 5
    backdate(dir, 2 * 3_600_000);
    const dry = await gc(ctx, { keep: 1, dryRun: true });
    assert.ok(dry.deletedDocuments > 0);
    assert.deepEqual(await store.listVersions('main'), [5, 4, 2, 1], 'a dry run deletes nothing');

    const real = await gc(ctx, { keep: 1 });
    assert.deepEqual(real.deletedVersions.main, [4]);
    assert.ok(real.deletedDocuments > 0 && real.deletedObjects > 0);
    assert.deepEqual(await store.listVersions('main'), [5, 2, 1]);
    for (const v of ['5', '2', 'release-1']) await assertComplete(store, v);
    // Nothing left to collect.
    const again = await gc(ctx, { keep: 1 });
    assert.equal(again.deletedDocuments + again.deletedObjects, 0);
  } finally {
    cleanup();
  }
});

test('gc removes temp files a killed writer left in the folder store, once older than the grace period', async () => {
  const { store, dir, cleanup } = tempStore();
  try {
    await compileAndPublish(store, STATE, ['virtual-service-reviews-v3.yaml']);
    const tmp = join(dir, 'tmp');
    mkdirSync(tmp, { recursive: true });
    // What a writer killed between writing a temp file and linking it into place leaves behind.
    const stale = join(tmp, '4242-killed-1');
    const young = join(tmp, '4242-killed-2');
    writeFileSync(stale, 'half a document');
    writeFileSync(young, 'a write in progress');
    const old = new Date(Date.now() - 2 * 3_600_000);
    utimesSync(stale, old, old);
    const ctx = context(store);

    const dry = await gc(ctx, { dryRun: true });
    assert.equal(dry.deletedTempFiles, 0);
    assert.ok(existsSync(stale), 'a dry run deletes nothing');

    const real = await gc(ctx);
    assert.equal(real.deletedTempFiles, 1);
    assert.ok(!existsSync(stale), 'the stale temp file is gone');
    assert.ok(existsSync(young), 'a temp file inside the grace period stays');
    await assertComplete(store, 'latest');
  } finally {
    cleanup();
  }
});

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/**
 * `meshsnap compile` in a child process (the compiled CLI of this build). `ready` resolves once
 * the child has loaded the CLI (imports take seconds on a busy machine), `done` when it exits.
 */
function compileChild(
  dir: string,
  files: string[],
): { ready: Promise<void>; done: Promise<void>; exited: () => boolean } {
  const script = `const { main } = await import(${JSON.stringify(MAIN)}); process.stderr.write('ready\\n'); process.exitCode = await main(${JSON.stringify(['compile', ...files, '--store', dir, '--quiet'])});`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  let exited = false;
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((r) => (onReady = r));
  child.stderr.on('data', (b: Buffer) => {
    err += b.toString();
    if (err.includes('ready')) onReady();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      exited = true;
      onReady();
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`compile child exited ${code}: ${err}`));
      else resolve();
    });
  });
  return { ready, done, exited: () => exited };
}

for (const round of [1, 2]) {
  test(
    `gc running over and over while another process compiles leaves the new version complete (${round})`,
    { timeout: 90_000 },
    async () => {
      const { store, dir, cleanup } = tempStore();
      try {
        await history(store);
        backdate(dir, 2 * 3_600_000); // everything is past the grace period
        // Recompiling version 1's inputs reuses objects and documents only version 1 referenced:
        // exactly what gc (keep 1) deletes. Without the writers' freshen this loses objects.
        const child = compileChild(dir, [
          BOOKINFO_STATE,
          join(NET, 'destination-rule-all.yaml'),
          join(NET, 'virtual-service-reviews-v3.yaml'),
        ]);
        await child.ready;
        let runs = 0;
        let deleted = 0;
        while (!child.exited()) {
          const r = await gc(context(store), { keep: 1 });
          runs++;
          deleted += r.deletedDocuments + r.deletedObjects;
        }
        await child.done;
        assert.ok(runs >= 1 && deleted > 0, `gc ran ${runs} times, deleted ${deleted}`);
        const head = await store.readChannel('main');
        assert.equal(head?.version, 5);
        await assertComplete(store, 'latest');
        // A later gc (the compile is done, everything old again) still keeps the head complete.
        backdate(dir, 2 * 3_600_000);
        await gc(context(store), { keep: 1 });
        await assertComplete(store, 'latest');
      } finally {
        cleanup();
      }
    },
  );
}

test('the race itself: gc runs after a publisher found old objects to reuse and before it writes its record', async () => {
  const { store, dir, cleanup } = tempStore();
  try {
    await history(store);
    backdate(dir, 2 * 3_600_000);
    const r = compileTexts(
      [
        { file: 'state.yaml', text: STATE },
        sample('destination-rule-all.yaml'),
        sample('virtual-service-reviews-v3.yaml'),
      ],
      { hasher: nodeSha256Hex },
    );
    let deleted = 0;
    // The publisher has checked (and skipped) every object and document it reuses; gc runs now.
    const paused = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'publish')
          return async (channel: string, draft: VersionDraft) => {
            const g = await gc(context(store), { keep: 1 });
            deleted += g.deletedDocuments + g.deletedObjects;
            return target.publish(channel, draft);
          };
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const published = await publishCompiled(
      paused,
      'main',
      { snapshot: r.snapshot, diagnostics: r.diagnostics, stored: r.stored },
      {},
      new Date().toISOString(),
    );
    assert.equal(published.status, 'published');
    assert.ok(deleted > 0, "gc did delete the other dropped versions' data");
    await assertComplete(store, 'latest');
  } finally {
    cleanup();
  }
});
