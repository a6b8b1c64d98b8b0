/**
 * HTTPMatchRequest → Envoy RouteMatch (istiod's TranslateRouteMatch for sidecars).
 * Header matchers are sorted by name; method/authority/scheme become pseudo-header matchers.
 */
import type { HTTPMatchRequest, StringMatch } from '../../model/istio.js';
import type { envoy } from '../../xds/proto.js';
import { exactList } from '../exact.js';
import { deepFreeze, frozenPerSource } from '../intern.js';
import { isPresenceMatch, toStringMatcher } from './string-match.js';

export type RouteMatch = envoy.config.route.v3.RouteMatch.$Properties;
export type HeaderMatcher = envoy.config.route.v3.HeaderMatcher.$Properties;
type QueryParameterMatcher = envoy.config.route.v3.QueryParameterMatcher.$Properties;

/** istiod routes on JWT claims through dynamic metadata; meshsnap has no JWT filter config to feed it. */
export const JWT_CLAIM_HEADER_PREFIX = '@request.auth.claims';

const byKey = (r: Readonly<Record<string, StringMatch>> | undefined): [string, StringMatch][] =>
  r
    ? Object.keys(r)
        .sort()
        .map((k) => [k, r[k] as StringMatch])
    : [];

function headerMatcher(name: string, m: StringMatch | undefined): HeaderMatcher {
  if (isPresenceMatch(m)) return { name, present_match: true };
  return { name, string_match: toStringMatcher(m as StringMatch) };
}

function queryMatcher(name: string, m: StringMatch): QueryParameterMatcher {
  if (isPresenceMatch(m)) return { name, present_match: true };
  return { name, string_match: toStringMatcher(m) };
}

/**
 * `gatewaySemantics`: a route made from the Gateway API or a Kubernetes Ingress (istiod's gateway
 * and ingress route semantics), whose PathPrefix matches whole path segments (`/foo` matches `/foo` and `/foo/bar`, not `/foobar`): Envoy's `path_separated_prefix`,
 * as istiod builds it.
 */
export function translateRouteMatch(match: HTTPMatchRequest | undefined, gatewaySemantics = false): RouteMatch {
  return match ? translated(match, gatewaySemantics) : CATCH_ALL_MATCH;
}

/** `{ prefix: '/' }`: every catch-all and default route holds this one (frozen: ../intern.ts). */
export const CATCH_ALL_MATCH: RouteMatch = deepFreeze({ prefix: '/' });

/**
 * Per source match, without and with Gateway API semantics: a VirtualService's match is translated
 * for every listener port and for sidecars and proxyless clients alike, and gives the same one.
 */
const translated = frozenPerSource(routeMatch);

function routeMatch(match: HTTPMatchRequest, gatewaySemantics: boolean): RouteMatch {
  const out: RouteMatch = {};
  const headers: HeaderMatcher[] = [];
  for (const [name, m] of byKey(match.headers)) headers.push(headerMatcher(name, m));
  for (const [name, m] of byKey(match.withoutHeaders)) {
    const h = headerMatcher(name, m);
    h.invert_match = true;
    // A negated value match must also hold when the header is absent.
    if (!isPresenceMatch(m)) h.treat_missing_header_as_empty = true;
    headers.push(h);
  }
  headers.sort((a, b) => ((a.name ?? '') < (b.name ?? '') ? -1 : (a.name ?? '') > (b.name ?? '') ? 1 : 0));

  const uri = match.uri;
  if (uri?.exact !== undefined) out.path = uri.exact;
  else if (uri?.prefix !== undefined) {
    if (gatewaySemantics && uri.prefix !== '/') out.path_separated_prefix = uri.prefix.replace(/\/$/, '');
    else out.prefix = uri.prefix;
  } else if (uri?.regex !== undefined) out.safe_regex = { regex: uri.regex };
  else out.prefix = '/';
  out.case_sensitive = { value: !match.ignoreUriCase };

  if (match.method) headers.push(headerMatcher(':method', match.method));
  if (match.authority) headers.push(headerMatcher(':authority', match.authority));
  if (match.scheme) headers.push(headerMatcher(':scheme', match.scheme));
  // Kept in the route (../exact.ts).
  if (headers.length) out.headers = exactList(headers);

  const query = byKey(match.queryParams).map(([name, m]) => queryMatcher(name, m));
  if (query.length) out.query_parameters = query;
  return out;
}

/** A route that matches every request (istiod stops translating a VirtualService after one). */
export function isCatchAll(m: RouteMatch): boolean {
  const pathAll = m.prefix === '/' || m.path_separated_prefix === '/' || m.safe_regex?.regex === '.*';
  return pathAll && !m.headers?.length && !m.query_parameters?.length && !m.dynamic_metadata?.length;
}

/** Whether a match uses JWT-claim routing, which needs config meshsnap does not generate. */
export function usesJwtClaims(match: HTTPMatchRequest): boolean {
  const keys = [...Object.keys(match.headers ?? {}), ...Object.keys(match.withoutHeaders ?? {})];
  return keys.some((k) => k.startsWith(JWT_CLAIM_HEADER_PREFIX));
}
