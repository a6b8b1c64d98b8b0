/**
 * mTLS authentication: the SPIFFE URI SAN of a client certificate the TLS handshake verified against
 * `--client-ca` (istiod: ClientCertAuthenticator). grpc-js exposes the peer certificate only when
 * the handshake authorized it, so an unverified certificate never reaches this code.
 */
import type { Authenticator } from './authenticate.js';
import { parseSpiffe, spiffeUri } from './identity.js';

export const mtlsAuthenticator: Authenticator = {
  name: 'mTLS client certificate',
  authenticate(creds) {
    if (creds.peerSubjectAltName === undefined) return Promise.resolve({ absent: true });
    const uris = uriSans(creds.peerSubjectAltName);
    for (const uri of uris) {
      const id = parseSpiffe(uri);
      if (id)
        return Promise.resolve({
          identity: {
            principal: spiffeUri(id),
            namespace: id.namespace,
            serviceAccount: id.serviceAccount,
            method: 'mtls',
          },
        });
    }
    return Promise.resolve({
      error: `the client certificate has no spiffe://<trust-domain>/ns/<ns>/sa/<sa> URI SAN (found: ${uris.join(', ') || 'none'})`,
    });
  },
};

/**
 * The URI entries of Node's `subjectaltname` text (`DNS:a, URI:spiffe://…`); Node quotes an entry
 * holding a comma or quote as a JSON string (`URI:"…"`).
 */
export function uriSans(subjectAltName: string): string[] {
  const out: string[] = [];
  const re = /(?:^|, )URI:("(?:[^"\\]|\\.)*"|[^,]*)/g;
  for (const m of subjectAltName.matchAll(re)) {
    const raw = m[1] ?? '';
    try {
      out.push(raw.startsWith('"') ? (JSON.parse(raw) as string) : raw);
    } catch {
      // a malformed quoted entry is not an identity
    }
  }
  return out;
}
