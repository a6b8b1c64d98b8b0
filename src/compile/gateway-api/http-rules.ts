/**
 * HTTPRoute and GRPCRoute rules → VirtualService HTTP routes (istiod's convertHTTPRoute and
 * convertGRPCRoute). A rule is split into one route per match, so that the spec's precedence can
 * order matches across rules and routes (precedence.ts). Routes are named by the rule's `name`, or
 * `<namespace>.<route>.<rule index>`.
 */
import type {
  GRPCRoute,
  GRPCRouteMatch,
  HTTPBackendRef,
  HTTPRoute,
  HTTPRouteFilter,
  HTTPRouteMatch,
  HTTPRouteRule,
  HeaderModifier,
} from '../../model/gateway-api.js';
import type {
  CorsPolicy,
  HeaderOperations,
  HTTPMatchRequest,
  HTTPRedirect,
  HTTPRewrite,
  HTTPRoute as IstioHttpRoute,
  HTTPRouteDestination,
  StringMatch,
} from '../../model/istio.js';
import { resolveBackend, type BackendContext } from './backends.js';
import { joinErrors, type ConfigError } from './status.js';

/** A problem and the field of the route it is about (`spec.rules[0].backendRefs[1]`). */
export interface Problem {
  readonly field: string;
  readonly error: ConfigError;
}

export interface RuleConversion {
  readonly routes: readonly IstioHttpRoute[];
  /** Each problem once, with its field, for diagnostics. */
  readonly problems: readonly Problem[];
  /** Reported on ResolvedRefs; the routes still apply. */
  readonly error?: ConfigError;
  /** The route cannot be converted at all for this kind of parent: no routes. */
  readonly fatal?: ConfigError;
}

class Failure {
  constructor(
    readonly error: ConfigError,
    readonly field: string,
  ) {}
}

const unsupportedFilter = (type: string, field: string): Failure =>
  new Failure({ reason: 'InvalidFilter', message: `unsupported filter type "${type}"` }, field);

type Report = (field: string, error: ConfigError) => void;

export function convertHttpRules(route: HTTPRoute, ctx: BackendContext): RuleConversion {
  const out: IstioHttpRoute[] = [];
  const problems: Problem[] = [];
  let error: ConfigError | undefined;
  const report: Report = (field, e) => {
    if (!problems.some((p) => p.field === field)) problems.push({ field, error: e });
  };
  try {
    route.spec.rules.forEach((rule, n) => {
      for (const match of rule.matches.length ? rule.matches : [undefined]) {
        const r = httpRule(route, rule, n, match, ctx, report);
        out.push(r.route);
        error = joinErrors(error, r.error);
      }
    });
  } catch (e) {
    if (e instanceof Failure) return { routes: [], problems: [{ field: e.field, error: e.error }], fatal: e.error };
    throw e;
  }
  return { routes: out, problems, ...(error ? { error } : {}) };
}

