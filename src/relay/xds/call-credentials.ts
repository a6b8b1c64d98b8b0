/**
 * The credentials of an xDS call: the client certificate grpc-js verified against the client CA
 * (it exposes one only when the handshake authorized it) and a bearer token from the
 * `authorization` metadata.
 */
import type { CallCredentials } from '../security/authenticate.js';
import { bearerTokenOf } from '../security/authenticate.js';
import type { XdsCall } from './stream-base.js';

export function credentialsOf(call: XdsCall): CallCredentials {
  let san: string | undefined;
  try {
    const cert = call.getAuthContext().sslPeerCertificate;
    if (cert) san = cert.subjectaltname ?? '';
  } catch {
    // no TLS on this call
  }
  const token = bearerTokenOf(call.metadata.get('authorization'));
  return {
    ...(san !== undefined ? { peerSubjectAltName: san } : {}),
    ...(token !== undefined ? { bearerToken: token } : {}),
  };
}
