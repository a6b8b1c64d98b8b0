/**
 * The CLI contract: --version, --help generated from each command's option table (the same table
 * parseArgs uses), the README's CLI reference naming exactly those flags, usage errors exit 2 naming
 * the flag, read commands refusing a store that does not exist, and show/diff naming the class
 * they chose. Most checks call main() in-process (stderr captured); stdout checks spawn the binary.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { groupAcksPerPush } from '../../src/history/audit-groups.js';
import type { TrailEvent } from '../../src/history/audit.js';
import { helpText, usageLine } from '../../src/cli/args.js';
import { loadKubeConfig } from '../../src/cli/kubeconfig.js';
import { COMMANDS, main, versionText } from '../../src/cli/main.js';
import { BIN, EXAMPLES, REPO } from '../helpers/paths.js';

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-contract-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const STORE = join(tmp, 'store');
const MISSING = join(tmp, 'no-such-store');
const WEB = 'sidecar~10.244.1.10~web-v1-6c9f7d8b5-k2x7p.shop~shop.svc.cluster.local';
const WEB_METADATA = JSON.stringify({ NAMESPACE: 'shop', LABELS: { app: 'web', version: 'v1' } });

/** main() in this process; stderr captured (stdout is left alone: the test runner reports through it). */
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
  const r = await cli('compile', join(EXAMPLES, 'bookstore'), '--store', STORE, '--quiet');
  assert.equal(r.code, 0, r.stderr);
});

test('--version names the package and the compiler version', () => {
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
  assert.match(
    versionText(),
    new RegExp(`^meshsnap ${pkg.version.replace(/\./g, '\\.')} \\(compiler meshsnap \\d+\\.\\d+\\.\\d+\\)$`),
  );
  const r = bin('--version');
  assert.equal(r.code, 0);
  assert.equal(r.stdout.trim(), versionText());
});

