/**
 * `meshsnap serve` as a child process: the API answers, the relay's ports are open, SIGTERM exits 0
 * (also while the watcher cannot reach its cluster), and a missing kubeconfig is one clear error.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { assertLogLines } from '../helpers/log-shape.js';
import { startFakeApiServer, until } from '../helpers/fake-apiserver.js';
import { kubeconfigText } from '../helpers/fake-apiserver/kubeconfig.js';

const MAIN = new URL('../../src/cli/main.js', import.meta.url).href;

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-serve-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });

test(
  'serve --no-watch: API and page, relay xDS and relay HTTP on port 0, then a clean SIGTERM',
  { timeout: 60_000 },
  async () => {
    const args = [
      'serve',
      '--no-watch',
      '--store',
      join(tmp, 'store'),
      '--host',
      '127.0.0.1',
      '--http-port',
      '0',
      '--relay-port',
      '0',
      '--relay-http-port',
      '0',
    ];
    // The CLI of the build this test belongs to (bin/meshsnap.js would run dist/, maybe another build).
    const script = `import { main } from ${JSON.stringify(MAIN)}; process.exitCode = await main(JSON.parse(process.env.MESHSNAP_TEST_ARGS));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, MESHSNAP_API_TOKEN: 'smoke-token', MESHSNAP_TEST_ARGS: JSON.stringify(args) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no serve.listening line: ${stderr}`)), 30_000);
        child.stderr.on('data', (b: Buffer) => {
          stderr += b.toString();
          for (const line of stderr.split('\n')) {
            if (!line.includes('serve.listening')) continue;
            clearTimeout(timer);
            resolve(JSON.parse(line) as Record<string, unknown>);
          }
        });
        child.on('exit', () => reject(new Error(`exited early: ${stderr}`)));
      });
      const api = listening.api as number;
      assert.ok(api > 0);
      assert.ok(await portOpen(listening.relay as number), 'relay xDS port open');
      assert.ok(await portOpen(listening.relayHttp as number), 'relay HTTP port open');

      const page = await fetch(`http://127.0.0.1:${api}/`);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type') ?? '', /text\/html/);
      await page.body?.cancel();
      const channels = await fetch(`http://127.0.0.1:${api}/api/v1/channels`);
      assert.equal(channels.status, 200);
      assert.deepEqual(
        ((await channels.json()) as { channels: { name: string }[] }).channels.map((c) => c.name),
        ['main'],
      );
      const denied = await fetch(`http://127.0.0.1:${api}/api/v1/channels/main/pin`, {
        method: 'POST',
        body: '{"reason":"x"}',
      });
      assert.equal(denied.status, 401);
      await denied.body?.cancel();
      const compiled = await fetch(`http://127.0.0.1:${api}/api/v1/channels/main/compile`, {
        method: 'POST',
        headers: { authorization: 'Bearer smoke-token', 'content-type': 'application/json' },
        body: JSON.stringify({
          files: [
            {
              file: 'svc.yaml',
              text: 'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  clusterIP: 10.0.0.9\n  selector: {app: web}\n  ports: [{name: http, port: 80}]\n',
            },
          ],
        }),
      });
      assert.equal(compiled.status, 201, await compiled.clone().text());
      assert.equal(((await compiled.json()) as { version: number }).version, 1);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
    assert.match(stderr, /serve\.stopping/);
    // One log shape, no plain-text line among the JSON ones.
    const events = assertLogLines(stderr).map((l) => l.event);
    for (const e of ['serve.listening', 'relay.listening', 'serve.stopping', 'relay.closed'])
      assert.ok(events.includes(e), `${e} in ${events.join(', ')}`);
  },
);

/** Starts `meshsnap serve` (the build this test belongs to) with `env` replacing the kube-related variables. */
function serve(args: readonly string[], env: Record<string, string | undefined>) {
  const script = `import { main } from ${JSON.stringify(MAIN)}; process.exitCode = await main(JSON.parse(process.env.MESHSNAP_TEST_ARGS));`;
  const base = { ...process.env };
  for (const k of ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT']) delete base[k];
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: {
      ...base,
      HOME: join(tmp, 'home'),
      MESHSNAP_API_TOKEN: 'smoke-token',
      MESHSNAP_TEST_ARGS: JSON.stringify(args),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  /** The first stderr JSON line whose event is `name`. */
  const line = (name: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${name} line: ${stderr}`)), 30_000);
      const check = (): void => {
        const found = stderr.split('\n').find((l) => l.includes(`"${name}"`));
        if (!found) return;
        clearTimeout(timer);
        resolve(JSON.parse(found) as Record<string, unknown>);
      };
      child.stderr.on('data', check);
      check();
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`exited before ${name}: ${stderr}`));
      });
    });
  return { child, exited, line, stderr: () => stderr };
}

const portArgs = (store: string) => [
  '--store',
  join(tmp, store),
  '--host',
  '127.0.0.1',
  '--http-port',
  '0',
  '--relay-port',
  '0',
  '--relay-http-port',
  '0',
];

test(
  'serve with a cluster that does not answer: ports announced and the API answers at once; SIGTERM drains and exits 0',
  { timeout: 60_000 },
  async () => {
    const kubeconfig = join(tmp, 'unreachable.kubeconfig');
    writeFileSync(kubeconfig, kubeconfigText('http://127.0.0.1:1')); // nothing listens on port 1
    const s = serve(['serve', ...portArgs('store-unreachable'), '--kubeconfig', kubeconfig], {});
    try {
      const listening = await s.line('serve.listening');
      assert.equal(listening.watch, true);
      const res = await fetch(`http://127.0.0.1:${listening.api as number}/api/v1/channels`);
      assert.equal(res.status, 200);
      await res.body?.cancel();
    } finally {
      s.child.kill('SIGTERM');
    }
    assert.equal(await s.exited, 0, s.stderr());
    assert.match(s.stderr(), /serve\.stopping/);
  },
);

test(
  'serve watching the fake API server: listening, then SIGTERM drains and exits 0',
  { timeout: 60_000 },
  async (t) => {
    const api = await startFakeApiServer();
    t.after(() => api.close());
    const kubeconfig = join(tmp, 'fake.kubeconfig');
    writeFileSync(kubeconfig, api.kubeconfig());
    const s = serve(['serve', ...portArgs('store-fake'), '--kubeconfig', kubeconfig], {});
    try {
      const listening = await s.line('serve.listening');
      assert.equal(listening.watch, true);
      await until(() => api.requests.some((r) => r.watch), 30_000, 'a watch request from serve'); // the watcher reached the cluster
    } finally {
      s.child.kill('SIGTERM');
    }
    assert.equal(await s.exited, 0, s.stderr());
    assert.match(s.stderr(), /relay\.closed/);
  },
);

test(
  'serve without any kubeconfig: one error naming where it looked, exit 2; --no-watch needs none',
  { timeout: 60_000 },
  async () => {
    const s = serve(['serve', ...portArgs('store-nokube')], {});
    assert.equal(await s.exited, 2, s.stderr());
    const err = s.stderr();
    assert.match(err, /no usable kubeconfig/);
    assert.match(err, /--kubeconfig: not given/);
    assert.match(err, /\$KUBECONFIG: not set/);
    assert.match(err, /\.kube\/config: no such file/);
    assert.match(err, /in-cluster: \$KUBERNETES_SERVICE_HOST is not set/);
    assert.match(err, /--no-watch/);
    assert.doesNotMatch(err, /skipTLSVerify/);

    const plain = join(tmp, 'plain-http.kubeconfig');
    writeFileSync(
      plain,
      kubeconfigText('http://127.0.0.1:1').replace(
        '"insecure-skip-tls-verify": true',
        '"insecure-skip-tls-verify": false',
      ),
    );
    const http = serve(['serve', ...portArgs('store-plain'), '--kubeconfig', plain], {});
    assert.equal(await http.exited, 2, http.stderr());
    assert.match(http.stderr(), /plain HTTP \(http:\/\/127\.0\.0\.1:1\)/);
  },
);

test(
  'watch: watch.http_listening with its HTTP port before the cluster answers; SIGTERM exits 0',
  { timeout: 60_000 },
  async (t) => {
    const api = await startFakeApiServer();
    t.after(() => api.close());
    const kubeconfig = join(tmp, 'watch.kubeconfig');
    writeFileSync(kubeconfig, api.kubeconfig());
    api.delay(1000, '/api/v1'); // discovery and lists are slow: the port is announced first anyway
    const w = serve(['watch', '--kubeconfig', kubeconfig, '--store', join(tmp, 'store-watch'), '--http-port', '0'], {});
    try {
      const listening = await w.line('watch.http_listening');
      const health = await fetch(`http://127.0.0.1:${listening.port as number}/healthz`);
      assert.equal(health.status, 200);
      await health.body?.cancel();
    } finally {
      w.child.kill('SIGTERM');
    }
    assert.equal(await w.exited, 0, w.stderr());
  },
);
