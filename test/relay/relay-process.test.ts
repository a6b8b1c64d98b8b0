/**
 * `meshsnap relay` as a child process, fed only by a store the CLI compiled into: boot, readiness,
 * a corrupt new version refused, a store missing at boot, and SIGTERM → drained exit 0 with the
 * audit log flushed.
 */
import * as grpc from '@grpc/grpc-js';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AuditRecord } from '../../src/snapshot/audit.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { ADS_SERVICE } from '../../src/relay/xds/services.js';
import { XDS_TYPE_URL } from '../../src/xds/type-urls.js';
import { NODE, TestStream } from './protocol-client.js';
import { compileSet, eventually, INPUTS, newObjects, tempDir } from './store-fixture.js';
import { assertLogLines } from '../helpers/log-shape.js';

// The compiled CLI next to this compiled test (works for any dist-* build dir).
const MAIN = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'cli', 'main.js')).href;
const RUN = `import { main } from ${JSON.stringify(MAIN)}; process.exitCode = await main(process.argv.slice(1));`;

const tmp = tempDir('meshsnap-relayproc-');
const children = new Set<ChildProcess>();
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  tmp.remove();
});

function cli(...args: string[]): Record<string, unknown> {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', RUN, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as Record<string, unknown>;
}

interface RelayChild {
  readonly child: ChildProcess;
  readonly port: number;
  readonly httpPort: number;
  readonly lines: Record<string, unknown>[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startRelayProcess(store: string, ...extra: string[]): Promise<RelayChild> {
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      RUN,
      'relay',
      '--store',
      store,
      '--port',
      '0',
      '--http-port',
      '0',
      '--host',
      '127.0.0.1',
      '--poll-ms',
      '100',
      '--drain-ms',
      '1000',
      '--insecure',
      ...extra,
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  children.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const lines: Record<string, unknown>[] = [];
  let buf = '';
  child.stderr?.setEncoding('utf8');
  const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`relay did not start: ${JSON.stringify(lines)}`)), 15_000);
    child.stderr?.on('data', (chunk: string) => {
      buf += chunk;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        try {
          const j = JSON.parse(line) as Record<string, unknown>;
          lines.push(j);
          if (j.event === 'relay.listening') {
            clearTimeout(timer);
            resolve(j);
          }
        } catch {
          lines.push({ raw: line });
        }
      }
    });
    void exited.then((e) => reject(new Error(`relay exited early (${JSON.stringify(e)}): ${JSON.stringify(lines)}`)));
  });
  const l = await listening;
  return { child, port: Number(l.port), httpPort: Number(l.httpPort), lines, exited };
}

