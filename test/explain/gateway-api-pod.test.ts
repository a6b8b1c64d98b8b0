/**
 * `meshsnap explain --pod` on a Gateway API gateway's pod (labelled
 * `gateway.networking.k8s.io/gateway-name`): it announces itself as a router, lands in its router
 * class and is routed by the HTTPRoutes attached to its Gateway (the gateway-api-helloworld golden's inputs).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { BIN, BOOKINFO_STATE, ISTIO_SAMPLES, REPO } from '../helpers/paths.js';

const tmp = mkdtempSync(join(tmpdir(), 'meshsnap-gwapi-explain-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const STORE = join(tmp, 'store');
const CASE = join(REPO, 'test', 'golden', 'gateway-api-helloworld');
const HELLO = join(ISTIO_SAMPLES, 'helloworld');

function bin(...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 90_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

test('explain --pod on a Gateway API gateway pod: a router of its Gateway, routed by its HTTPRoutes', () => {
  const compiled = bin(
    'compile',
    BOOKINFO_STATE,
    join(HELLO, 'helloworld.yaml'),
    join(HELLO, 'gateway-api', 'helloworld-gateway.yaml'),
    join(HELLO, 'gateway-api', 'helloworld-versions.yaml'),
    join(CASE, 'gateway-deployment.yaml'),
    join(CASE, 'routes.yaml'),
    '--store',
    STORE,
    '--quiet',
  );
  assert.equal(compiled.code, 0, compiled.stderr);
  const r = bin(
    'explain',
    '--pod',
    'default/helloworld-gateway-istio-0',
    '--to',
    'split.example.com:80',
    '--path',
    '/hello/x',
    '--store',
    STORE,
  );
  assert.equal(r.code, 0, r.stderr);
  const answer = JSON.parse(r.stdout) as {
    node: { id: string };
    outcome: string;
    route?: { name?: string };
    clusters: { name: string; weight: number }[];
  };
  assert.match(answer.node.id, /^router~10\.244\.0\.30~helloworld-gateway-istio-0\.default~/);
  assert.equal(answer.outcome, 'routed');
  assert.equal(answer.route?.name, 'default.helloworld-split.0');
  assert.deepEqual(
    answer.clusters.map((c) => [c.name, c.weight]),
    [
      ['outbound|5000||helloworld-v1.default.svc.cluster.local', 90],
      ['outbound|5000||helloworld-v2.default.svc.cluster.local', 10],
    ],
  );
});
