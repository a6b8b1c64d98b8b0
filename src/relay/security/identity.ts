/**
 * Who a proxy is, once authenticated: a SPIFFE identity `spiffe://<trust-domain>/ns/<ns>/sa/<sa>`,
 * as istiod names workloads (istio/istio pkg/spiffe: ParseIdentity), and how it was proven.
 */

export type AuthMethod = 'mtls' | 'token-review' | 'jwks';

export interface ProxyIdentity {
  /** `spiffe://<trust-domain>/ns/<namespace>/sa/<service-account>`. */
  readonly principal: string;
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly method: AuthMethod;
}

export interface SpiffeId {
  readonly trustDomain: string;
  readonly namespace: string;
  readonly serviceAccount: string;
}

const PREFIX = 'spiffe://';

/** Parses `spiffe://<td>/ns/<ns>/sa/<sa>` exactly (five path segments, as istiod); undefined otherwise. */
export function parseSpiffe(uri: string): SpiffeId | undefined {
  if (!uri.startsWith(PREFIX)) return undefined;
  const parts = uri.slice(PREFIX.length).split('/');
  if (parts.length !== 5 || parts[1] !== 'ns' || parts[3] !== 'sa') return undefined;
  const [trustDomain, , namespace, , serviceAccount] = parts as [string, string, string, string, string];
  if (!trustDomain || !namespace || !serviceAccount) return undefined;
  return { trustDomain, namespace, serviceAccount };
}

export const spiffeUri = (id: SpiffeId): string =>
  `${PREFIX}${id.trustDomain}/ns/${id.namespace}/sa/${id.serviceAccount}`;

/** `system:serviceaccount:<ns>:<sa>` (a TokenReview username) → namespace and service account. */
export function serviceAccountOfUsername(
  username: string,
): { readonly namespace: string; readonly serviceAccount: string } | undefined {
  const parts = username.split(':');
  if (parts.length !== 4 || parts[0] !== 'system' || parts[1] !== 'serviceaccount') return undefined;
  const [, , namespace, serviceAccount] = parts as [string, string, string, string];
  return namespace && serviceAccount ? { namespace, serviceAccount } : undefined;
}