async function getJson(port: number, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

test(
  'boots from the store alone, serves a proxy, refuses a corrupt new version, exits 0 on SIGTERM with the audit flushed',
  { timeout: 60_000 },
  async () => {
    const store = join(tmp.dir, 'store');
    assert.equal(cli('compile', ...INPUTS.base, '--store', store, '--quiet').version, 1);
    const relay = await startRelayProcess(store);
    const ready = await getJson(relay.httpPort, '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.version, 1);

    // A proxy connects and ACKs.
    const client = new grpc.Client(`127.0.0.1:${relay.port}`, grpc.credentials.createInsecure());
    const stream = new TestStream(client, `/${ADS_SERVICE}/StreamAggregatedResources`, false);
    try {
      stream.send({ node: NODE.productpage, type_url: XDS_TYPE_URL.clusters, resource_names: [] });
      const r = await stream.next(5000);
      stream.send({
        node: NODE.productpage,
        type_url: XDS_TYPE_URL.clusters,
        resource_names: [],
        version_info: r.version_info,
        response_nonce: r.nonce,
      });

      // Version 2 is published with one of its new objects corrupt (placed before the publish, which
      // then skips it as present), so the relay never sees a good copy.
      const local = new LocalStore(store);
      const bad = newObjects('base', 'reviews50')[0] as string;
      mkdirSync(dirname(local.objectPath(bad)), { recursive: true });
      writeFileSync(local.objectPath(bad), 'not the bytes');
      assert.equal(cli('compile', ...INPUTS.reviews50, '--store', store, '--quiet').version, 2);
      const snap = await eventually(
        async () => {
          const s = (await getJson(relay.httpPort, '/debug/snapshot')).body as {
            snapshot: { serving?: { version: number }; head?: { version: number }; lastError?: { message: string } };
          };
          return s.snapshot.lastError ? s.snapshot : undefined;
        },
        10_000,
        'version 2 refused',
      );
      assert.equal(snap.serving?.version, 1);
      assert.equal(snap.head?.version, 2);
      assert.match(snap.lastError?.message ?? '', /corrupt object/);
      assert.ok(relay.lines.some((l) => l.event === 'snapshot.refused' && l.version === 2));
      const proxies = (await getJson(relay.httpPort, '/debug/proxies')).body as {
        snapshotVersion: number;
        proxies: { nodeId: string }[];
      };
      assert.equal(proxies.snapshotVersion, 1);
      assert.deepEqual(
        proxies.proxies.map((p) => p.nodeId),
        [NODE.productpage.id],
      );

      // Version 3 is good: served.
      assert.ok(!compileSet('reviewsV3').snapshot.objects.has(bad));
      assert.equal(cli('compile', ...INPUTS.reviewsV3, '--store', store, '--quiet').version, 3);
      await eventually(
        async () => (await getJson(relay.httpPort, '/readyz')).body.version === 3,
        10_000,
        'version 3 served',
      );
    } finally {
      stream.close();
      client.close();
    }

    const t0 = Date.now();
    relay.child.kill('SIGTERM');
    const exit = await relay.exited;
    assert.deepEqual(exit, { code: 0, signal: null });
    assert.ok(Date.now() - t0 < 5000, `exit took ${Date.now() - t0} ms`);
    assert.ok(relay.lines.some((l) => l.event === 'relay.closed'));
    // One log shape (src/log.ts): every stderr line is JSON with time, level and a dotted event.
    assert.deepEqual(
      relay.lines.filter((l) => 'raw' in l),
      [],
      'no plain-text lines',
    );
    assertLogLines(relay.lines.map((l) => JSON.stringify(l)).join('\n'));

    const records: AuditRecord[] = [];
    for await (const r of new LocalStore(store).readAudit()) records.push(r);
    const ack = records.find(
      (r) => r.kind === 'ack' && r.nodeId === NODE.productpage.id && r.typeUrl === XDS_TYPE_URL.clusters,
    );
    assert.ok(ack, JSON.stringify(records));
    assert.equal(ack.snapshotVersion, 1);
  },
);

test('a store missing at boot: not ready, then ready once a version is published', { timeout: 60_000 }, async (t) => {
  const store = join(tmp.dir, 'later');
  const relay = await startRelayProcess(store);
  t.after(() => {
    relay.child.kill('SIGKILL');
  });
  const before = await getJson(relay.httpPort, '/readyz');
  assert.equal(before.status, 503);
  assert.equal(before.body.ready, false);
  assert.match(String(before.body.reason), /no versions yet/);

  cli('compile', ...INPUTS.base, '--store', store, '--quiet');
  const readyBody = await eventually(
    async () => {
      const r = await getJson(relay.httpPort, '/readyz');
      return r.status === 200 ? r.body : undefined;
    },
    10_000,
    'ready',
  );
  assert.equal(readyBody.version, 1);

  relay.child.kill('SIGINT');
  assert.deepEqual(await relay.exited, { code: 0, signal: null });
});

test('bad arguments: usage error, exit 2', { timeout: 30_000 }, () => {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', RUN, 'relay', '--port', 'abc'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--port: not a number/);
});
