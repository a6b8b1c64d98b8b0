/**
 * Authentication of an xDS stream, as istiod's security.Authenticate: each configured
 * authenticator looks at the call's credentials (the verified client certificate, a bearer token in
 * the `authorization` metadata); the first that proves an identity wins. A credential that is
 * presented and fails is refused even where anonymous streams are allowed (`--insecure`): a proxy
 * never silently loses the identity it tried to prove.
 */
import type { ProxyIdentity } from './identity.js';

export interface CallCredentials {
  /** `subjectaltname` of the client certificate, present only when the TLS handshake verified it. */
  readonly peerSubjectAltName?: string;
  /** The token of the first `authorization: Bearer …` metadata value. */
  readonly bearerToken?: string;
}

/** What one authenticator made of the credentials: an identity, nothing of its kind, or a failure. */
export type AuthAttempt = { readonly identity: ProxyIdentity } | { readonly absent: true } | { readonly error: string };

export interface Authenticator {
  readonly name: string;
  authenticate(creds: CallCredentials): Promise<AuthAttempt>;
}

export type AuthOutcome =
  | { readonly kind: 'authenticated'; readonly identity: ProxyIdentity }
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'refused'; readonly reason: string };

/**
 * Runs the authenticators in order. An authenticator that could not do its work (the API server or
 * the issuer did not answer) makes the whole call throw when no other one proved an identity: the
 * stream then ends UNAVAILABLE (try again), not UNAUTHENTICATED.
 */
export async function authenticate(
  authenticators: readonly Authenticator[],
  creds: CallCredentials,
  allowAnonymous: boolean,
): Promise<AuthOutcome> {
  const errors: string[] = [];
  const unavailable: string[] = [];
  for (const a of authenticators) {
    let attempt: AuthAttempt;
    try {
      attempt = await a.authenticate(creds);
    } catch (e) {
      unavailable.push(`${a.name}: ${e instanceof Error ? e.message : String(e)}`);
      continue;
    }
    if ('identity' in attempt) return { kind: 'authenticated', identity: attempt.identity };
    if ('error' in attempt) errors.push(`${a.name}: ${attempt.error}`);
  }
  if (unavailable.length > 0) throw new Error(unavailable.join('; '));
  if (errors.length > 0) return { kind: 'refused', reason: `authentication failed: ${errors.join('; ')}` };
  if (allowAnonymous) return { kind: 'anonymous' };
  const kinds = authenticators.map((a) => a.name).join(', ') || 'none configured';
  return { kind: 'refused', reason: `no credentials: this relay authenticates proxies by ${kinds}` };
}

/** The bearer token of gRPC `authorization` metadata values (istiod: security.ExtractBearerToken). */
export function bearerTokenOf(values: readonly unknown[]): string | undefined {
  for (const v of values) {
    const s = typeof v === 'string' ? v : Buffer.isBuffer(v) ? v.toString('utf8') : '';
    if (s.startsWith('Bearer ')) return s.slice('Bearer '.length).trim();
  }
  return undefined;
}