test('every command’s --help lists each flag of its option table with a line of text, and examples', () => {
  for (const { spec } of COMMANDS) {
    const text = helpText(spec);
    assert.ok(text.startsWith(`usage: ${usageLine(spec)}\n`), spec.name);
    for (const [name, flag] of Object.entries(spec.options)) {
      assert.ok(flag.help.length > 5, `${spec.name} --${name} has help text`);
      assert.match(
        text,
        new RegExp(
          `\\n  (-\\w, )?--${name}\\b[^\\n]*  ${flag.help.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
        ),
        `${spec.name} --${name}`,
      );
      assert.ok(usageLine(spec).includes(`--${name}`), `${spec.name} usage names --${name}`);
    }
    assert.ok(spec.examples.length > 0, `${spec.name} has an example`);
    for (const e of spec.examples) assert.ok(e.includes(`meshsnap ${spec.name}`), `${spec.name} example: ${e}`);
  }
  const viaFlag = bin('log', '--help');
  const viaHelp = bin('help', 'log');
  assert.equal(viaFlag.code, 0);
  assert.equal(viaFlag.stdout, viaHelp.stdout);
  assert.match(viaFlag.stdout, /--limit N +print at most N versions/);
  assert.match(viaFlag.stdout, /examples:\n {2}meshsnap log/);
});

test('the README’s CLI reference has one row per command, naming exactly the flags of its option table', () => {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## CLI reference'), readme.indexOf('### Node ids and proxy classes'));
  const rows = section.split('\n').filter((l) => l.startsWith('| `meshsnap '));
  for (const { spec } of COMMANDS) {
    const row = rows.find(
      (r) => r.startsWith(`| \`meshsnap ${spec.name} `) || r.startsWith(`| \`meshsnap ${spec.name}\``),
    );
    assert.ok(row, `README row for ${spec.name}`);
    const cell = (row.split('` |')[0] as string).slice(3).replace(/\\\|/g, '|');
    assert.equal(cell, usageLine(spec), `README usage of ${spec.name} is the --help usage line`);
  }
});

test('usage errors exit 2 and name the flag', async () => {
  const cases: [string[], RegExp][] = [
    [['log', '--limit', 'abc', '--store', STORE], /--limit: not a number: "abc"/],
    [['log', '--limit', '0', '--store', STORE], /--limit: 0 is out of range 1\.\./],
    [['log', '--limit', '1.5', '--store', STORE], /--limit/],
    [['tag', '1', 'bad name!', '--store', STORE], /NAME: bad tag name "bad name!"/],
    [['tag', '1', '--store', STORE], /tag needs VERSION and NAME/],
    [['bootstrap', '--node', 'garbage'], /--node: malformed node id "garbage"/],
    [['bootstrap'], /--node is required/],
    [['diff', '1', '1', '--metadata', '{}', '--store', STORE], /--metadata needs --node/],
    [['rollback', '1', '--store', STORE], /--reason is required/],
    [['pin', '--store', STORE], /--reason is required/],
    [['promote', 'candidate:1', '--store', STORE], /--reason is required/],
    [['serve', '--http-port', '70000', '--no-watch'], /--http-port: 70000 is out of range 0\.\.65535/],
    [['watch', '--debounce-ms=-1'], /--debounce-ms: -1 is out of range/],
    [['relay', '--poll-ms', '5'], /--poll-ms: 5 is out of range 10\.\.3600000/],
  ];
  for (const [args, message] of cases) {
    const r = await cli(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.match(r.stderr, new RegExp(`usage: meshsnap ${args[0]} `), args.join(' '));
  }
});

test('read commands refuse a store folder that does not exist (exit 2), naming it', async () => {
  for (const args of [
    ['log'],
    ['show', '--node', WEB],
    ['diff', '1', '2'],
    ['diagnostics'],
    ['verify'],
    ['audit'],
    ['tag'],
  ]) {
    const r = await cli(...args, '--store', MISSING);
    assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
    assert.match(
      r.stderr,
      new RegExp(`no store at ${MISSING.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(--store\\)`),
      args[0],
    );
    assert.doesNotMatch(r.stderr, /has no versions yet/);
  }
});

test('tag --delete of a tag that does not exist: exit 1 with a message', async () => {
  const r = await cli('tag', '--delete', 'nosuch', '--store', STORE);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /channel main has no tag "nosuch"/);
});

test('show names the class it chose in its JSON and warns when it fell back to sidecar/<ns>/_', () => {
  const exact = bin(
    'show',
    'latest',
    '--node',
    WEB,
    '--metadata',
    WEB_METADATA,
    '--type',
    'listeners',
    '--store',
    STORE,
  );
  assert.equal(exact.code, 0, exact.stderr);
  const dump = JSON.parse(exact.stdout) as { class: string; configs: unknown[] };
  assert.match(dump.class, /^sidecar\/shop\/.*web/);
  assert.ok(Array.isArray(dump.configs));
  assert.doesNotMatch(exact.stderr, /warning/);

  const fallback = bin('show', 'latest', '--node', WEB, '--type', 'listeners', '--store', STORE);
  assert.equal(fallback.code, 0, fallback.stderr);
  assert.equal((JSON.parse(fallback.stdout) as { class: string }).class, 'sidecar/shop/_');
  assert.match(
    fallback.stderr,
    /warning: node .* got the namespace's selector-less class sidecar\/shop\/_ \(no --metadata LABELS were given\)/,
  );
});

test('diff --node names the class in each version (JSON `node`) and warns on the fallback', () => {
  const r = bin('diff', '1', 'latest', '--node', WEB, '--json', '--store', STORE);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout) as { node: { id: string; classFrom: string; classTo: string } };
  assert.deepEqual(d.node, { id: WEB, classFrom: 'sidecar/shop/_', classTo: 'sidecar/shop/_' });
  assert.match(r.stderr, /warning: .*sidecar\/shop\/_/);
  const text = bin('diff', '1', 'latest', '--node', WEB, '--metadata', WEB_METADATA, '--store', STORE);
  assert.match(text.stdout.split('\n')[0] as string, /^node sidecar~.*: class sidecar\/shop\/.*web/);
});

test('demo --channel: the suggested show names the channel and store; every endpoint set of the sidecar is listed', () => {
  const store = join(tmp, 'demo-store');
  const r = bin('demo', '--store', store, '--channel', 'demo');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /show latest --node '.*' --metadata '.*' --store \S+ --channel demo/);
  const shown = bin(
    'show',
    'latest',
    '--node',
    WEB,
    '--metadata',
    JSON.stringify({
      NAMESPACE: 'shop',
      LABELS: { app: 'web', version: 'v1', 'security.istio.io/tlsMode': 'istio' },
      INSTANCE_IPS: '10.244.1.10',
      NODE_NAME: 'node-a',
    }),
    '--type',
    'endpoints',
    '--store',
    store,
    '--channel',
    'demo',
  );
  const sets = (
    (JSON.parse(shown.stdout) as { configs: { dynamic_endpoint_configs: unknown[] }[] }).configs[0]
      ?.dynamic_endpoint_configs ?? []
  ).length;
  assert.ok(sets > 0);
  assert.match(r.stdout, new RegExp(`\\nEndpoints \\(${sets}\\):\\n`));
  const listed =
    r.stdout
      .split('\nEndpoints')[1]
      ?.split('\n\n')[0]
      ?.split('\n')
      .filter((l) => l.startsWith('  ')) ?? [];
  assert.equal(listed.length, sets);
  // Its node's zone first: catalog's rule has outlier detection (the default mesh localityLbSetting applies).
  assert.match(r.stdout, /class sidecar\/shop\/web\S*@eu-west1\/eu-west1-b\//);
  assert.match(
    r.stdout,
    /outbound\|9080\|\|catalog\.shop\.svc\.cluster\.local: .*\(eu-west1-b\); .*\(eu-west1-c, priority 1\)/,
  );
});

test('audit text: one line per push (ACKs of one proxy and version grouped), candidates named candidate:N', async () => {
  const at = (s: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, s)).toISOString();
  const ack = (s: number, type: string, version = 3, nodeId = 'n1'): TrailEvent => ({
    at: at(s),
    kind: 'ack',
    channel: 'main',
    version,
    relay: 'r',
    nodeId,
    typeUrl: `type.googleapis.com/envoy.${type}`,
  });
  const grouped = groupAcksPerPush([
    ack(1, 'Cluster'),
    ack(1, 'Cluster', 3, 'n2'),
    ack(2, 'ClusterLoadAssignment'),
    ack(3, 'Listener'),
    { at: at(4), kind: 'disconnect', channel: 'main', relay: 'r', nodeId: 'n1' },
    ack(5, 'Cluster'),
    ack(6, 'Cluster', 4),
  ]);
  assert.deepEqual(
    grouped.map((e) => [e.kind, e.nodeId, e.version, e.typeUrls?.map((u) => u.replace(/^.*\./, ''))]),
    [
      ['ack', 'n1', 3, ['Cluster', 'ClusterLoadAssignment', 'Listener']],
      ['ack', 'n2', 3, ['Cluster']],
      ['disconnect', 'n1', undefined, undefined],
      ['ack', 'n1', 3, ['Cluster']],
      ['ack', 'n1', 4, ['Cluster']],
    ],
  );

  const store = join(tmp, 'audit-store');
  assert.equal((await cli('compile', join(EXAMPLES, 'bookstore'), '--store', store, '--quiet')).code, 0);
  assert.equal((await cli('pin', '--store', store, '--reason', 'freeze')).code, 0);
  const changed = join(EXAMPLES, 'bookstore');
  const c = await cli(
    'compile',
    changed,
    join(REPO, '..', 'shared', 'fixtures', 'derived', 'bookinfo-cluster-state.yaml'),
    '--store',
    store,
    '--quiet',
  );
  assert.equal(c.code, 0, c.stderr);
  const r = bin('audit', '--store', store);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, / candidate +candidate:1 /);
  assert.doesNotMatch(r.stdout, /vcandidate/);
});

test('kubeconfig: nothing found is one error listing where it looked', () => {
  const where = { env: { KUBECONFIG: '/nope/a:/nope/b' }, home: '/home/x', exists: () => false };
  assert.throws(
    () => loadKubeConfig(undefined, undefined, 'hint: use --no-watch', where),
    (err: Error) => {
      assert.equal(err.name, 'UsageError');
      assert.match(err.message, /--kubeconfig: not given/);
      assert.match(err.message, /\$KUBECONFIG: none of \/nope\/a, \/nope\/b exists/);
      assert.match(err.message, /\/home\/x\/\.kube\/config: no such file/);
      assert.match(err.message, /in-cluster: \$KUBERNETES_SERVICE_HOST is not set/);
      assert.match(err.message, /hint: use --no-watch$/);
      return true;
    },
  );
  assert.throws(() => loadKubeConfig('/nope/file', undefined, '', where), /--kubeconfig \/nope\/file: no such file/);
});