function httpRule(
  route: HTTPRoute,
  rule: HTTPRouteRule,
  n: number,
  match: HTTPRouteMatch | undefined,
  ctx: BackendContext,
  report: Report,
): { route: IstioHttpRoute; error?: ConfigError } {
  let error: ConfigError | undefined;
  const at = `spec.rules[${n}]`;
  let headers: { request?: HeaderOperations; response?: HeaderOperations } | undefined;
  let redirect: HTTPRedirect | undefined;
  let rewrite: HTTPRewrite | undefined;
  let corsPolicy: CorsPolicy | undefined;
  const mirrors: NonNullable<IstioHttpRoute['mirrors']>[number][] = [];
  for (const [i, f] of rule.filters.entries()) {
    switch (f.type) {
      case 'RequestHeaderModifier':
        headers = { ...headers, request: headerOps(f.requestHeaderModifier) };
        break;
      case 'ResponseHeaderModifier':
        headers = { ...headers, response: headerOps(f.responseHeaderModifier) };
        break;
      case 'RequestRedirect':
        redirect = redirectOf(f.requestRedirect);
        break;
      case 'URLRewrite':
        rewrite = rewriteOf(f.urlRewrite);
        break;
      case 'RequestMirror': {
        const b = resolveBackend(ctx, f.requestMirror.backendRef);
        const field = `${at}.filters[${i}].requestMirror.backendRef`;
        if ('fatal' in b) throw new Failure(b.fatal, field);
        if ('invalid' in b) {
          error = joinErrors(error, b.invalid);
          report(field, b.invalid);
        } else
          mirrors.push({
            destination: b.destination,
            ...(f.requestMirror.percent !== undefined ? { percentage: { value: f.requestMirror.percent } } : {}),
          });
        break;
      }
      case 'CORS':
        corsPolicy = corsOf(f.cors);
        break;
      default:
        throw unsupportedFilter(f.type, `${at}.filters[${i}]`);
    }
  }
  const timing = timeouts(rule);
  const base: IstioHttpRoute = {
    name: rule.name ?? `${route.meta.namespace}.${route.meta.name}.${n}`,
    ...(match ? { match: [httpMatch(match)] } : {}),
    ...(headers ? { headers } : {}),
    ...(redirect ? { redirect } : {}),
    ...(rewrite ? { rewrite } : {}),
    ...(mirrors.length ? { mirrors } : {}),
    ...(corsPolicy ? { corsPolicy } : {}),
    ...timing,
  };
  if (redirect) return { route: base, ...(error ? { error } : {}) };
  const backends = destinations(rule.backendRefs, ctx, `${at}.backendRefs`, report);
  error = joinErrors(backends.error, error);
  return {
    route: backends.route.length ? { ...base, route: backends.route } : { ...base, directResponse: { status: 500 } },
    ...(error ? { error } : {}),
  };
}

/** Backends with weight > 0 that resolve; invalid ones are left out (a rule left with none answers 500). */
function destinations(
  refs: readonly (HTTPBackendRef | (Omit<HTTPBackendRef, 'filters'> & { filters: readonly HTTPRouteFilter[] }))[],
  ctx: BackendContext,
  path: string,
  report: Report,
): { route: HTTPRouteDestination[]; error?: ConfigError } {
  let error: ConfigError | undefined;
  const kept: HTTPRouteDestination[] = [];
  for (const [j, ref] of refs.entries()) {
    if (ref.weight === 0) continue;
    const b = resolveBackend(ctx, ref);
    if ('fatal' in b) throw new Failure(b.fatal, `${path}[${j}]`);
    if ('invalid' in b) {
      error = joinErrors(error, b.invalid);
      report(`${path}[${j}]`, b.invalid);
      continue;
    }
    let headers: { request?: HeaderOperations; response?: HeaderOperations } | undefined;
    for (const [k, f] of ref.filters.entries()) {
      if (f.type === 'RequestHeaderModifier') headers = { ...headers, request: headerOps(f.requestHeaderModifier) };
      else if (f.type === 'ResponseHeaderModifier')
        headers = { ...headers, response: headerOps(f.responseHeaderModifier) };
      else throw unsupportedFilter(f.type, `${path}[${j}].filters[${k}]`);
    }
    kept.push({ destination: b.destination, weight: ref.weight, ...(headers ? { headers } : {}) });
  }
  // One destination takes everything: istiod writes it without a weight.
  const route = kept.length === 1 ? [withoutWeight(kept[0] as HTTPRouteDestination)] : kept;
  return { route, ...(error ? { error } : {}) };
}

function withoutWeight(d: HTTPRouteDestination): HTTPRouteDestination {
  const { weight: _weight, ...rest } = d;
  return rest;
}

function timeouts(rule: HTTPRouteRule): Pick<IstioHttpRoute, 'timeoutMs' | 'retries'> {
  let retries: IstioHttpRoute['retries'];
  if (rule.retry) {
    const attempts = rule.retry.attempts ?? 2;
    const retryOn = ['connect-failure', 'refused-stream', 'unavailable', 'cancelled', ...rule.retry.codes.map(String)];
    retries = { attempts, ...(attempts > 0 ? { retryOn: retryOn.join(',') } : {}) };
  }
  let timeoutMs: number | undefined;
  const request = rule.timeouts?.requestMs;
  const backend = rule.timeouts?.backendRequestMs;
  if (request) timeoutMs = request;
  if (backend) {
    if (retries) retries = { ...retries, perTryTimeoutMs: backend };
    else timeoutMs = backend;
  }
  return { ...(timeoutMs !== undefined ? { timeoutMs } : {}), ...(retries ? { retries } : {}) };
}

