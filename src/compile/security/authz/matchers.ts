/**
 * Envoy string, header, path and metadata matchers for authorization values, where `*` alone
 * means "anything", a leading `*` a suffix and a trailing `*` a prefix match (istiod's matcher/).
 */
import type { envoy } from '../../../xds/proto.js';

export type StringMatcher = envoy.type.matcher.v3.StringMatcher.$Properties;
export type ValueMatcher = envoy.type.matcher.v3.ValueMatcher.$Properties;
export type MetadataMatcher = envoy.type.matcher.v3.MetadataMatcher.$Properties;
export type HeaderMatcher = envoy.config.route.v3.HeaderMatcher.$Properties;

/** RE2 escaping of a literal, as Go's regexp.QuoteMeta. */
export function quoteMeta(s: string): string {
  return s.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

export const regexMatcher = (regex: string): StringMatcher => ({ safe_regex: { regex } });
export const exactMatcher = (exact: string, ignoreCase = false): StringMatcher =>
  ignoreCase ? { exact, ignore_case: true } : { exact };
export const prefixMatcher = (prefix: string, ignoreCase = false): StringMatcher =>
  ignoreCase ? { prefix, ignore_case: true } : { prefix };
export const suffixMatcher = (suffix: string, ignoreCase = false): StringMatcher =>
  ignoreCase ? { suffix, ignore_case: true } : { suffix };

/** A wildcard value; `prefix` is prepended to the literal (a suffix match then needs a regex). */
export function stringMatcher(value: string, prefix = ''): StringMatcher {
  if (value === '*') return regexMatcher('.+');
  if (value.startsWith('*'))
    return prefix === '' ? suffixMatcher(value.slice(1)) : regexMatcher(`${prefix}.*${quoteMeta(value.slice(1))}`);
  if (value.endsWith('*')) return prefixMatcher(prefix + value.slice(0, -1));
  return exactMatcher(prefix + value);
}

/** A header value; `*` alone means the header is present. Hosts compare case-insensitively. */
export function headerMatcher(name: string, value: string, ignoreCase = false): HeaderMatcher {
  if (value === '*') return { name, present_match: true };
  if (value.startsWith('*')) return { name, string_match: suffixMatcher(value.slice(1), ignoreCase) };
  if (value.endsWith('*')) return { name, string_match: prefixMatcher(value.slice(0, -1), ignoreCase) };
  return { name, string_match: exactMatcher(value, ignoreCase) };
}

export const stringValue = (m: StringMatcher): ValueMatcher => ({ string_match: m });

/** One matcher, or an or_match of several (a single one stays bare). */
export function orValue(matchers: readonly ValueMatcher[]): ValueMatcher {
  return matchers.length === 1 ? (matchers[0] as ValueMatcher) : { or_match: { value_matchers: [...matchers] } };
}

export const stringOrValue = (values: readonly string[]): ValueMatcher =>
  orValue(values.map((v) => stringValue(stringMatcher(v))));

export function metadataMatcher(filter: string, keys: readonly string[], value: ValueMatcher): MetadataMatcher {
  return { filter, path: keys.map((key) => ({ key })), value };
}

/** A value that is a list containing a match, or (claims may be scalars) the value itself matching. */
export function listOrValueMatcher(filter: string, keys: readonly string[], value: ValueMatcher): MetadataMatcher {
  return metadataMatcher(filter, keys, { or_match: { value_matchers: [{ list_match: { one_of: value } }, value] } });
}
