/**
 * Kubernetes service-account JWTs verified by the API server's TokenReview (istiod:
 * KubeJWTAuthenticator + tokenreview.ValidateK8sJwt): the token must be authenticated, belong to
 * the `system:serviceaccounts` group, and be valid for one of the configured audiences.
 *
 * Results are cached by the token's SHA-256 until the token expires (at most `maxCacheMs`), so a
 * proxy's reconnects cost the API server nothing; refusals are cached briefly (`refusalCacheMs`), so
 * a client repeating a bad token cannot turn the relay into a TokenReview flood.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AuthAttempt, Authenticator } from './authenticate.js';
import { serviceAccountOfUsername, spiffeUri } from './identity.js';
import { decodeJwt, expiryMs } from './jwt.js';

/** The `status` of an authentication.k8s.io/v1 TokenReview. */
export interface TokenReviewStatus {
  readonly authenticated?: boolean;
  readonly user?: { readonly username?: string; readonly groups?: readonly string[] };
  readonly audiences?: readonly string[];
  readonly error?: string;
}

/** Creates a TokenReview for `token` with `spec.audiences` and returns its status (I/O at the edge). */
export type TokenReviewer = (token: string, audiences: readonly string[]) => Promise<TokenReviewStatus>;

export interface TokenReviewOptions {
  readonly review: TokenReviewer;
  /** Accepted audiences (istiod's default: `istio-ca`). */
  readonly audiences: readonly string[];
  readonly trustDomain: string;
  readonly maxCacheMs?: number;
  readonly refusalCacheMs?: number;
  readonly maxCacheEntries?: number;
  readonly now?: () => number;
}

interface Cached {
  readonly attempt: AuthAttempt;
  readonly until: number;
}

export function tokenReviewAuthenticator(opts: TokenReviewOptions): Authenticator & { readonly cacheSize: number } {
  const now = opts.now ?? Date.now;
  const maxCacheMs = opts.maxCacheMs ?? 3_600_000;
  const refusalCacheMs = opts.refusalCacheMs ?? 10_000;
  const cache = new LRUCache<string, Cached>({ max: opts.maxCacheEntries ?? 50_000 });
  const inflight = new Map<string, Promise<AuthAttempt>>();

  const review = async (token: string): Promise<AuthAttempt> => {
    let status: TokenReviewStatus;
    try {
      status = await opts.review(token, opts.audiences);
    } catch (e) {
      // The API server did not answer: not the token's fault, so nothing is cached.
      throw new Error(`TokenReview failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    return attemptOf(status, opts.audiences, opts.trustDomain);
  };

  return {
    name: 'Kubernetes service-account token (TokenReview)',
    get cacheSize() {
      return cache.size;
    },
    async authenticate(creds) {
      const token = creds.bearerToken;
      if (token === undefined) return { absent: true };
      const key = createHash('sha256').update(token).digest('base64url');
      const hit = cache.get(key);
      if (hit && hit.until > now()) return hit.attempt;
      let pending = inflight.get(key);
      if (!pending) {
        pending = review(token).finally(() => inflight.delete(key));
        inflight.set(key, pending);
      }
      const attempt = await pending;
      const exp = expiryMs(decodeJwt(token)?.payload ?? {});
      const until =
        'identity' in attempt ? Math.min(now() + maxCacheMs, exp ?? now() + maxCacheMs) : now() + refusalCacheMs;
      if (until > now()) cache.set(key, { attempt, until });
      return attempt;
    },
  };
}

/** Reads a TokenReview status as istiod's getTokenReviewResult does. */
export function attemptOf(status: TokenReviewStatus, audiences: readonly string[], trustDomain: string): AuthAttempt {
  if (status.error) return { error: `the token review returned an error: ${status.error}` };
  if (!status.authenticated) return { error: 'the token is not authenticated' };
  if (!(status.user?.groups ?? []).includes('system:serviceaccounts'))
    return { error: 'the token is not a service account' };
  if (audiences.length > 0 && !(status.audiences ?? []).some((a) => audiences.includes(a)))
    return { error: `the token is not valid for audience ${audiences.join(' or ')}` };
  const sa = serviceAccountOfUsername(status.user?.username ?? '');
  if (!sa) return { error: 'invalid username field in the token review result' };
  return {
    identity: {
      principal: spiffeUri({ trustDomain, ...sa }),
      namespace: sa.namespace,
      serviceAccount: sa.serviceAccount,
      method: 'token-review',
    },
  };
}
