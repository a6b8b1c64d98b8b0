/**
 * HTTPRoute and GRPCRoute filters (apis/v1/httproute_types.go HTTPRouteFilter): the type names
 * which one member is set, and the members' own rules.
 */
import type {
  CorsFilter,
  HTTPRouteFilter,
  PathModifier,
  RequestMirrorFilter,
  RequestRedirectFilter,
  UrlRewriteFilter,
} from '../../../model/gateway-api.js';
import { bool, fields, get, int, list, str, strList, type Reader } from '../reader.js';
import { BACKEND_REF_FIELDS, backendObjectRef, headerModifier, hostname } from './common.js';

const MEMBER = {
  RequestHeaderModifier: 'requestHeaderModifier',
  ResponseHeaderModifier: 'responseHeaderModifier',
  RequestRedirect: 'requestRedirect',
  URLRewrite: 'urlRewrite',
  RequestMirror: 'requestMirror',
  CORS: 'cors',
  ExtensionRef: 'extensionRef',
} as const;
type FilterType = keyof typeof MEMBER;

/** A list of filters of the allowed types; the CEL rules on repeats and redirect + rewrite. */
export function filterList(r: Reader, v: unknown, path: string, allowed: readonly FilterType[]): HTTPRouteFilter[] {
  const out =
    list(r, v, path, (item, p) => filter(r, item, p, allowed), 16)?.filter((f): f is HTTPRouteFilter => !!f) ?? [];
  const count = (t: string) => out.filter((f) => f.type === t).length;
  for (const t of ['CORS', 'RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestRedirect', 'URLRewrite'])
    if (count(t) > 1) r.error(path, `${t} filter cannot be repeated`);
  if (count('RequestRedirect') > 0 && count('URLRewrite') > 0)
    r.error(path, 'May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both');
  return out;
}

function filter(r: Reader, v: unknown, p: string, allowed: readonly FilterType[]): HTTPRouteFilter | undefined {
  const o = fields(r, v, p, ['type', ...Object.values(MEMBER)]);
  if (!o) return undefined;
  const type = str(r, get(o, 'type'), `${p}.type`);
  if (type === undefined) {
    r.error(`${p}.type`, 'is required', 'missing-field');
    return undefined;
  }
  if (!(allowed as readonly string[]).includes(type)) {
    r.error(`${p}.type`, `"${type.slice(0, 40)}" must be one of ${allowed.join(', ')}`);
    return undefined;
  }
  const t = type as FilterType;
  for (const [ft, member] of Object.entries(MEMBER)) {
    const set = get(o, member) != null;
    if (set && ft !== t) r.error(`${p}.${member}`, `filter.${member} must be nil if the filter.type is not ${ft}`);
    if (!set && ft === t)
      r.error(`${p}.${member}`, `filter.${member} must be specified for ${ft} filter.type`, 'missing-field');
  }
  const body = get(o, MEMBER[t]);
  const at = `${p}.${MEMBER[t]}`;
  switch (t) {
    case 'RequestHeaderModifier': {
      const m = headerModifier(r, body, at);
      return m && { type: t, requestHeaderModifier: m };
    }
    case 'ResponseHeaderModifier': {
      const m = headerModifier(r, body, at);
      return m && { type: t, responseHeaderModifier: m };
    }
    case 'RequestRedirect': {
      const m = redirect(r, body, at);
      return m && { type: t, requestRedirect: m };
    }
    case 'URLRewrite': {
      const m = rewrite(r, body, at);
      return m && { type: t, urlRewrite: m };
    }
    case 'RequestMirror': {
      const m = mirror(r, body, at);
      return m && { type: t, requestMirror: m };
    }
    case 'CORS': {
      const m = cors(r, body, at);
      return m && { type: t, cors: m };
    }
    case 'ExtensionRef':
      fields(r, body, at, ['group', 'kind', 'name']);
      return { type: t };
  }
}

function pathModifier(r: Reader, v: unknown, p: string): PathModifier | undefined {
  const o = fields(r, v, p, ['type', 'replaceFullPath', 'replacePrefixMatch']);
  if (!o) return undefined;
  const type = str(r, get(o, 'type'), `${p}.type`);
  const full = str(r, get(o, 'replaceFullPath'), `${p}.replaceFullPath`);
  const prefix = str(r, get(o, 'replacePrefixMatch'), `${p}.replacePrefixMatch`);
  for (const s of [full, prefix])
    if (s !== undefined && s.length > 1024) r.error(p, 'paths are at most 1024 characters');
  if (type === 'ReplaceFullPath' && full !== undefined && prefix === undefined) return { type, replaceFullPath: full };
  if (type === 'ReplacePrefixMatch' && prefix !== undefined && full === undefined)
    return { type, replacePrefixMatch: prefix };
  if (type === 'ReplaceFullPath') r.error(p, "replaceFullPath must be specified when type is set to 'ReplaceFullPath'");
  else if (type === 'ReplacePrefixMatch')
    r.error(p, "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'");
  else r.error(`${p}.type`, 'must be ReplaceFullPath or ReplacePrefixMatch');
  return undefined;
}