/** Header names lower-cased; a later entry for the same name is ignored, as the spec says. */
function headerOps(m: HeaderModifier): HeaderOperations {
  const toMap = (list: HeaderModifier['set']): Record<string, string> | undefined => {
    if (!list.length) return undefined;
    const out: Record<string, string> = {};
    for (const h of list) {
      const k = h.name.toLowerCase();
      if (!Object.hasOwn(out, k)) out[k] = h.value;
    }
    return out;
  };
  const set = toMap(m.set);
  const add = toMap(m.add);
  return { ...(set ? { set } : {}), ...(add ? { add } : {}), ...(m.remove.length ? { remove: m.remove } : {}) };
}

function redirectOf(f: Extract<HTTPRouteFilter, { type: 'RequestRedirect' }>['requestRedirect']): HTTPRedirect {
  return {
    redirectCode: f.statusCode,
    ...(f.hostname !== undefined ? { authority: f.hostname } : {}),
    ...(f.scheme !== undefined ? { scheme: f.scheme } : {}),
    // "When empty, port (if specified) of the request is used", or the scheme's default.
    ...(f.port !== undefined
      ? { port: f.port }
      : { derivePort: f.scheme !== undefined ? ('FROM_PROTOCOL_DEFAULT' as const) : ('FROM_REQUEST_PORT' as const) }),
    ...(f.path?.type === 'ReplaceFullPath' ? { uri: f.path.replaceFullPath } : {}),
    ...(f.path?.type === 'ReplacePrefixMatch' ? { prefixRewrite: f.path.replacePrefixMatch } : {}),
  };
}

function rewriteOf(f: Extract<HTTPRouteFilter, { type: 'URLRewrite' }>['urlRewrite']): HTTPRewrite | undefined {
  let uri: string | undefined;
  let uriRegexRewrite: HTTPRewrite['uriRegexRewrite'];
  if (f.path?.type === 'ReplacePrefixMatch') uri = f.path.replacePrefixMatch.replace(/\/$/, '') || '/';
  else if (f.path?.type === 'ReplaceFullPath') uriRegexRewrite = { match: '/.*', rewrite: f.path.replaceFullPath };
  if (uri === undefined && !uriRegexRewrite && f.hostname === undefined) return undefined;
  return {
    ...(uri !== undefined ? { uri } : {}),
    ...(uriRegexRewrite ? { uriRegexRewrite } : {}),
    ...(f.hostname !== undefined ? { authority: f.hostname } : {}),
  };
}

/** istiod's createCorsFilter: `*` any origin, a trailing `*` a prefix, other wildcards a regex. */
function corsOf(f: Extract<HTTPRouteFilter, { type: 'CORS' }>['cors']): CorsPolicy {
  const allowOrigins: StringMatch[] = [];
  for (const o of f.allowOrigins) {
    if (o === '') continue;
    if (o === '*') allowOrigins.push({ regex: '^[a-zA-Z][a-zA-Z0-9+.-]*://[^/\\s?#]+$' });
    else if (!o.includes('*')) allowOrigins.push({ exact: o });
    else if (o.indexOf('*') === o.length - 1) allowOrigins.push({ prefix: o.slice(0, -1) });
    else allowOrigins.push({ regex: `^${o.replace(/[\\.+?()|[\]{}^$]/g, '\\$&').replaceAll('*', '.*')}$` });
  }
  return {
    ...(allowOrigins.length ? { allowOrigins } : {}),
    ...(f.allowCredentials ? { allowCredentials: true } : {}),
    ...(f.allowMethods.length ? { allowMethods: f.allowMethods } : {}),
    ...(f.allowHeaders.length ? { allowHeaders: f.allowHeaders } : {}),
    ...(f.exposeHeaders.length ? { exposeHeaders: f.exposeHeaders } : {}),
    ...(f.maxAge > 0 ? { maxAgeMs: f.maxAge * 1000 } : {}),
  };
}

function stringMatch(type: 'Exact' | 'RegularExpression', value: string): StringMatch {
  return type === 'Exact' ? { exact: value } : { regex: value };
}

