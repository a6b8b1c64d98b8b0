/** Istio StringMatch → Envoy matchers, as istiod converts them (util.ConvertToEnvoyMatch). */
import type { StringMatch } from '../../model/istio.js';
import type { envoy } from '../../xds/proto.js';

export type StringMatcher = envoy.type.matcher.v3.StringMatcher.$Properties;

/** istiod turns an empty match, or the regex `*`, into a presence check. */
export function isPresenceMatch(m: StringMatch | undefined): boolean {
  if (!m) return true;
  if (m.exact === undefined && m.prefix === undefined && m.regex === undefined) return true;
  return m.regex === '*';
}

export function toStringMatcher(m: StringMatch): StringMatcher | undefined {
  if (m.exact !== undefined) return { exact: m.exact };
  if (m.prefix !== undefined) return { prefix: m.prefix };
  if (m.regex !== undefined) return { safe_regex: { regex: m.regex } };
  return undefined;
}
