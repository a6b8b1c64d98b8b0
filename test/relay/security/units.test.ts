/**
 * The relay's security pieces without a network: SPIFFE parsing, node authorization, token review
 * results and their cache, offline JWT verification against a JWKS, SDS names and Secret material.
 * Cases marked "istiod" are ported from istio/istio's own tests.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { test } from 'node:test';
import { decodeMessage } from '../../../src/xds/proto.js';
import { authenticate, bearerTokenOf, type Authenticator } from '../../../src/relay/security/authenticate.js';
import { checkNodeIdentity } from '../../../src/relay/security/authorize.js';
import { parseSpiffe, type ProxyIdentity } from '../../../src/relay/security/identity.js';
import { jwksAuthenticator } from '../../../src/relay/security/jwks.js';
import { mtlsAuthenticator, uriSans } from '../../../src/relay/security/mtls.js';
import { attemptOf, tokenReviewAuthenticator } from '../../../src/relay/security/token-review.js';
import { caSecret, SECRET_TYPE_NAME, tlsCertificateSecret } from '../../../src/relay/sds/secret-material.js';
import { parseSecretName } from '../../../src/relay/sds/secret-name.js';
import { SecretResolver } from '../../../src/relay/sds/secret-resolver.js';
import { MemorySecretSource } from '../../../src/relay/sds/secret-source.js';

test('parseSpiffe: istiod ParseIdentity cases (empty namespace or account refused here)', () => {
  assert.deepEqual(parseSpiffe('spiffe://td/ns/ns/sa/sa'), {
    trustDomain: 'td',
    namespace: 'ns',
    serviceAccount: 'sa',
  });
  for (const bad of [
    'td/ns/ns/sa/sa',
    'spiffe://td/ns/ns/sa',
    'spiffe://td/ns/ns/sa/sa/',
    'spiffe://td/foobar/ns/sa/sa',
    'spiffe://td/ns/ns/foobar/sa',
    'spiffe://td/ns//sa/',
  ])
    assert.equal(parseSpiffe(bad), undefined, bad);
});

test('uriSans reads Node subjectaltname text, quoted entries included; mTLS picks the SPIFFE one', async () => {
  assert.deepEqual(uriSans('DNS:a.example, URI:spiffe://cluster.local/ns/shop/sa/web, IP Address:10.0.0.1'), [
    'spiffe://cluster.local/ns/shop/sa/web',
  ]);
  assert.deepEqual(uriSans('URI:"spiffe://td/ns/a,b/sa/c"'), ['spiffe://td/ns/a,b/sa/c']);
  const ok = await mtlsAuthenticator.authenticate({ peerSubjectAltName: 'DNS:x, URI:spiffe://td/ns/shop/sa/web' });
  assert.deepEqual(ok, {
    identity: { principal: 'spiffe://td/ns/shop/sa/web', namespace: 'shop', serviceAccount: 'web', method: 'mtls' },
  });
  const noSpiffe = await mtlsAuthenticator.authenticate({ peerSubjectAltName: 'DNS:x' });
  assert.match((noSpiffe as { error: string }).error, /no spiffe:.* URI SAN \(found: none\)/);
  assert.deepEqual(await mtlsAuthenticator.authenticate({}), { absent: true });
});

const ID: ProxyIdentity = {
  principal: 'spiffe://cluster.local/ns/shop/sa/web',
  namespace: 'shop',
  serviceAccount: 'web',
  method: 'mtls',
};

test('checkNodeIdentity: every namespace the node names, and SERVICE_ACCOUNT, must be the identity’s', () => {
  const good = 'sidecar~10.0.0.1~web-1.shop~shop.svc.cluster.local';
  assert.deepEqual(checkNodeIdentity(good, { NAMESPACE: 'shop' }, ID), { ok: true });
  assert.deepEqual(checkNodeIdentity(good, { NAMESPACE: 'shop', SERVICE_ACCOUNT: 'web' }, ID), { ok: true });
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['sidecar~10.0.0.1~web-1.bank~bank.svc.cluster.local', {}, /claims namespace "bank" \(node id pod\)/],
    [good, { NAMESPACE: 'bank' }, /claims namespace "bank" \(metadata NAMESPACE\)/],
    ['sidecar~10.0.0.1~web-1.shop~bank.svc.cluster.local', {}, /node id DNS domain/],
    [good, { SERVICE_ACCOUNT: 'admin' }, /claims service account "admin"/],
    ['router~10.0.0.1~gw~', {}, /names no namespace/],
  ];
  for (const [id, md, reason] of cases) {
    const r = checkNodeIdentity(id, md, ID);
    assert.equal(r.ok, false, id);
    assert.match((r as { reason: string }).reason, reason);
    assert.match((r as { reason: string }).reason, /spiffe:\/\/cluster\.local\/ns\/shop\/sa\/web/);
  }
});

test('authenticate: first identity wins; a presented bad credential is refused even when anonymous is allowed', async () => {
  const fixed = (name: string, r: Awaited<ReturnType<Authenticator['authenticate']>>): Authenticator => ({
    name,
    authenticate: () => Promise.resolve(r),
  });
  assert.deepEqual(await authenticate([fixed('a', { absent: true }), fixed('b', { identity: ID })], {}, false), {
    kind: 'authenticated',
    identity: ID,
  });
  assert.deepEqual(await authenticate([fixed('a', { absent: true })], {}, true), { kind: 'anonymous' });
  const none = await authenticate([fixed('a', { absent: true })], {}, false);
  assert.equal(none.kind, 'refused');
  assert.match((none as { reason: string }).reason, /no credentials/);
  const bad = await authenticate([fixed('a', { error: 'expired' })], {}, true);
  assert.deepEqual(bad, { kind: 'refused', reason: 'authentication failed: a: expired' });
  const down: Authenticator = { name: 'r', authenticate: () => Promise.reject(new Error('API server down')) };
  await assert.rejects(authenticate([down], { bearerToken: 't' }, false), /r: API server down/);
  assert.equal((await authenticate([down, fixed('m', { identity: ID })], {}, false)).kind, 'authenticated');
  assert.equal(bearerTokenOf(['Basic x', 'Bearer abc']), 'abc');
  assert.equal(bearerTokenOf([]), undefined);
});

test('TokenReview results read as istiod getTokenReviewResult', () => {
  const sa = { username: 'system:serviceaccount:shop:web', groups: ['system:serviceaccounts', 'system:authenticated'] };
  assert.deepEqual(
    attemptOf({ authenticated: true, user: sa, audiences: ['istio-ca'] }, ['istio-ca'], 'cluster.local'),
    {
      identity: { ...ID, method: 'token-review' },
    },
  );
  const refusals: [Parameters<typeof attemptOf>[0], RegExp][] = [
    [{ error: 'boom' }, /returned an error: boom/],
    [{ authenticated: false }, /not authenticated/],
    [{ authenticated: true, user: { username: 'alice', groups: ['system:authenticated'] } }, /not a service account/],
    [{ authenticated: true, user: sa, audiences: ['other'] }, /not valid for audience istio-ca/],
    [
      {
        authenticated: true,
        user: { username: 'system:serviceaccount:x', groups: sa.groups },
        audiences: ['istio-ca'],
      },
      /invalid username/,
    ],
  ];
  for (const [status, reason] of refusals) {
    const a = attemptOf(status, ['istio-ca'], 'cluster.local');
    assert.match((a as { error: string }).error, reason);
  }
});

function jwt(payload: Record<string, unknown>, key: KeyObject, kid = 'k1', alg = 'RS256'): string {
  const enc = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc({ alg, kid, typ: 'JWT' })}.${enc(payload)}`;
  const sig =
    alg === 'ES256'
      ? sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
      : sign('sha256', Buffer.from(input), key);
  return `${input}.${sig.toString('base64url')}`;
}

test('TokenReview: cached until the token expires, refusals briefly, one review for concurrent calls', async () => {
  let now = 1_000_000;
  let calls = 0;
  const auth = tokenReviewAuthenticator({
    review: async (token) => {
      calls++;
      await new Promise((r) => setTimeout(r, 5));
      return token !== 'bad'
        ? {
            authenticated: true,
            user: { username: 'system:serviceaccount:shop:web', groups: ['system:serviceaccounts'] },
            audiences: ['istio-ca'],
          }
        : { authenticated: false };
    },
    audiences: ['istio-ca'],
    trustDomain: 'cluster.local',
    now: () => now,
  });
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const token = jwt({ exp: (now + 60_000) / 1000 }, privateKey);
  const [a, b] = await Promise.all([
    auth.authenticate({ bearerToken: token }),
    auth.authenticate({ bearerToken: token }),
  ]);
  assert.deepEqual(a, b);
  assert.equal('identity' in a, true);
  assert.equal(calls, 1);
  now += 30_000;
  await auth.authenticate({ bearerToken: token });
  assert.equal(calls, 1, 'cached within the token lifetime');
  now += 31_000;
  await auth.authenticate({ bearerToken: token });
  assert.equal(calls, 2, 'reviewed again once the token expired');
  await auth.authenticate({ bearerToken: 'bad' });
  await auth.authenticate({ bearerToken: 'bad' });
  assert.equal(calls, 3, 'a refusal is cached briefly');
  now += 11_000;
  await auth.authenticate({ bearerToken: 'bad' });
  assert.equal(calls, 4);
  assert.deepEqual(await auth.authenticate({}), { absent: true });
});

test('JWKS: a token signed by the issuer’s key is accepted; expired, wrong audience, wrong key, unknown issuer refused', async () => {
  const issuer = 'https://kubernetes.default.svc.cluster.local';
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let fetches = 0;
  const docs: Record<string, unknown> = {
    [`${issuer}/.well-known/openid-configuration`]: { issuer, jwks_uri: `${issuer}/openid/v1/jwks` },
    [`${issuer}/openid/v1/jwks`]: {
      keys: [
        { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' },
        { ...ec.publicKey.export({ format: 'jwk' }), kid: 'k2', use: 'sig', alg: 'ES256' },
      ],
    },
  };
  const nowS = 2_000_000_000;
  const auth = jwksAuthenticator({
    issuer,
    fetchJson: (url) => {
      fetches++;
      return Promise.resolve(docs[url]);
    },
    audiences: ['istio-ca'],
    trustDomain: 'cluster.local',
    now: () => nowS * 1000,
  });
  const claims = {
    iss: issuer,
    aud: ['istio-ca'],
    exp: nowS + 600,
    iat: nowS - 10,
    nbf: nowS - 10,
    sub: 'system:serviceaccount:shop:web',
    'kubernetes.io': { namespace: 'shop', serviceaccount: { name: 'web', uid: 'u' } },
  };
  assert.deepEqual(await auth.authenticate({ bearerToken: jwt(claims, rsa.privateKey) }), {
    identity: { ...ID, method: 'jwks' },
  });
  assert.equal(
    'identity' in (await auth.authenticate({ bearerToken: jwt(claims, ec.privateKey, 'k2', 'ES256') })),
    true,
  );
  const refused: [string, RegExp][] = [
    [jwt({ ...claims, exp: nowS - 61 }, rsa.privateKey), /expired/],
    [jwt({ ...claims, aud: ['api'] }, rsa.privateKey), /audience/],
    [jwt({ ...claims, iss: 'https://evil' }, rsa.privateKey), /issuer/],
    [jwt(claims, other.privateKey), /signature/],
    [jwt(claims, rsa.privateKey, 'k2'), /signature/],
    [jwt({ ...claims, 'kubernetes.io': undefined }, rsa.privateKey), /namespace and service account/],
    ['not-a-jwt', /not a JWT/],
  ];
  for (const [token, reason] of refused) {
    const r = await auth.authenticate({ bearerToken: token });
    assert.match((r as { error: string }).error, reason, token.slice(0, 40));
  }
  assert.equal(fetches, 2, 'discovery and the key set fetched once');
});

test('SDS names: istiod ParseResourceName cases for kubernetes://', () => {
  assert.deepEqual(parseSecretName('kubernetes://cert', 'default'), {
    resourceName: 'kubernetes://cert',
    namespace: 'default',
    name: 'cert',
    caOnly: false,
  });
  assert.deepEqual(parseSecretName('kubernetes://namespace/cert-cacert', 'default'), {
    resourceName: 'kubernetes://namespace/cert-cacert',
    namespace: 'namespace',
    name: 'cert-cacert',
    caOnly: true,
  });
  for (const other of ['default', 'ROOTCA', 'kubernetes-gateway://ns/cert', 'configmap://ns/cm', 'kubernetes://'])
    assert.equal(parseSecretName(other, 'default'), undefined, other);
});

test('Secret material as istiod ExtractCertInfo / ExtractRoot: key pairs, CA, helpful refusals', () => {
  const b = (s: string): Buffer => Buffer.from(s);
  const decode = (bytes: Uint8Array): Record<string, unknown> =>
    JSON.parse(JSON.stringify(decodeMessage(SECRET_TYPE_NAME, bytes))) as Record<string, unknown>;
  const generic = tlsCertificateSecret('kubernetes://c', { cert: b('CERT'), key: b('KEY') });
  assert.equal(generic.ok, true);
  const tls = tlsCertificateSecret('kubernetes://c', { 'tls.crt': b('CERT'), 'tls.key': b('KEY'), 'ca.crt': b('CA') });
  const msg = decode((tls as { bytes: Uint8Array }).bytes) as {
    name: string;
    tls_certificate: { certificate_chain: { inline_bytes: unknown }; private_key: unknown };
  };
  assert.equal(msg.name, 'kubernetes://c');
  assert.ok(msg.tls_certificate.certificate_chain.inline_bytes);
  assert.deepEqual(tlsCertificateSecret('x', { cert: b(''), key: b('') }), {
    ok: false,
    reason: 'found keys "cert" and "key", but they were empty',
  });
  assert.deepEqual(tlsCertificateSecret('x', { a: b('1'), b: b('2'), c: b('3'), d: b('4') }), {
    ok: false,
    reason:
      "found secret, but didn't have expected keys (cert and key) or (tls.crt and tls.key); found: a, b, c, and 1 more...",
  });
  assert.equal(caSecret('x', { 'ca.crt': b('CA') }).ok, true);
  assert.equal(caSecret('x', { cacert: b('CA') }).ok, true);
  assert.match((caSecret('x', { 'tls.crt': b('C') }) as { reason: string }).reason, /expected keys cacert or ca.crt/);
});

test('SecretResolver: own namespace only, keys only with access, -cacert falls back to the Secret without the suffix', () => {
  const source = new MemorySecretSource();
  const data = { 'tls.crt': Buffer.from('CERT'), 'tls.key': Buffer.from('KEY'), 'ca.crt': Buffer.from('CA') };
  source.set('shop', 'web-cert', { data, revision: 'u1/1' });
  source.set('bank', 'vault', { data, revision: 'u2/1' });
  const resolver = new SecretResolver(source);
  const names = [
    'kubernetes://web-cert',
    'kubernetes://web-cert-cacert',
    'kubernetes://bank/vault',
    'kubernetes://gone',
  ];
  const full = resolver.resolve({ identity: ID, mayReadKeys: true }, names);
  assert.deepEqual([...full.resources.keys()], ['kubernetes://web-cert', 'kubernetes://web-cert-cacert']);
  assert.deepEqual(
    full.denied.map((d) => d.name),
    ['kubernetes://bank/vault'],
  );
  const caOnly = resolver.resolve({ identity: ID, mayReadKeys: false }, names);
  assert.deepEqual([...caOnly.resources.keys()], ['kubernetes://web-cert-cacert']);
  assert.match(
    caOnly.denied.find((d) => d.name === 'kubernetes://web-cert')?.reason ?? '',
    /may not read secrets in shop/,
  );
  const anonymous = resolver.resolve({ identity: undefined, mayReadKeys: true }, names);
  assert.equal(anonymous.resources.size, 0);
  const before = full.resources.get('kubernetes://web-cert')?.digest;
  source.set('shop', 'web-cert', { data: { ...data, 'tls.crt': Buffer.from('CERT2') }, revision: 'u1/2' });
  const after = resolver.resolve({ identity: ID, mayReadKeys: true }, ['kubernetes://web-cert']);
  assert.notEqual(after.resources.get('kubernetes://web-cert')?.digest, before, 'a new revision is a new version');
  assert.deepEqual([...source.watched], ['shop']);
});
