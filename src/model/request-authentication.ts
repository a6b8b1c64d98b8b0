/**
 * Istio security resource `RequestAuthentication` (security.istio.io v1/v1beta1): which JWTs a
 * workload accepts. A request with an invalid token is rejected; one without a token passes (an
 * AuthorizationPolicy on requestPrincipals decides). Validated from raw documents by the inputs layer.
 */
import type { PolicyTargetReference } from './authorization-policy.js';
import type { Origin } from './diagnostics.js';
import type { ObjectMeta } from './k8s.js';

export interface JwtHeader {
  readonly name: string;
  /** Stripped before the token, e.g. `Bearer `. */
  readonly prefix?: string;
}

export interface ClaimToHeader {
  readonly header: string;
  readonly claim: string;
}

export interface JwtRule {
  readonly issuer: string;
  readonly audiences?: readonly string[];
  /** Fetched by the proxy (remote JWKS). */
  readonly jwksUri?: string;
  /** Inline JWKS JSON; wins over jwksUri. */
  readonly jwks?: string;
  readonly fromHeaders?: readonly JwtHeader[];
  readonly fromParams?: readonly string[];
  readonly fromCookies?: readonly string[];
  readonly outputPayloadToHeader?: string;
  readonly forwardOriginalToken?: boolean;
  readonly outputClaimToHeaders?: readonly ClaimToHeader[];
  /** Timeout of the JWKS fetch, milliseconds (istiod's default 5 s). */
  readonly timeoutMs?: number;
  readonly spaceDelimitedClaims?: readonly string[];
}

export interface RequestAuthenticationSpec {
  readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> };
  readonly targetRef?: PolicyTargetReference;
  readonly targetRefs?: readonly PolicyTargetReference[];
  readonly jwtRules?: readonly JwtRule[];
}

export interface RequestAuthentication {
  readonly kind: 'RequestAuthentication';
  readonly apiVersion: string;
  readonly meta: ObjectMeta;
  readonly origin: Origin;
  readonly spec: RequestAuthenticationSpec;
}
