/**
 * End to end with the real proxyless client: `meshsnap compile` → store → `meshsnap relay` (child
 * process) → @grpc/grpc-js-xds (child process) → real RPCs to two grpc-js backends, through the
 * routes we compiled. Each scenario is a new published version the relay must pick up and push.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli, startRelayProcess, type RelayProcess } from '../../bench/relay-process.js';
import { startXdsClientProcess, share, type RunResult, type XdsClientProcess } from './client-process.js';
import { echoMeshYaml, ECHO_TARGET, type EchoMeshOptions } from './echo-mesh.js';
import { startEchoBackend, type EchoBackend } from './grpc-backends.js';

const NODE = {
  id: 'sidecar~127.0.0.1~client.default~default.svc.cluster.local',
  metadata: { GENERATOR: 'grpc', NAMESPACE: 'default' },
  locality: { zone: 'z1' },
};
const CALLS = 400;
/** A switch must reach the client well within this (the relay polls the store every 200 ms here). */
const SWITCH_WITHIN_MS = 20_000;

/** Runs `probe` until `done` holds or the time is up; returns the last result. */
async function eventually(
  probe: () => Promise<RunResult>,
  done: (r: RunResult) => boolean,
  what: string,
): Promise<RunResult> {
  const deadline = Date.now() + SWITCH_WITHIN_MS;
  let last: RunResult | undefined;
  while (Date.now() < deadline) {
    last = await probe();
    if (done(last)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.fail(`${what} not reached within ${SWITCH_WITHIN_MS} ms; last round: ${JSON.stringify(last)}`);
}

/** meshsnap_relay_rejected_streams_total from /metrics (0 when absent). */
function rejectedStreams(metrics: string): number {
  const m = /^meshsnap_relay_rejected_streams_total(?:\{[^}]*\})? (\d+)/m.exec(metrics);
  return m ? Number(m[1]) : 0;
}

describe('relay end to end with @grpc/grpc-js-xds', { timeout: 150_000 }, () => {
  let dir = '';
  let store = '';
  let v1: EchoBackend | undefined;
  let v2: EchoBackend | undefined;
  let relay: RelayProcess | undefined;
  let client: XdsClientProcess | undefined;

  async function publish(o: Omit<EchoMeshOptions, 'ports'>): Promise<number> {
    const file = join(dir, 'mesh.yaml');
    writeFileSync(file, echoMeshYaml({ ports: { v1: v1!.port, v2: v2!.port }, ...o }));
    const r = await runCli(['compile', file, '--store', store, '--quiet']);
    assert.equal(r.code, 0, `compile failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      version: number;
      status: string;
      diagnostics: { error: number };
    };
    assert.equal(out.status, 'published');
    assert.equal(out.diagnostics.error, 0, r.stderr);
    return out.version;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'meshsnap-e2e-relay-'));
    store = join(dir, 'store');
    v1 = await startEchoBackend('v1');
    v2 = await startEchoBackend('v2');
    await publish({ weights: { v1: 80, v2: 20 } });
    relay = await startRelayProcess(['--store', store, '--channel', 'main', '--poll-ms', '200']);
    client = startXdsClientProcess(relay.xdsPort, NODE);
  });

  after(async () => {
    await client?.close();
    await relay?.close();
    await v1?.close();
    await v2?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const diag = (): string =>
    `\nrelay log:\n${relay?.logs().slice(-30).join('\n')}\nclient stderr:\n${client?.stderr().slice(-3000)}`;

  test('routes 80/20 across the two backends, as compiled', async () => {
    const r = await client!.run(ECHO_TARGET, CALLS, { deadlineMs: 10_000 });
    assert.deepEqual(r.errors, {}, `calls failed: ${JSON.stringify(r.errorDetails)}${diag()}`);
    const v1Share = share(r, 'v1', CALLS);
    assert.ok(
      v1Share >= 0.7 && v1Share <= 0.9,
      `v1 got ${(v1Share * 100).toFixed(1)} % (want 70–90 %): ${JSON.stringify(r.counts)}`,
    );
  });

  test('a new version (0/100) moves the traffic to v2, and /debug/proxies shows it ACKed', async () => {
    const version = await publish({ weights: { v1: 0, v2: 100 } });
    const r = await eventually(
      () => client!.run(ECHO_TARGET, 100),
      (x) => share(x, 'v2', 100) >= 0.95,
      '≥ 95 % of calls on v2',
    );
    assert.ok(share(r, 'v2', 100) >= 0.95);

    // The relay's view: this proxy, class grpc/default, has ACKed the new snapshot version.
    const deadline = Date.now() + 5000;
    let mine: Record<string, unknown> | undefined;
    while (Date.now() < deadline) {
      const body = (await relay!.getJson('/debug/proxies')) as unknown;
      const list = (Array.isArray(body) ? body : ((body as { proxies?: unknown[] }).proxies ?? [])) as Record<
        string,
        unknown
      >[];
      mine = list.find((p) => p.nodeId === NODE.id);
      if (mine?.snapshotVersion === version) break;
      await new Promise((res) => setTimeout(res, 200));
    }
    assert.ok(mine, `node ${NODE.id} not in /debug/proxies`);
    assert.equal(mine.classId, 'grpc/default');
    assert.equal(mine.snapshotVersion, version, `proxy status: ${JSON.stringify(mine)}`);
    const types = mine.types as Record<string, { sent?: string; acked?: string; nack?: unknown }>;
    for (const [url, t] of Object.entries(types)) {
      assert.equal(t.acked, t.sent, `${url}: sent ${t.sent}, acked ${t.acked}`);
      assert.equal(t.nack, undefined, `${url} was NACKed: ${JSON.stringify(t.nack)}`);
    }
  });

  test('a fault abort (503, 100 %) fails every call with UNAVAILABLE', async () => {
    await publish({ weights: { v1: 0, v2: 100 }, abort: true });
    const before = v2!.calls();
    const r = await eventually(
      () => client!.run(ECHO_TARGET, 50),
      (x) => (x.errors.UNAVAILABLE ?? 0) === 50,
      'every call aborted',
    );
    assert.deepEqual(r.counts, {});
    assert.match(r.errorDetails.UNAVAILABLE ?? '', /fault|abort|503|injected/i);
    // The last round never reached a backend (the abort happens in the client).
    const during = v2!.calls() - before;
    await client!.run(ECHO_TARGET, 20);
    assert.equal(v2!.calls() - before, during, 'aborted calls must not reach the backend');
  });

  test('a client of a namespace the snapshot does not know is refused with a reason, not left hanging', async () => {
    const stranger = startXdsClientProcess(relay!.xdsPort, {
      ...NODE,
      id: 'sidecar~127.0.0.1~client.nope~nope.svc.cluster.local',
      metadata: { GENERATOR: 'grpc', NAMESPACE: 'nope' },
    });
    try {
      const rejectedBefore = rejectedStreams(await relay!.getText('/metrics'));
      const started = Date.now();
      const r = await stranger.run(ECHO_TARGET, 1, { deadlineMs: 3000, concurrency: 1 });
      // grpc-js-xds keeps retrying the refused ADS stream and holds the call until its deadline (or fails
      // it UNAVAILABLE with the stream error): either way no config, and the relay says why.
      assert.ok((r.errors.DEADLINE_EXCEEDED ?? 0) + (r.errors.UNAVAILABLE ?? 0) === 1, JSON.stringify(r));
      assert.deepEqual(r.counts, {}, 'an unplaceable client must not get config');
      assert.ok(Object.keys(r.errors).length > 0);
      assert.ok(Date.now() - started < 15_000);
      assert.ok(
        rejectedStreams(await relay!.getText('/metrics')) > rejectedBefore,
        'the relay counts the refused stream',
      );
      assert.ok(
        relay!.logs().some((l) => l.includes('nope') && /not in the mesh snapshot|NOT_FOUND|rejected/i.test(l)),
        `no log line gives the reason:\n${relay!.logs().slice(-10).join('\n')}`,
      );
    } finally {
      await stranger.close();
    }
  });

  test('retries (3 attempts on unavailable) turn a failing first attempt into a success', async () => {
    v2!.flaky = true; // every request id fails its first attempt with UNAVAILABLE
    await publish({ weights: { v1: 0, v2: 100 }, retries: true });
    const r = await eventually(
      () => client!.run(ECHO_TARGET, 50),
      (x) => (x.counts.v2 ?? 0) === 50,
      'every call succeeding after a retry',
    );
    assert.equal(r.retried, 50, `calls answered on a later attempt: ${r.retried}/50`);
    assert.ok(
      [...v2!.attempts.values()].some((n) => n > 1),
      'the backend saw more than one attempt',
    );
    v2!.flaky = false;
  });
});
