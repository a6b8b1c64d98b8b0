/** `meshsnap serve` as a child process: the API answers, the relay's ports are open, SIGTERM exits 0. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { assertLogLines } from '../helpers/log-shape.js';

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

test('serve --no-watch: API and page, relay xDS and relay HTTP on port 0, then a clean SIGTERM', { timeout: 60_000 }, async () => {
  const args = ['serve', '--no-watch', '--store', join(tmp, 'store'), '--host', '127.0.0.1', '--http-port', '0', '--relay-port', '0', '--relay-http-port', '0'];
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
    assert.deepEqual(((await channels.json()) as { channels: { name: string }[] }).channels.map((c) => c.name), ['main']);
    const denied = await fetch(`http://127.0.0.1:${api}/api/v1/channels/main/pin`, { method: 'POST', body: '{"reason":"x"}' });
    assert.equal(denied.status, 401);
    await denied.body?.cancel();
    const compiled = await fetch(`http://127.0.0.1:${api}/api/v1/channels/main/compile`, {
      method: 'POST',
      headers: { authorization: 'Bearer smoke-token', 'content-type': 'application/json' },
      body: JSON.stringify({ files: [{ file: 'svc.yaml', text: 'apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\nspec:\n  clusterIP: 10.0.0.9\n  selector: {app: web}\n  ports: [{name: http, port: 80}]\n' }] }),
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
  for (const e of ['serve.listening', 'relay.listening', 'serve.stopping', 'relay.closed']) assert.ok(events.includes(e), `${e} in ${events.join(', ')}`);
});
