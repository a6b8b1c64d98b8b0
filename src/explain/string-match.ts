/**
 * Envoy's `type.matcher.v3.StringMatcher` (exact, prefix, suffix, contains, safe_regex; ignore_case)
 * and RE2 full matches, with re2js (pure JS: it runs in Workers too). Pure.
 */
import { RE2JS } from 're2js';
import { obj, str, type JsonObject } from './json.js';

const compiled = new Map<string, RE2JS | Error>();

/** Whether RE2 `pattern` matches all of `value` (Envoy's safe_regex semantics); an invalid pattern matches nothing. */
export function regexFullMatch(pattern: string, value: string): boolean {
  let re = compiled.get(pattern);
  if (re === undefined) {
    try {
      re = RE2JS.compile(pattern);
    } catch (e) {
      re = e instanceof Error ? e : new Error(String(e));
    }
    compiled.set(pattern, re);
  }
  return re instanceof RE2JS ? re.matches(value) : false;
}

/** The regex of a `RegexMatcher` (`{regex, google_re2}`). */
export const regexOf = (m: unknown): string | undefined => str(obj(m)?.regex);

export function stringMatches(matcher: JsonObject, value: string): boolean {
  const fold = matcher.ignore_case === true;
  const v = fold ? value.toLowerCase() : value;
  const want = (key: string): string | undefined => {
    const s = str(matcher[key]);
    return s !== undefined && fold ? s.toLowerCase() : s;
  };
  const exact = want('exact');
  if (exact !== undefined) return v === exact;
  const prefix = want('prefix');
  if (prefix !== undefined) return v.startsWith(prefix);
  const suffix = want('suffix');
  if (suffix !== undefined) return v.endsWith(suffix);
  const contains = want('contains');
  if (contains !== undefined) return v.includes(contains);
  const regex = regexOf(matcher.safe_regex);
  if (regex !== undefined) return regexFullMatch(regex, value);
  return false;
}

/** `exact "jason"`, `regex "^v[0-9]$"`: a StringMatcher as one short phrase. */
export function describeStringMatch(matcher: JsonObject): string {
  const ic = matcher.ignore_case === true ? ' (ignoring case)' : '';
  for (const key of ['exact', 'prefix', 'suffix', 'contains'] as const) {
    const s = str(matcher[key]);
    if (s !== undefined) return `${key} ${JSON.stringify(s)}${ic}`;
  }
  const regex = regexOf(matcher.safe_regex);
  if (regex !== undefined) return `regex ${JSON.stringify(regex)}`;
  return 'an unsupported string matcher';
}
