/**
 * `meshsnap explain` and GET …/snapshots/:v/explain over a stored history of bookinfo: the same
 * JSON from both, `--pod` resolved from the stored inputs, `--across` naming the versions where the
 * answer changed, and the CLI contract (help, usage errors exit 2 naming the flag).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createApp } from '../../src/api/app.js';
import { main } from '../../src/cli/main.js';
import { LocalStore } from '../../src/snapshot/store/local.js';
import { BIN, BOOKINFO_STATE, ISTIO_SAMPLES } from '../helpers/paths.js';

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-explain-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const STORE = join(tmp, 'store');
const NET = join(ISTIO_SAMPLES, 'bookinfo', 'networking');
const POD = 'default/productpage-v1-5f6d7c8b9-abcde';
const JASON = ['--pod', POD, '--to', 'reviews:9080', '--path', '/reviews/0', '--header', 'end-user=jason'];

async function cli(...args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: await main(args), stderr };
  } finally {
    process.stderr.write = write;
  }
}

function bin(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 90_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

before(async () => {
  // 1: no VirtualService (reviews: all subsets), 2: jason → v2, others v1, 3: everyone → v3.
  const base = [BOOKINFO_STATE, join(NET, 'destination-rule-all.yaml')];
  for (const extra of [[], ['virtual-service-reviews-test-v2.yaml'], ['virtual-service-reviews-v3.yaml']]) {
    const r = await cli('compile', ...base, ...extra.map((f) => join(NET, f)), '--store', STORE, '--quiet');
    assert.equal(r.code, 0, r.stderr);
  }
});

test('explain --pod: the pod’s sidecar, the Service’s cluster IP, JSON on stdout; --text the readable form', () => {
  const r = bin('explain', '2', ...JASON, '--store', STORE);
  assert.equal(r.code, 0, r.stderr);
  const answer = JSON.parse(r.stdout) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  assert.equal(answer.version, '2');
  assert.equal(answer.node.class, 'sidecar/default/productpage');
  assert.equal(answer.request.destinationIp, '10.96.10.3');
  assert.equal(answer.outcome, 'routed');
  assert.equal(answer.clusters[0].name, 'outbound|9080|v2|reviews.default.svc.cluster.local');
  assert.equal(answer.route.provenance[0].name, 'reviews');
  assert.match(r.stderr, /version 2 .*proxy class sidecar\/default\/productpage/);

  const viaFlag = bin('explain', '--version', '2', ...JASON, '--store', STORE);
  assert.equal(viaFlag.code, 0, viaFlag.stderr);
  assert.equal(viaFlag.stdout, r.stdout, '--version 2 asks what the VERSION argument 2 asks');

  const text = bin('explain', '2', ...JASON, '--text', '--store', STORE);
  assert.equal(text.code, 0, text.stderr);
  assert.match(
    text.stdout,
    /^outbound GET http:\/\/reviews:9080\/reviews\/0\n=> route #0 of virtual host reviews\.default\.svc\.cluster\.local:9080 \(from VirtualService default\/reviews\)/,
  );
  assert.match(text.stdout, /cluster +outbound\|9080\|v2\|reviews\.default\.svc\.cluster\.local 100% EDS/);
});

test('explain --across 1..3 names the versions where the answer changed, and what changed', () => {
  const r = bin('explain', ...JASON, '--across', '1..3', '--store', STORE);
  assert.equal(r.code, 0, r.stderr);
  const a = JSON.parse(r.stdout) as {
    versions: { version: string; digest: string }[];
    changes: { from: string; to: string; parts: Record<string, { before: string; after: string }> }[];
  };
  assert.deepEqual(
    a.versions.map((v) => v.version),
    ['1', '2', '3'],
  );
  assert.equal(new Set(a.versions.map((v) => v.digest)).size, 3);
  assert.deepEqual(
    a.changes.map((c) => [c.from, c.to]),
    [
      ['1', '2'],
      ['2', '3'],
    ],
  );
  assert.deepEqual(a.changes[0]?.parts.clusters, {
    before: 'outbound|9080||reviews.default.svc.cluster.local 100%',
    after: 'outbound|9080|v2|reviews.default.svc.cluster.local 100%',
  });
  assert.equal(a.changes[1]?.parts.clusters?.after, 'outbound|9080|v3|reviews.default.svc.cluster.local 100%');
  // The same question where nothing changes (ratings is never routed by these VirtualServices).
  const same = bin('explain', '--pod', POD, '--to', 'ratings:9080', '--across', '2..3', '--text', '--store', STORE);
  assert.equal(same.code, 0, same.stderr);
  assert.match(same.stdout, /the answer is the same in every version/);
});

test('GET …/snapshots/:v/explain answers the CLI’s JSON; bad questions are 400, unknown pods 404', async () => {
  const app = createApp({ store: new LocalStore(STORE), auth: { writeToken: 't' } });
  const q = new URLSearchParams({ pod: POD, to: 'reviews:9080', path: '/reviews/0' });
  q.append('header', 'end-user=jason');
  const res = await app.request(`/api/v1/channels/main/snapshots/2/explain?${q.toString()}`);
  assert.equal(res.status, 200);
  const api = (await res.json()) as Record<string, unknown>;
  const cliAnswer = JSON.parse(bin('explain', '2', ...JASON, '--store', STORE).stdout) as Record<string, unknown>;
  assert.deepEqual(api, { channel: 'main', ...cliAnswer });

  const across = await app.request(`/api/v1/channels/main/snapshots/latest/explain?${q.toString()}&across=1..3`);
  assert.equal(across.status, 200);
  assert.equal(((await across.json()) as { changes: unknown[] }).changes.length, 2);

  for (const bad of [
    'to=reviews',
    `pod=${POD}`,
    `pod=${POD}&to=reviews:9080&protocol=quic`,
    `pod=${POD}&to=reviews:9080&across=3`,
  ]) {
    const r = await app.request(`/api/v1/channels/main/snapshots/2/explain?${bad}`);
    assert.equal(r.status, 400, bad);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, 'bad_request');
  }
  const missing = await app.request('/api/v1/channels/main/snapshots/2/explain?pod=default/nope&to=reviews:9080');
  assert.equal(missing.status, 404);
});

test('the CLI contract: --help lists the request flags; usage errors exit 2 naming the flag', async () => {
  const help = bin('explain', '--help');
  assert.equal(help.code, 0);
  for (const flag of [
    '--pod NS/NAME',
    '--to HOST:PORT',
    '--header NAME=VALUE',
    '--across A..B',
    '--inbound',
    '--sni NAME',
    '--text',
  ])
    assert.ok(help.stdout.includes(flag), flag);
  const cases: [string[], RegExp][] = [
    [['explain', '--pod', POD], /--to is required/],
    [['explain', '--pod', POD, '--to', 'reviews'], /--to: "reviews" is not host:port/],
    [['explain', '--to', 'reviews:9080'], /--node or --pod is required/],
    [['explain', '--pod', 'nope', '--to', 'reviews:9080'], /--pod: "nope" is not NAMESPACE\/NAME/],
    [['explain', '--pod', POD, '--node', 'x', '--to', 'reviews:9080'], /give --node or --pod, not both/],
    [
      ['explain', '--pod', POD, '--to', 'reviews:9080', '--header', 'nonsense'],
      /--header: "nonsense" is not NAME=VALUE/,
    ],
    [['explain', '--pod', POD, '--to', 'reviews:9080', '--across', '1-3'], /--across: "1-3" is not FROM\.\.TO/],
    [['explain', '--pod', POD, '--to', 'reviews:9080', '--across', '3..1'], /--across: 3 comes after 1/],
    [['explain', 'tag:', '--pod', POD, '--to', 'reviews:9080'], /not a version/],
    [
      ['explain', '2', '--version', '3', '--pod', POD, '--to', 'reviews:9080'],
      /give the VERSION argument or --version, not both/,
    ],
    [
      ['explain', '--version', '2', '--across', '1..3', '--pod', POD, '--to', 'reviews:9080'],
      /give VERSION or --across, not both/,
    ],
  ];
  for (const [args, message] of cases) {
    const r = await cli(...args, '--store', STORE);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  const unknownPod = await cli('explain', '--pod', 'default/nope', '--to', 'reviews:9080', '--store', STORE);
  assert.equal(unknownPod.code, 1);
  assert.match(unknownPod.stderr, /pod default\/nope is not in this version's stored inputs/);
});

test('--across over a version where the pod is gone: that version answers no_proxy, the others as before', async () => {
  // Version 4: bookinfo without the productpage pod (its Deployment scaled to zero, say).
  const state = readFileSync(BOOKINFO_STATE, 'utf8')
    .split(/^---$/m)
    .filter((doc) => !/name: productpage-v1-5f6d7c8b9-abcde/.test(doc))
    .join('---');
  const stateFile = join(tmp, 'state-without-productpage.yaml');
  writeFileSync(stateFile, state);
  const r = await cli(
    'compile',
    stateFile,
    join(NET, 'destination-rule-all.yaml'),
    join(NET, 'virtual-service-reviews-v3.yaml'),
    '--store',
    STORE,
    '--quiet',
    '--allow-shrink',
  );
  assert.equal(r.code, 0, r.stderr);
  const a = bin('explain', ...JASON, '--across', '3..4', '--store', STORE);
  assert.equal(a.code, 0, a.stderr);
  const answer = JSON.parse(a.stdout) as {
    versions: { version: string; outcome: string; summary: string }[];
    changes: { parts: Record<string, { before: string; after: string }> }[];
  };
  assert.deepEqual(
    answer.versions.map((v) => [v.version, v.outcome]),
    [
      ['3', 'routed'],
      ['4', 'no_proxy'],
    ],
  );
  assert.match(
    answer.versions[1]?.summary ?? '',
    /pod default\/productpage-v1-5f6d7c8b9-abcde is not in this version's stored inputs/,
  );
  assert.deepEqual(answer.changes[0]?.parts.outcome, { before: 'routed', after: 'no_proxy' });
  // Asked of version 4 alone, it is a not-found (exit 1), as for any unknown pod.
  const alone = await cli('explain', '4', ...JASON, '--store', STORE);
  assert.equal(alone.code, 1);
});
