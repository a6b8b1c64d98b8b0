/**
 * Envoy's route selection inside a virtual host: routes are tried in order and the first whose
 * `match` holds wins (Envoy's route docs). A match holds when its path specifier (`prefix`, `path`,
 * `safe_regex`, `path_separated_prefix`), every `headers` matcher and every `query_parameters`
 * matcher hold. `case_sensitive` (default true) applies to prefix and path, not to regexes.
 * `runtime_fraction` cannot be decided offline: it is assumed to hold, and noted. Pure.
 */
import { num, obj, objects, str, type JsonObject } from './json.js';
import { describeStringMatch, regexFullMatch, regexOf, stringMatches } from './string-match.js';

export interface HttpRequestView {
  readonly method: string;
  /** Path with query string. */
  readonly path: string;
  readonly authority: string;
  readonly scheme: 'http' | 'https';
  readonly headers: Readonly<Record<string, string>>;
}

export type RouteVerdict =
  | { readonly matched: true; readonly why: string[]; readonly notes: string[] }
  | { readonly matched: false; readonly reason: string };

/** Splits `/a/b?x=1&y` into the path and its query parameters (first value of a repeated name wins, as in Envoy). */
export function splitPath(pathAndQuery: string): { path: string; query: Map<string, string> } {
  const noFragment = pathAndQuery.split('#')[0] as string;
  const q = noFragment.indexOf('?');
  const path = q < 0 ? noFragment : noFragment.slice(0, q);
  const query = new Map<string, string>();
  if (q >= 0)
    for (const part of noFragment.slice(q + 1).split('&')) {
      if (part === '') continue;
      const eq = part.indexOf('=');
      const name = decodeSafe(eq < 0 ? part : part.slice(0, eq));
      if (!query.has(name)) query.set(name, eq < 0 ? '' : decodeSafe(part.slice(eq + 1)));
    }
  return { path, query };
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** The request's value of a header, pseudo-headers included. */
function headerValue(req: HttpRequestView, name: string): string | undefined {
  switch (name) {
    case ':method':
      return req.method;
    case ':path':
      return req.path;
    case ':authority':
    case 'host':
      return req.authority;
    case ':scheme':
      return req.scheme;
    default:
      return req.headers[name];
  }
}

function pathVerdict(match: JsonObject, path: string): { ok: boolean; text: string } {
  const sensitive = match.case_sensitive !== false;
  const fold = (s: string) => (sensitive ? s : s.toLowerCase());
  const ci = sensitive ? '' : ' (case-insensitive)';
  const prefix = str(match.prefix);
  if (prefix !== undefined)
    return { ok: fold(path).startsWith(fold(prefix)), text: `path prefix ${JSON.stringify(prefix)}${ci}` };
  const exact = str(match.path);
  if (exact !== undefined) return { ok: fold(path) === fold(exact), text: `path ${JSON.stringify(exact)}${ci}` };
  const regex = regexOf(match.safe_regex);
  if (regex !== undefined) return { ok: regexFullMatch(regex, path), text: `path regex ${JSON.stringify(regex)}` };
  const separated = str(match.path_separated_prefix);
  if (separated !== undefined) {
    const p = fold(path);
    const s = fold(separated);
    return {
      ok: p === s || p.startsWith(s.endsWith('/') ? s : `${s}/`),
      text: `path-separated prefix ${JSON.stringify(separated)}${ci}`,
    };
  }
  if (match.connect_matcher !== undefined) return { ok: false, text: 'CONNECT requests only' };
  if (match.path_match_policy !== undefined)
    return { ok: false, text: 'a path match policy explain does not evaluate' };
  return { ok: false, text: 'no path specifier' };
}

/** The deprecated HeaderMatcher fields (`exact_match`, `prefix_match`, …) as the StringMatcher they mean. */
function legacyStringMatch(m: JsonObject): JsonObject | undefined {
  for (const key of ['exact', 'prefix', 'suffix', 'contains'] as const) {
    const v = str(m[`${key}_match`]);
    if (v !== undefined) return { [key]: v };
  }
  return m.safe_regex_match !== undefined ? { safe_regex: m.safe_regex_match } : undefined;
}

/** Envoy's HeaderMatcher: one verdict and a phrase for it. */
export function headerVerdict(m: JsonObject, req: HttpRequestView): { ok: boolean; text: string } {
  const name = (str(m.name) ?? '').toLowerCase();
  let value = headerValue(req, name);
  if (value === undefined && m.treat_missing_header_as_empty === true) value = '';
  const invert = m.invert_match === true;
  let ok: boolean;
  let what: string;
  const stringMatch = obj(m.string_match) ?? legacyStringMatch(m);
  const range = obj(m.range_match);
  if (m.present_match !== undefined) {
    ok = (value !== undefined) === (m.present_match === true);
    what = m.present_match === true ? 'present' : 'absent';
  } else if (stringMatch) {
    ok = value !== undefined && stringMatches(stringMatch, value);
    what = describeStringMatch(stringMatch);
  } else if (range) {
    const start = num(range.start) ?? 0;
    const end = num(range.end) ?? 0;
    const n = value !== undefined && /^-?[0-9]+$/.test(value) ? Number(value) : undefined;
    ok = n !== undefined && n >= start && n < end;
    what = `in [${start}, ${end})`;
  } else {
    // No matcher at all: Envoy matches when the header is present.
    ok = value !== undefined;
    what = 'present';
  }
  if (invert) ok = !ok;
  const shown = value === undefined ? 'absent' : JSON.stringify(value);
  return { ok, text: `header ${name} ${invert ? 'not ' : ''}${what} (request: ${shown})` };
}

function queryVerdict(m: JsonObject, query: ReadonlyMap<string, string>): { ok: boolean; text: string } {
  const name = str(m.name) ?? '';
  const value = query.get(name);
  const stringMatch = obj(m.string_match);
  const shown = value === undefined ? 'absent' : JSON.stringify(value);
  if (stringMatch)
    return {
      ok: value !== undefined && stringMatches(stringMatch, value),
      text: `query parameter ${name} ${describeStringMatch(stringMatch)} (request: ${shown})`,
    };
  // present_match, or no matcher: presence.
  return { ok: value !== undefined, text: `query parameter ${name} present (request: ${shown})` };
}

function runtimeNote(match: JsonObject): string | undefined {
  const fraction = obj(match.runtime_fraction);
  if (!fraction) return undefined;
  const value = obj(fraction.default_value);
  const numerator = num(value?.numerator) ?? 0;
  const denominator = str(value?.denominator) ?? 'HUNDRED';
  const scale = denominator === 'MILLION' ? 10000 : denominator === 'TEN_THOUSAND' ? 100 : 1;
  const key = str(fraction.runtime_key);
  return `runtime fraction ${numerator / scale}%${key ? ` (runtime key ${key})` : ''} assumed to hold`;
}

/** Whether `route` matches the request, with each condition that held, or the first that did not. */
export function matchRoute(route: JsonObject, req: HttpRequestView): RouteVerdict {
  const match = obj(route.match) ?? {};
  const { path, query } = splitPath(req.path);
  const why: string[] = [];
  const p = pathVerdict(match, path);
  if (!p.ok) return { matched: false, reason: `${p.text} does not match ${JSON.stringify(path)}` };
  why.push(`${p.text} matches ${JSON.stringify(path)}`);
  for (const h of objects(match.headers)) {
    const v = headerVerdict(h, req);
    if (!v.ok) return { matched: false, reason: `${v.text} does not hold` };
    why.push(v.text);
  }
  for (const q of objects(match.query_parameters)) {
    const v = queryVerdict(q, query);
    if (!v.ok) return { matched: false, reason: `${v.text} does not hold` };
    why.push(v.text);
  }
  if (match.grpc !== undefined) {
    const ct = req.headers['content-type'] ?? '';
    if (!ct.startsWith('application/grpc'))
      return { matched: false, reason: 'gRPC requests only (content-type application/grpc)' };
    why.push('gRPC request');
  }
  const notes: string[] = [];
  const runtime = runtimeNote(match);
  if (runtime) notes.push(runtime);
  if (match.tls_context !== undefined) notes.push('tls_context match not evaluated (assumed to hold)');
  if (objects(match.dynamic_metadata).length > 0) notes.push('dynamic_metadata match not evaluated (assumed to hold)');
  if (match.filter_state !== undefined) notes.push('filter_state match not evaluated (assumed to hold)');
  return { matched: true, why, notes };
}

/** The first route that matches, and why each one before it did not. */
export function firstMatchingRoute(
  routes: readonly JsonObject[],
  req: HttpRequestView,
): {
  matched?: { index: number; route: JsonObject; why: string[]; notes: string[] };
  skipped: { index: number; route: JsonObject; reason: string }[];
} {
  const skipped: { index: number; route: JsonObject; reason: string }[] = [];
  for (const [index, route] of routes.entries()) {
    const v = matchRoute(route, req);
    if (v.matched) return { matched: { index, route, why: v.why, notes: v.notes }, skipped };
    skipped.push({ index, route, reason: v.reason });
  }
  return { skipped };
}
