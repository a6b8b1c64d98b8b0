/**
 * Crash safety: a process publishing big snapshots is SIGKILLed mid-write, at several moments.
 * Afterwards the store must be readable and the channel head on a complete snapshot: the tree
 * and every object verify, and the packs load it. Run on the folder store and on S3 (s3rver).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { nodeSha256Hex } from '../../src/snapshot/store/local.js';
import type { ObjectStore } from '../../src/snapshot/store/object-store.js';
import { openStore } from '../../src/snapshot/store/open.js';
import { loadSnapshotPacked } from '../../src/snapshot/store/packs.js';
import type { S3Backend } from '../../src/snapshot/store/s3.js';
import type { SnapshotStore } from '../../src/snapshot/store/store.js';
import { XDS_TYPES } from '../../src/xds/type-urls.js';
import { tempStoreDir } from './helpers.js';
import { startS3rver, type RunningS3 } from './s3rver.js';

const WORKER = join(fileURLToPath(new URL('.', import.meta.url)), 'crash-worker.js');
const SERVICES = 1500;
/** Fewer over HTTP to s3rver, which stores each key as files: the test stays within seconds. */
const S3_SERVICES = 300;
let s3: RunningS3;

before(async () => {
  s3 = await startS3rver();
});
after(async () => {
  await s3?.close();
});

/** Starts the publisher, waits for its first complete version, lets it run `ms` more, kills it. */
async function publishAndKill(
  spec: string,
  ms: number,
  services: number,
  env: NodeJS.ProcessEnv = {},
): Promise<number> {
  const child = spawn(process.execPath, [WORKER, spec, String(services)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  try {
    let lines = 0;
    const first = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        lines += chunk.toString().split('\n').filter(Boolean).length;
        if (lines > 0) resolve();
      });
      child.once('exit', (code) => reject(new Error(`publisher exited early (${code})`)));
    });
    await first;
    await sleep(ms);
    return lines;
  } finally {
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  }
}

async function assertComplete(store: SnapshotStore): Promise<number> {
  const head = await store.readChannel('main');
  assert.ok(head, 'the channel has a head');
  for (const v of await store.listVersions('main')) assert.ok(await store.getVersion('main', v), `version ${v} reads`);
  const content = await store.getSnapshot(head.digest);
  assert.ok(content, 'the head snapshot is complete');
  let objects = 0;
  for (const group of Object.values(content.groups)) {
    for (const type of XDS_TYPES) {
      for (const d of Object.values(group[type])) {
        assert.ok(await store.getObject(d), `object ${d} is stored and verifies`);
        objects++;
      }
    }
  }
  const record = await store.getVersion('main', head.version);
  assert.ok(record?.packs);
  const packed = await loadSnapshotPacked(store, record, nodeSha256Hex);
  assert.equal(packed?.fallbackReads, 0);
  assert.deepEqual(packed?.content, content);
  return objects;
}

for (const ms of [0, 40, 150, 400]) {
  test(
    `folder store: killed ${ms} ms after the first version, the head is on a complete snapshot`,
    { timeout: 60_000 },
    async () => {
      const root = tempStoreDir();
      await publishAndKill(root, ms, SERVICES);
      assert.ok((await assertComplete(openStore(root))) >= SERVICES);
    },
  );
}

for (const ms of [0, 100, 300]) {
  test(
    `s3 store: killed ${ms} ms after the first version, the head is on a complete snapshot`,
    { timeout: 90_000 },
    async () => {
      const spec = `s3://${s3.bucket}/crash-${ms}?endpoint=${encodeURIComponent(s3.endpoint)}&region=us-east-1&forcePathStyle=true&conditional=false`;
      const creds = {
        AWS_ACCESS_KEY_ID: s3.credentials.accessKeyId,
        AWS_SECRET_ACCESS_KEY: s3.credentials.secretAccessKey,
      };
      await publishAndKill(spec, ms, S3_SERVICES, creds);
      Object.assign(process.env, creds);
      const store = openStore(spec);
      try {
        assert.ok((await assertComplete(store)) >= S3_SERVICES);
      } finally {
        ((store as ObjectStore).backend as S3Backend).destroy();
      }
    },
  );
}
