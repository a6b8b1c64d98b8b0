/**
 * Slow readers cannot stall the relay. Raw HTTP/2 clients with a flow-control window of 0 open ADS
 * streams and never read; a real @grpc/grpc-js-xds client, connecting after them, still gets its
 * configuration and every snapshot switch, /readyz says how many connected proxies have the served
 * version, and the stalled streams are closed once their writes are overdue (log line + metric).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCli } from '../../bench/relay-process.js';
import { openStalledClient, type StalledClient } from '../../bench/stalled-client.js';
import { createLogger } from '../../src/log.js';
import { startRelay, type Relay, type RelayOptions } from '../../src/relay/relay.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { share, startXdsClientProcess } from './client-process.js';
import { echoMeshYaml, ECHO_TARGET, type EchoMeshOptions } from './echo-mesh.js';
import { startEchoBackend, type EchoBackend } from './grpc-backends.js';
import { eventually } from './store-fixture.js';

const VICTIM = {
  id: 'sidecar~127.0.0.1~victim.default~default.svc.cluster.local',
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default' },
  locality: { zone: 'z1' },
};
const stalledNode = (i: number): { id: string; metadata: Record<string, string> } => ({
  id: `sidecar~10.9.0.${i + 1}~stalled-${i}.default~default.svc.cluster.local`,
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default' },
});
/** More stalled streams than shared write slots. */
const STALLED = 12;
const WRITE_SLOTS = 4;

let dir = '';
let v1: EchoBackend | undefined;
let v2: EchoBackend | undefined;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'meshsnap-stalled-'));
  v1 = await startEchoBackend('v1');
  v2 = await startEchoBackend('v2');
});
after(async () => {
  await v1?.close();
  await v2?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function publish(store: string, o: Omit<EchoMeshOptions, 'ports'>): Promise<number> {
  const file = join(dir, 'mesh.yaml');
  writeFileSync(file, echoMeshYaml({ ports: { v1: v1!.port, v2: v2!.port }, ...o }));
  const r = await runCli(['compile', file, '--store', store, '--quiet']);
  assert.equal(r.code, 0, `compile failed: ${r.stderr}`);
  return (JSON.parse(r.stdout.trim().split('\n').pop()!) as { version: number }).version;
}

async function relayFor(
  store: string,
  t: { after(fn: () => Promise<void> | void): void },
  over: Partial<RelayOptions>,
): Promise<{ relay: Relay; lines: string[] }> {
  const lines: string[] = [];
  const relay = await startRelay({
    store: new LocalStore(store),
    host: '127.0.0.1',
    port: 0,
    httpPort: 0,
    pollMs: 100,
    maxBackoffMs: 200,
    writeConcurrency: WRITE_SLOTS,
    slowWriteMs: 50,
    drainTimeoutMs: 500,
    log: createLogger({ level: 'debug', write: (line) => void lines.push(line.trimEnd()) }),
    ...over,
  });
  t.after(() => relay.close());
  return { relay, lines };
}

function stall(relay: Relay, t: { after(fn: () => void): void }): StalledClient[] {
  const clients = Array.from({ length: STALLED }, (_, i) => openStalledClient(relay.port, stalledNode(i)));
  t.after(() => {
    for (const c of clients) c.close();
  });
  return clients;
}

async function readyz(relay: Relay): Promise<{
  status: number;
  body: { ready: boolean; version?: number; proxies?: { placed: number; synced: number } };
}> {
  const res = await fetch(`http://127.0.0.1:${relay.httpPort}/readyz`, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: (await res.json()) as never };
}

test(
  'stalled streams holding every write slot: a new real proxy gets its config and a snapshot switch; /readyz counts who has it',
  { timeout: 90_000 },
  async (t) => {
    const store = join(dir, 'store-a');
    await publish(store, { weights: { v1: 100, v2: 0 } });
    const { relay } = await relayFor(store, t, { writeTimeoutMs: 600_000 });
    stall(relay, t);
    // Every stalled stream has started its response and is not reading it.
    await eventually(() => relay.xds.slowWrites === STALLED || undefined, 20_000, `${STALLED} unread responses`);

    const victim = startXdsClientProcess(relay.port, VICTIM);
    t.after(() => victim.close());
    const first = await victim.run(ECHO_TARGET, 20, { deadlineMs: 20_000 });
    assert.deepEqual(
      first.errors,
      {},
      `the new proxy got no working config: ${JSON.stringify(first.errorDetails)}\n${victim.stderr().slice(-2000)}`,
    );
    assert.equal(share(first, 'v1', 20), 1);

    const version = await publish(store, { weights: { v1: 0, v2: 100 } });
    await eventually(
      async () => {
        const r = await victim.run(ECHO_TARGET, 20, { deadlineMs: 10_000 });
        return share(r, 'v2', 20) === 1 || undefined;
      },
      30_000,
      'the healthy proxy routes by the new version',
    );
    const mine = await eventually(
      () => relay.xds.statuses().find((p) => p.nodeId === VICTIM.id && p.snapshotVersion === version),
      20_000,
      `the healthy proxy ACKed version ${version}`,
    );
    assert.equal(mine.classId, 'grpc/default');

    // Readiness is honest: the version is served, and only the healthy proxy of the 13 has it.
    const r = await readyz(relay);
    assert.equal(r.status, 200);
    assert.equal(r.body.version, version);
    assert.deepEqual(r.body.proxies, { placed: STALLED + 1, synced: 1 });
  },
);

test(
  'a stream that does not read a response within writeTimeoutMs is closed, logged and counted',
  { timeout: 60_000 },
  async (t) => {
    const store = join(dir, 'store-b');
    await publish(store, { weights: { v1: 100, v2: 0 } });
    const { relay, lines } = await relayFor(store, t, { writeTimeoutMs: 300 });
    const clients = stall(relay, t);
    await Promise.all(clients.map((c) => c.ended));
    await eventually(() => relay.xds.streamCount === 0 || undefined, 10_000, 'stalled streams gone from the relay');
    const metrics = await (
      await fetch(`http://127.0.0.1:${relay.httpPort}/metrics`, { signal: AbortSignal.timeout(5000) })
    ).text();
    assert.match(metrics, new RegExp(`^meshsnap_relay_stalled_streams_total ${STALLED}$`, 'm'));
    const closed = lines.filter((l) => l.includes('closed: stalled (a response was not read within 300 ms)'));
    assert.equal(closed.length, STALLED, lines.join('\n'));
    assert.equal(relay.xds.slowWrites, 0);
    assert.equal(relay.xds.writesInFlight, 0);
  },
);