function valueMap(list: readonly { type: 'Exact' | 'RegularExpression'; name: string; value: string }[]) {
  if (!list.length) return undefined;
  return Object.fromEntries(list.map((m) => [m.name, stringMatch(m.type, m.value)]));
}

function httpMatch(m: HTTPRouteMatch): HTTPMatchRequest {
  const { type, value } = m.path;
  const uri: StringMatch =
    type === 'Exact'
      ? { exact: value }
      : type === 'RegularExpression'
        ? { regex: value }
        : { prefix: value !== '/' ? value.replace(/\/$/, '') : value };
  const headers = valueMap(m.headers);
  const queryParams = valueMap(m.queryParams);
  return {
    uri,
    ...(headers ? { headers } : {}),
    ...(queryParams ? { queryParams } : {}),
    ...(m.method !== undefined ? { method: { exact: m.method } } : {}),
  };
}

export function convertGrpcRules(route: GRPCRoute, ctx: BackendContext): RuleConversion {
  const out: IstioHttpRoute[] = [];
  const problems: Problem[] = [];
  let error: ConfigError | undefined;
  const report: Report = (field, e) => {
    if (!problems.some((p) => p.field === field)) problems.push({ field, error: e });
  };
  try {
    route.spec.rules.forEach((rule, n) => {
      const at = `spec.rules[${n}]`;
      let headers: { request?: HeaderOperations; response?: HeaderOperations } | undefined;
      const mirrors: NonNullable<IstioHttpRoute['mirrors']>[number][] = [];
      for (const [i, f] of rule.filters.entries()) {
        if (f.type === 'RequestHeaderModifier') headers = { ...headers, request: headerOps(f.requestHeaderModifier) };
        else if (f.type === 'ResponseHeaderModifier')
          headers = { ...headers, response: headerOps(f.responseHeaderModifier) };
        else if (f.type === 'RequestMirror') {
          const b = resolveBackend(ctx, f.requestMirror.backendRef);
          if ('destination' in b)
            mirrors.push({
              destination: b.destination,
              ...(f.requestMirror.percent !== undefined ? { percentage: { value: f.requestMirror.percent } } : {}),
            });
          else throw new Failure('fatal' in b ? b.fatal : b.invalid, `${at}.filters[${i}].requestMirror.backendRef`);
        } else throw unsupportedFilter(f.type, `${at}.filters[${i}]`);
      }
      const backends = destinations(rule.backendRefs, ctx, `${at}.backendRefs`, report);
      error = joinErrors(error, backends.error);
      for (const match of rule.matches.length ? rule.matches : [undefined]) {
        const m = match ? grpcMatch(match) : undefined;
        out.push({
          name: rule.name ?? `${route.meta.namespace}.${route.meta.name}.${n}`,
          ...(m ? { match: [m] } : {}),
          ...(headers ? { headers } : {}),
          ...(mirrors.length ? { mirrors } : {}),
          ...(backends.route.length ? { route: backends.route } : { directResponse: { status: 500 } }),
        });
      }
    });
  } catch (e) {
    if (e instanceof Failure) return { routes: [], problems: [{ field: e.field, error: e.error }], fatal: e.error };
    throw e;
  }
  return { routes: out, problems, ...(error ? { error } : {}) };
}

/** gRPC calls are `POST /<service>/<method>`: istiod's createGRPCURIMatch. */
function grpcMatch(m: GRPCRouteMatch): HTTPMatchRequest | undefined {
  let uri: StringMatch | undefined;
  const method = m.method;
  if (method) {
    const { service, method: name } = method;
    if (method.type === 'Exact') {
      if (name === undefined) uri = { prefix: `/${service}/` };
      else if (service === undefined) uri = { regex: `/[^/]+/${name}` };
      else uri = { exact: `/${service}/${name}` };
    } else if (name === undefined) uri = { regex: `/${service}/.+` };
    else if (service === undefined) uri = { regex: `/[^/]+/${name}` };
    else uri = { regex: `/${service}/${name}` };
  }
  const headers = valueMap(m.headers);
  if (!uri && !headers) return {};
  return { ...(uri ? { uri } : {}), ...(headers ? { headers } : {}) };
}
