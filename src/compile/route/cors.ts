/** CorsPolicy → `envoy.filters.http.cors` per-route config (istiod's TranslateCORSPolicy). */
import type { CorsPolicy } from '../../model/istio.js';
import type { envoy } from '../../xds/proto.js';
import { integerToFraction } from './percent.js';
import { toStringMatcher, type StringMatcher } from './string-match.js';

export type EnvoyCorsPolicy = envoy.extensions.filters.http.cors.v3.CorsPolicy.$Properties;

export function translateCors(cors: CorsPolicy): EnvoyCorsPolicy {
  const out: EnvoyCorsPolicy = {
    // Istio's default for unmatchedPreflights is FORWARD (Envoy's before 1.30).
    forward_not_matching_preflights: { value: cors.unmatchedPreflights !== 'IGNORE' },
    filter_enabled: { default_value: integerToFraction(100) },
  };
  const origins = (cors.allowOrigins ?? []).map(toStringMatcher).filter((m): m is StringMatcher => m !== undefined);
  if (origins.length) out.allow_origin_string_match = origins;
  if (cors.allowCredentials !== undefined) out.allow_credentials = { value: cors.allowCredentials };
  if (cors.allowHeaders?.length) out.allow_headers = cors.allowHeaders.join(',');
  if (cors.allowMethods?.length) out.allow_methods = cors.allowMethods.join(',');
  if (cors.exposeHeaders?.length) out.expose_headers = cors.exposeHeaders.join(',');
  if (cors.maxAgeMs !== undefined) out.max_age = String(Math.floor(cors.maxAgeMs / 1000));
  return out;
}
