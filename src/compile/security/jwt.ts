/**
 * RequestAuthentication → the `envoy.filters.http.jwt_authn` filter (istiod's
 * authn/policy_applier.go convertToEnvoyJwtConfig): one provider `origins-<i>` per JWT rule of the
 * policies that apply (rules sorted by issuer), each requirement "this provider, or no token"; with
 * several providers, any one provider alone or all of them in that form. So an invalid token is
 * rejected and a missing one passes; the payload goes to dynamic metadata under `payload`, where
 * the RBAC filters read request principals and claims.
 *
 * JWKS: inline `jwks`, else the proxy fetches `jwksUri` (istiod's remote-JWKS mode: meshsnap
 * compiles without I/O, so it cannot fetch keys the way istiod's default mode does). The fetch
 * goes through `outbound|<port>||<host>`: the mesh service's cluster when the host is one, else a
 * DNS cluster meshsnap adds for it (jwks-clusters.ts). A rule with neither (istiod would use
 * OIDC discovery) gets an empty key set: every token is rejected, with a diagnostic.
 */
import type { RequestAuthentication } from '../../model/request-authentication.js';
import { durationMs, envoy, packAny } from '../../xds/proto.js';
import { outboundClusterName } from '../names.js';
import type { AuthzFilter } from './authz/builder.js';

export const JWT_AUTHN_FILTER = 'envoy.filters.http.jwt_authn';
const JWT_AUTHN_TYPE = 'envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication';
const DEFAULT_TIMEOUT_MS = 5000;
const JWKS_CACHE_MS = 5 * 60 * 1000;
/** Keys no token can match: what a rule whose keys meshsnap cannot know verifies against. */
export const NO_KEYS = '{"keys":[]}';

type JwtProvider = envoy.extensions.filters.http.jwt_authn.v3.JwtProvider.$Properties;
type JwtRequirement = envoy.extensions.filters.http.jwt_authn.v3.JwtRequirement.$Properties;

export interface JwksHost {
  readonly host: string;
  readonly port: number;
  readonly https: boolean;
}

export function parseJwksUri(uri: string): JwksHost | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  const https = u.protocol === 'https:';
  const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  return host === '' ? undefined : { host, port: u.port === '' ? (https ? 443 : 80) : Number(u.port), https };
}

/** `["permission", "scope"]` plus the rule's own, sorted and unique (istiod's buildSpaceDelimitedClaims). */
function spaceDelimitedClaims(own: readonly string[] | undefined): string[] {
  if (own === undefined) return ['permission', 'scope'];
  return [...new Set([...own, 'permission', 'scope'])].sort();
}

export interface JwtFilterOptions {
  /**
   * Gateways: recompute the route once the token is verified, so routes can match on its claims
   * (istiod's clear_route_cache for every proxy but sidecars).
   */
  readonly clearRouteCache?: boolean;
}

export function buildJwtFilter(
  policies: readonly RequestAuthentication[],
  opts: JwtFilterOptions = {},
): AuthzFilter | undefined {
  // A stable sort by issuer, as istiod's slices.SortBy.
  const rules = policies.flatMap((p) => p.spec.jwtRules ?? []);
  const sorted = rules
    .map((r, i) => ({ r, i }))
    .sort((a, b) => (a.r.issuer < b.r.issuer ? -1 : a.r.issuer > b.r.issuer ? 1 : a.i - b.i));
  if (sorted.length === 0) return undefined;
  const providers: Record<string, JwtProvider> = {};
  const eachOrMissing: JwtRequirement[] = [];
  const any: JwtRequirement[] = [];
  sorted.forEach(({ r }, i) => {
    const name = `origins-${i}`;
    const timeout = durationMs(r.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const jwks = r.jwks === undefined ? (r.jwksUri !== undefined ? parseJwksUri(r.jwksUri) : undefined) : undefined;
    const provider: JwtProvider = {
      issuer: r.issuer,
      ...(r.audiences?.length ? { audiences: [...r.audiences] } : {}),
      ...(r.forwardOriginalToken ? { forward: true } : {}),
      ...(r.outputPayloadToHeader ? { forward_payload_header: r.outputPayloadToHeader } : {}),
      payload_in_metadata: 'payload',
      normalize_payload_in_metadata: { space_delimited_claims: spaceDelimitedClaims(r.spaceDelimitedClaims) },
      ...(r.outputClaimToHeaders?.length
        ? { claim_to_headers: r.outputClaimToHeaders.map((c) => ({ header_name: c.header, claim_name: c.claim })) }
        : {}),
      ...(r.fromHeaders?.length
        ? {
            from_headers: r.fromHeaders.map((h) => ({ name: h.name, ...(h.prefix ? { value_prefix: h.prefix } : {}) })),
          }
        : {}),
      ...(r.fromParams?.length ? { from_params: [...r.fromParams] } : {}),
      ...(r.fromCookies?.length ? { from_cookies: [...r.fromCookies] } : {}),
      ...(jwks && r.jwksUri !== undefined
        ? {
            remote_jwks: {
              http_uri: { uri: r.jwksUri, cluster: outboundClusterName(jwks.port, '', jwks.host), timeout },
              cache_duration: durationMs(JWKS_CACHE_MS),
            },
          }
        : { local_jwks: { inline_string: r.jwks ?? NO_KEYS } }),
      ...(opts.clearRouteCache ? { clear_route_cache: true } : {}),
    };
    providers[name] = provider;
    eachOrMissing.push({ requires_any: { requirements: [{ provider_name: name }, { allow_missing: {} }] } });
    any.push({ provider_name: name });
  });
  const requires: JwtRequirement =
    eachOrMissing.length === 1
      ? (eachOrMissing[0] as JwtRequirement)
      : { requires_any: { requirements: [...any, { requires_all: { requirements: eachOrMissing } }] } };
  return {
    name: JWT_AUTHN_FILTER,
    typed_config: packAny(JWT_AUTHN_TYPE, {
      providers,
      rules: [{ match: { prefix: '/' }, requires }],
      bypass_cors_preflight: true,
    }),
  };
}
