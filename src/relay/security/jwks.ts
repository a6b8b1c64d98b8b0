/**
 * Kubernetes service-account JWTs verified offline against the cluster's signing keys, found by
 * OpenID issuer discovery (`<issuer>/.well-known/openid-configuration` → `jwks_uri`), as the API
 * server publishes them (ServiceAccountIssuerDiscovery). Checks the signature (RS256/384/512,
 * ES256/384/512, PS256/384/512), `iss`, `aud`, `exp` and `nbf` (60 s leeway), and reads the
 * namespace and service account from the `kubernetes.io` claim.
 *
 * Keys are fetched at the first token, refreshed every `refreshMs`, and again (at most every
 * `minRefreshMs`) when a token names a key id the set does not have, as after a key rotation.
 * Unlike TokenReview this cannot see a deleted service account or pod before the token expires:
 * bound tokens are short-lived for that reason.
 */
import { constants, createPublicKey, verify, type KeyObject, type JsonWebKey } from 'node:crypto';
import type { AuthAttempt, Authenticator } from './authenticate.js';
import { spiffeUri } from './identity.js';
import { decodeJwt, type DecodedJwt } from './jwt.js';

/** GETs a URL and parses JSON (I/O at the edge: plain HTTPS, or through the API server). */
export type FetchJson = (url: string) => Promise<unknown>;

export interface JwksOptions {
  /** The issuer URL; discovery reads `<issuer>/.well-known/openid-configuration`. */
  readonly issuer: string;
  readonly fetchJson: FetchJson;
  readonly audiences: readonly string[];
  readonly trustDomain: string;
  readonly refreshMs?: number;
  readonly minRefreshMs?: number;
  readonly now?: () => number;
}

interface KeySet {
  readonly keys: ReadonlyMap<string, KeyObject>;
  readonly anonymous: readonly KeyObject[];
  readonly at: number;
}

const LEEWAY_S = 60;

export function jwksAuthenticator(opts: JwksOptions): Authenticator {
  const now = opts.now ?? Date.now;
  const refreshMs = opts.refreshMs ?? 300_000;
  const minRefreshMs = opts.minRefreshMs ?? 30_000;
  const issuer = opts.issuer.replace(/\/+$/, '');
  let keySet: KeySet | undefined;
  let loading: Promise<KeySet> | undefined;

  const load = (): Promise<KeySet> =>
    (loading ??= fetchKeys(issuer, opts.fetchJson, now).then(
      (ks) => {
        keySet = ks;
        loading = undefined;
        return ks;
      },
      (e: unknown) => {
        loading = undefined;
        throw e;
      },
    ));

  const keysFor = async (kid: string | undefined): Promise<readonly KeyObject[]> => {
    let ks = keySet;
    if (!ks || now() - ks.at > refreshMs) ks = await load();
    const pick = (s: KeySet): readonly KeyObject[] =>
      kid === undefined ? [...s.keys.values(), ...s.anonymous] : [s.keys.get(kid)].filter((k) => k !== undefined);
    let keys = pick(ks);
    if (keys.length === 0 && now() - ks.at > minRefreshMs) keys = pick(await load());
    return keys;
  };

  return {
    name: 'Kubernetes service-account token (JWKS)',
    async authenticate(creds) {
      const token = creds.bearerToken;
      if (token === undefined) return { absent: true };
      const jwt = decodeJwt(token);
      if (!jwt) return { error: 'the bearer token is not a JWT' };
      const kid = typeof jwt.header.kid === 'string' ? jwt.header.kid : undefined;
      const keys = await keysFor(kid);
      if (keys.length === 0) return { error: `no signing key ${kid ?? ''} in the issuer's key set` };
      if (!keys.some((k) => signatureValid(jwt, k))) return { error: 'the token signature is not valid' };
      return claimsAttempt(jwt.payload, issuer, opts.audiences, opts.trustDomain, now() / 1000);
    },
  };
}

async function fetchKeys(issuer: string, fetchJson: FetchJson, now: () => number): Promise<KeySet> {
  const discovery = (await fetchJson(`${issuer}/.well-known/openid-configuration`)) as { jwks_uri?: unknown };
  if (typeof discovery.jwks_uri !== 'string') throw new Error(`${issuer}: the discovery document has no jwks_uri`);
  const jwks = (await fetchJson(discovery.jwks_uri)) as { keys?: unknown };
  const keys = new Map<string, KeyObject>();
  const anonymous: KeyObject[] = [];
  for (const jwk of Array.isArray(jwks.keys) ? (jwks.keys as JsonWebKey[]) : []) {
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    try {
      const key = createPublicKey({ key: jwk, format: 'jwk' });
      if (typeof jwk.kid === 'string') keys.set(jwk.kid, key);
      else anonymous.push(key);
    } catch {
      // a key type node:crypto does not read cannot have signed a token we accept
    }
  }
  return { keys, anonymous, at: now() };
}

const HASH: Readonly<Record<string, { readonly name: string; readonly bytes: number }>> = {
  '256': { name: 'sha256', bytes: 32 },
  '384': { name: 'sha384', bytes: 48 },
  '512': { name: 'sha512', bytes: 64 },
};

function signatureValid(jwt: DecodedJwt, key: KeyObject): boolean {
  const alg = typeof jwt.header.alg === 'string' ? jwt.header.alg : '';
  const hash = HASH[alg.slice(2)];
  if (!hash) return false;
  const data = Buffer.from(jwt.signingInput);
  try {
    if (alg.startsWith('RS') && key.asymmetricKeyType === 'rsa') return verify(hash.name, data, key, jwt.signature);
    if (alg.startsWith('PS') && key.asymmetricKeyType === 'rsa')
      return verify(
        hash.name,
        data,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: hash.bytes },
        jwt.signature,
      );
    if (alg.startsWith('ES') && key.asymmetricKeyType === 'ec')
      return verify(hash.name, data, { key, dsaEncoding: 'ieee-p1363' }, jwt.signature);
  } catch {
    return false;
  }
  return false;
}

/** The claims of a verified token: issuer, audience, lifetime, then the service account. */
export function claimsAttempt(
  payload: Readonly<Record<string, unknown>>,
  issuer: string,
  audiences: readonly string[],
  trustDomain: string,
  nowS: number,
): AuthAttempt {
  if (payload.iss !== issuer) return { error: `the token's issuer is ${JSON.stringify(payload.iss)}, not ${issuer}` };
  const aud = typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : [];
  if (!aud.some((a) => audiences.includes(a as string)))
    return { error: `the token is not valid for audience ${audiences.join(' or ')}` };
  if (typeof payload.exp !== 'number') return { error: 'the token has no expiry' };
  if (payload.exp + LEEWAY_S < nowS) return { error: 'the token has expired' };
  if (typeof payload.nbf === 'number' && payload.nbf - LEEWAY_S > nowS) return { error: 'the token is not valid yet' };
  const k8s = payload['kubernetes.io'] as { namespace?: unknown; serviceaccount?: { name?: unknown } } | undefined;
  const namespace = k8s?.namespace;
  const serviceAccount = k8s?.serviceaccount?.name;
  if (typeof namespace !== 'string' || !namespace || typeof serviceAccount !== 'string' || !serviceAccount)
    return { error: 'the token has no kubernetes.io namespace and service account' };
  return {
    identity: {
      principal: spiffeUri({ trustDomain, namespace, serviceAccount }),
      namespace,
      serviceAccount,
      method: 'jwks',
    },
  };
}
