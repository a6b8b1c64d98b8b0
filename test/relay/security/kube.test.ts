/**
 * Service-account tokens and Secrets with Kubernetes:
 * - always: TokenReview and issuer discovery through a fake API server (request shapes, results);
 * - with a real kube-apiserver (`../shared/tools/kube-local/up.sh`; $MESHSNAP_REAL_KUBECONFIG,
 *   $KUBECONFIG or ~/.cache/kube-local/kubeconfig): tokens minted by TokenRequest are accepted by TokenReview and
 *   by the JWKS check, wrong-audience and expired ones refused, the SubjectAccessReview answers per
 *   RBAC, and a relay started from `meshsnap relay`'s flags serves a gateway its Secret over SDS and
 *   pushes the Secret's update. Skipped, saying why, when no API server answers.
 */
import { bearerTlsClient } from './bearer-client.js';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { relaySecurity } from '../../../src/cli/relay-security.js';
import { silentLogger } from '../../../src/relay/log.js';
import { startRelay } from '../../../src/relay/relay.js';
import { SECRET_TYPE_NAME, SECRET_TYPE_URL } from '../../../src/relay/sds/secret-material.js';
import { jwksAuthenticator } from '../../../src/relay/security/jwks.js';
import {
  kubeFetchJson,
  kubeJson,
  kubeSecretAccessReview,
  kubeTokenReviewer,
} from '../../../src/relay/security/kube-requests.js';
import { tokenReviewAuthenticator } from '../../../src/relay/security/token-review.js';
import { SDS_SERVICE } from '../../../src/relay/xds/services.js';
import { LocalStore } from '../../../src/snapshot/store/local.js';
import { decodeMessage } from '../../../src/xds/proto.js';
import { TestStream } from '../protocol-client.js';
import { publishSet, tempDir } from '../store-fixture.js';
import { makeCa } from './pki.js';

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'fake', server, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'relay-token' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'u' }],
    currentContext: 'fake',
  });
  return kc;
}