function redirect(r: Reader, v: unknown, p: string): RequestRedirectFilter | undefined {
  const o = fields(r, v, p, ['scheme', 'hostname', 'path', 'port', 'statusCode']);
  if (!o) return undefined;
  const scheme = str(r, get(o, 'scheme'), `${p}.scheme`);
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') r.error(`${p}.scheme`, 'must be http or https');
  const host = hostname(r, get(o, 'hostname'), `${p}.hostname`, true);
  const path = get(o, 'path') != null ? pathModifier(r, get(o, 'path'), `${p}.path`) : undefined;
  const port = int(r, get(o, 'port'), `${p}.port`, 1, 65535);
  const statusCode = int(r, get(o, 'statusCode'), `${p}.statusCode`, 0, 999) ?? 302;
  if (![301, 302, 303, 307, 308].includes(statusCode)) r.error(`${p}.statusCode`, 'must be 301, 302, 303, 307 or 308');
  return {
    ...(scheme === 'http' || scheme === 'https' ? { scheme } : {}),
    ...(host !== undefined ? { hostname: host } : {}),
    ...(path ? { path } : {}),
    ...(port !== undefined ? { port } : {}),
    statusCode,
  };
}

function rewrite(r: Reader, v: unknown, p: string): UrlRewriteFilter | undefined {
  const o = fields(r, v, p, ['hostname', 'path']);
  if (!o) return undefined;
  const host = hostname(r, get(o, 'hostname'), `${p}.hostname`, true);
  const path = get(o, 'path') != null ? pathModifier(r, get(o, 'path'), `${p}.path`) : undefined;
  return { ...(host !== undefined ? { hostname: host } : {}), ...(path ? { path } : {}) };
}

function mirror(r: Reader, v: unknown, p: string): RequestMirrorFilter | undefined {
  const o = fields(r, v, p, ['backendRef', 'percent', 'fraction']);
  if (!o) return undefined;
  const ref = fields(r, get(o, 'backendRef'), `${p}.backendRef`, BACKEND_REF_FIELDS);
  if (!ref) r.error(`${p}.backendRef`, 'is required', 'missing-field');
  const backendRef = ref ? backendObjectRef(r, ref, `${p}.backendRef`) : undefined;
  const percent = int(r, get(o, 'percent'), `${p}.percent`, 0, 100);
  const fraction = fields(r, get(o, 'fraction'), `${p}.fraction`, ['numerator', 'denominator']);
  if (percent !== undefined && fraction)
    r.error(p, 'Only one of percent or fraction may be specified in HTTPRequestMirrorFilter');
  let share = percent;
  if (fraction) {
    const num = int(r, get(fraction, 'numerator'), `${p}.fraction.numerator`, 0) ?? 0;
    const den = int(r, get(fraction, 'denominator'), `${p}.fraction.denominator`, 1) ?? 100;
    if (num > den) r.error(`${p}.fraction`, 'numerator must be less than or equal to denominator');
    share = (100 * num) / den;
  }
  if (!backendRef) return undefined;
  return { backendRef, ...(share !== undefined ? { percent: share } : {}) };
}

function cors(r: Reader, v: unknown, p: string): CorsFilter | undefined {
  const o = fields(r, v, p, [
    'allowOrigins',
    'allowCredentials',
    'allowMethods',
    'allowHeaders',
    'exposeHeaders',
    'maxAge',
  ]);
  if (!o) return undefined;
  const allowOrigins = strList(r, get(o, 'allowOrigins'), `${p}.allowOrigins`, 64) ?? [];
  if (allowOrigins.includes('*') && allowOrigins.length > 1)
    r.error(`${p}.allowOrigins`, "AllowOrigins cannot contain '*' alongside other origins");
  const allowCredentials = bool(r, get(o, 'allowCredentials'), `${p}.allowCredentials`);
  const allowMethods = strList(r, get(o, 'allowMethods'), `${p}.allowMethods`, 9) ?? [];
  const allowHeaders = strList(r, get(o, 'allowHeaders'), `${p}.allowHeaders`, 64) ?? [];
  const exposeHeaders = strList(r, get(o, 'exposeHeaders'), `${p}.exposeHeaders`, 64) ?? [];
  const maxAge = int(r, get(o, 'maxAge'), `${p}.maxAge`, 1) ?? 5;
  return {
    allowOrigins,
    ...(allowCredentials !== undefined ? { allowCredentials } : {}),
    allowMethods,
    allowHeaders,
    exposeHeaders,
    maxAge,
  };
}

/** Whether a raw rule's filters include a `ReplacePrefixMatch` path modifier (CEL: needs one PathPrefix match). */
export function usesReplacePrefixMatch(filters: readonly HTTPRouteFilter[]): boolean {
  return filters.some(
    (f) =>
      (f.type === 'RequestRedirect' && f.requestRedirect.path?.type === 'ReplacePrefixMatch') ||
      (f.type === 'URLRewrite' && f.urlRewrite.path?.type === 'ReplacePrefixMatch'),
  );
}