test('TokenReview and issuer discovery through a fake API server', { timeout: 20_000 }, async (t) => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const issuer = 'https://kubernetes.default.svc.cluster.local';
  const seen: { method: string; url: string; auth: string; body: unknown }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        auth: req.headers.authorization ?? '',
        body: body ? JSON.parse(body) : undefined,
      });
      const send = (o: unknown): void => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(o));
      };
      if (req.url === '/apis/authentication.k8s.io/v1/tokenreviews') {
        const token = (JSON.parse(body) as { spec: { token: string } }).spec.token;
        return send({
          kind: 'TokenReview',
          status:
            token === 'good'
              ? {
                  authenticated: true,
                  user: { username: 'system:serviceaccount:shop:gw', groups: ['system:serviceaccounts'] },
                  audiences: ['istio-ca'],
                }
              : { authenticated: false, error: 'invalid bearer token' },
        });
      }
      if (req.url === '/.well-known/openid-configuration')
        return send({ issuer, jwks_uri: `${issuer}/openid/v1/jwks` });
      if (req.url === '/openid/v1/jwks')
        return send({ keys: [{ ...rsa.publicKey.export({ format: 'jwk' }), kid: 'k' }] });
      res.writeHead(404);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const kc = kubeConfigFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);

  const review = tokenReviewAuthenticator({
    review: kubeTokenReviewer(kc),
    audiences: ['istio-ca'],
    trustDomain: 'td',
  });
  assert.deepEqual(await review.authenticate({ bearerToken: 'good' }), {
    identity: {
      principal: 'spiffe://td/ns/shop/sa/gw',
      namespace: 'shop',
      serviceAccount: 'gw',
      method: 'token-review',
    },
  });
  assert.match(
    ((await review.authenticate({ bearerToken: 'bad' })) as { error: string }).error,
    /returned an error: invalid bearer token/,
  );
  const posted = seen.find((s) => s.url.endsWith('/tokenreviews'));
  assert.deepEqual(posted?.body, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token: 'good', audiences: ['istio-ca'] },
  });
  assert.equal(
    posted?.auth,
    'Bearer relay-token',
    'the relay authenticates to the API server with its own credentials',
  );

  const now = Math.floor(Date.now() / 1000);
  const enc = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc({ alg: 'RS256', kid: 'k' })}.${enc({
    iss: issuer,
    aud: ['istio-ca'],
    exp: now + 600,
    'kubernetes.io': { namespace: 'shop', serviceaccount: { name: 'gw' } },
  })}`;
  const token = `${input}.${sign('sha256', Buffer.from(input), rsa.privateKey).toString('base64url')}`;
  const offline = jwksAuthenticator({
    issuer,
    fetchJson: kubeFetchJson(kc),
    audiences: ['istio-ca'],
    trustDomain: 'td',
  });
  assert.equal('identity' in (await offline.authenticate({ bearerToken: token })), true);
  assert.deepEqual(
    seen.filter((s) => s.method === 'GET').map((s) => s.url),
    ['/.well-known/openid-configuration', '/openid/v1/jwks'],
  );
});

// ------------------------------------------------------------------ the real API server

function realKubeconfig(): string | undefined {
  for (const f of [
    process.env.MESHSNAP_REAL_KUBECONFIG,
    process.env.KUBECONFIG,
    join(homedir(), '.cache', 'kube-local', 'kubeconfig'),
  ])
    if (f && existsSync(f)) return f;
  return undefined;
}

async function reachable(file: string | undefined): Promise<string | undefined> {
  if (!file)
    return 'no kubeconfig ($MESHSNAP_REAL_KUBECONFIG, $KUBECONFIG or ~/.cache/kube-local/kubeconfig); start one with ../shared/tools/kube-local/up.sh';
  try {
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    await kubeJson(kc, 'GET', '/version', undefined, 3000);
    return undefined;
  } catch (e) {
    return `the API server of ${file} does not answer: ${(e as Error).message}`;
  }
}

const kubeconfigFile = realKubeconfig();
const skip = await reachable(kubeconfigFile);
if (skip) process.stderr.write(`kube.test: skipping the real kube-apiserver tests: ${skip}\n`);

describe('with a real kube-apiserver', { skip: skip ?? false, timeout: 120_000 }, () => {
  const ns = `rid-${randomBytes(3).toString('hex')}`;
  const kubectl = (args: string[], input?: string): string =>
    execFileSync('kubectl', ['--kubeconfig', kubeconfigFile!, ...args], {
      encoding: 'utf8',
      timeout: 30_000,
      ...(input !== undefined ? { input } : {}),
    });
  const token = (sa: string, audience: string): string =>
    kubectl(['create', 'token', sa, '-n', ns, '--audience', audience, '--duration', '10m']).trim();
  const secretYaml = (crt: Buffer, key: Buffer): string =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'gw-cert', namespace: ns },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': crt.toString('base64'), 'tls.key': key.toString('base64') },
    });
  let kc: KubeConfig;
  const tmp = tempDir('meshsnap-kube-');
  const ca = makeCa(tmp.dir);

  before(() => {
    kc = new KubeConfig();
    kc.loadFromFile(kubeconfigFile!);
    kubectl(['create', 'namespace', ns]);
    kubectl(['create', 'serviceaccount', 'gw', '-n', ns]);
    kubectl(['create', 'serviceaccount', 'web', '-n', ns]);
    kubectl(['create', 'role', 'read-secrets', '-n', ns, '--verb=get,list,watch', '--resource=secrets']);
    kubectl(['create', 'rolebinding', 'gw-read-secrets', '-n', ns, '--role=read-secrets', `--serviceaccount=${ns}:gw`]);
  });

  after(() => {
    // No controllers run here: delete the objects one by one (a deleted namespace stays Terminating).
    for (const args of [
      ['delete', 'secret', 'gw-cert'],
      ['delete', 'rolebinding', 'gw-read-secrets'],
      ['delete', 'role', 'read-secrets'],
      ['delete', 'serviceaccount', 'gw', 'web'],
    ])
      try {
        kubectl([...args, '-n', ns, '--ignore-not-found', '--wait=false']);
      } catch {
        // best effort
      }
    try {
      kubectl(['delete', 'namespace', ns, '--wait=false']);
      // No namespace controller here either: clear the emptied namespace's finalizer, as it would.
      const finalized = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns }, spec: { finalizers: [] } };
      kubectl(['replace', '--raw', `/api/v1/namespaces/${ns}/finalize`, '-f', '-'], JSON.stringify(finalized));
    } catch {
      // best effort
    }
    tmp.remove();
  });

  test('TokenRequest tokens: TokenReview accepts the right audience, refuses another', async () => {
    const review = tokenReviewAuthenticator({
      review: kubeTokenReviewer(kc),
      audiences: ['istio-ca'],
      trustDomain: 'cluster.local',
    });
    assert.deepEqual(await review.authenticate({ bearerToken: token('gw', 'istio-ca') }), {
      identity: {
        principal: `spiffe://cluster.local/ns/${ns}/sa/gw`,
        namespace: ns,
        serviceAccount: 'gw',
        method: 'token-review',
      },
    });
    const wrong = await review.authenticate({ bearerToken: token('gw', 'some-api') });
    assert.equal('error' in wrong, true, JSON.stringify(wrong));
  });

  test('TokenRequest tokens offline against the cluster’s JWKS: accepted; expired and wrong audience refused', async () => {
    const discovery = (await kubeJson(kc, 'GET', '/.well-known/openid-configuration')) as { issuer: string };
    const good = token('web', 'istio-ca');
    const offline = (nowMs = Date.now()) =>
      jwksAuthenticator({
        issuer: discovery.issuer,
        fetchJson: kubeFetchJson(kc),
        audiences: ['istio-ca'],
        trustDomain: 'cluster.local',
        now: () => nowMs,
      });
    assert.deepEqual(await offline().authenticate({ bearerToken: good }), {
      identity: {
        principal: `spiffe://cluster.local/ns/${ns}/sa/web`,
        namespace: ns,
        serviceAccount: 'web',
        method: 'jwks',
      },
    });
    assert.match(
      ((await offline(Date.now() + 3_600_000).authenticate({ bearerToken: good })) as { error: string }).error,
      /expired/,
    );
    assert.match(
      ((await offline().authenticate({ bearerToken: token('web', 'other') })) as { error: string }).error,
      /audience/,
    );
  });

  test('SubjectAccessReview answers per RBAC: the gateway may read Secrets, the sidecar may not', async () => {
    const access = kubeSecretAccessReview(kc);
    assert.equal(await access(ns, 'gw'), true);
    assert.equal(await access(ns, 'web'), false);
  });

  test('meshsnap relay --kube: the gateway gets its Secret over SDS, an update is pushed, the sidecar gets no key', async (t) => {
    const a = ca.issue('gw-a', { dns: ['gw.example.com'] });
    const b = ca.issue('gw-b', { dns: ['gw.example.com'] });
    kubectl(['apply', '-f', '-'], secretYaml(a.cert, a.key));
    const server = ca.issue('relay', { dns: ['localhost'], ip: ['127.0.0.1'] });
    const store = new LocalStore(join(tmp.dir, 'store'));
    await publishSet(store, 'base');
    const { security, secrets } = await relaySecurity(
      { 'tls-cert': server.certFile, 'tls-key': server.keyFile, kubeconfig: kubeconfigFile, 'secret-namespace': [ns] },
      silentLogger,
      {},
    );
    const relay = await startRelay({
      store,
      host: '127.0.0.1',
      port: 0,
      httpPort: 0,
      log: silentLogger,
      security,
      ...(secrets ? { secrets } : {}),
    });
    t.after(() => relay.close());
    const open = (bearer: string, nodeId: string): TestStream => {
      const client = bearerTlsClient(relay.port, ca.cert, bearer);
      t.after(() => client.close());
      const s = new TestStream(client, `/${SDS_SERVICE}/StreamSecrets`, false);
      t.after(() => s.close());
      s.send({
        node: { id: nodeId, metadata: { fields: { NAMESPACE: { stringValue: ns } } } },
        type_url: SECRET_TYPE_URL,
        resource_names: ['kubernetes://gw-cert'],
      });
      return s;
    };
    const chain = (r: { resources: { value?: Uint8Array }[] }): string | undefined => {
      const v = r.resources[0]?.value;
      if (!v) return undefined;
      const s = decodeMessage(SECRET_TYPE_NAME, v) as {
        tls_certificate?: { certificate_chain?: { inline_bytes?: Uint8Array } };
      };
      return Buffer.from(s.tls_certificate?.certificate_chain?.inline_bytes ?? []).toString();
    };
    const gw = open(token('gw', 'istio-ca'), `router~10.1.0.5~gw-1.${ns}~${ns}.svc.cluster.local`);
    // The namespace's informer starts with the first request: the first answer may precede its list.
    let r = await gw.next(10_000);
    while (chain(r) !== a.cert.toString()) r = await gw.next(10_000);
    gw.send({
      type_url: SECRET_TYPE_URL,
      resource_names: ['kubernetes://gw-cert'],
      response_nonce: r.nonce,
      version_info: r.version_info,
    });
    kubectl(['apply', '-f', '-'], secretYaml(b.cert, b.key));
    let pushed = await gw.next(10_000);
    while (chain(pushed) !== b.cert.toString()) pushed = await gw.next(10_000);
    assert.notEqual(pushed.version_info, r.version_info);

    const web = open(token('web', 'istio-ca'), `sidecar~10.1.0.6~web-1.${ns}~${ns}.svc.cluster.local`);
    const none = await web.next(10_000);
    assert.equal(none.resources.length, 0, 'no right to read Secrets (SubjectAccessReview): no key');
  });
});
