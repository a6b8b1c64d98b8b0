/**
 * HTTPRoute rules → VirtualService HTTP routes (istiod's convertHTTPRoute). A rule is split into
 * one route per match, so that the spec's precedence can order matches across rules and routes
 * (precedence.ts). Routes are named by the rule's `name`, or `<namespace>.<route>.<rule index>`.
 * GRPCRoutes: grpc-rules.ts; what both share: rule-parts.ts.
 */
import type { HTTPRoute, HTTPRouteFilter, HTTPRouteMatch, HTTPRouteRule } from '../../model/gateway-api.js';
import type {
  CorsPolicy,
  HeaderOperations,
  HTTPMatchRequest,
  HTTPRedirect,
  HTTPRewrite,
  HTTPRoute as IstioHttpRoute,
  StringMatch,
} from '../../model/istio.js';
import { resolveBackend, type BackendContext } from './backends.js';
import {
  destinations,
  convertRules,
  Failure,
  headerOps,
  unsupportedFilter,
  valueMap,
  type Report,
  type RuleConversion,
} from './rule-parts.js';
import { joinErrors, type ConfigError } from './status.js';

export type { Problem, RuleConversion } from './rule-parts.js';

export function convertHttpRules(route: HTTPRoute, ctx: BackendContext): RuleConversion {
  return convertRules(route.spec.rules, (rule, n, report) => {
    const routes: IstioHttpRoute[] = [];
    let error: ConfigError | undefined;
    for (const match of rule.matches.length ? rule.matches : [undefined]) {
      const r = httpRule(route, rule, n, match, ctx, report);
      routes.push(r.route);
      error = joinErrors(error, r.error);
    }
    return { routes, ...(error ? { error } : {}) };
  });
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

function timeouts(rule: HTTPRouteRule): Pick<IstioHttpRoute, 'timeoutMs' | 'retries'> {
  let retries: IstioHttpRoute['retries'];
  if (rule.retry) {
    const attempts = rule.retry.attempts ?? 2;
    const retryOn = ['connect-failure', 'refused-stream', 'unavailable', 'cancelled', ...rule.retry.codes.map(String)];
    retries = {
      attempts,
      ...(attempts > 0 ? { retryOn: retryOn.join(',') } : {}),
      // istiod's vs.Retries.Backoff → retry_back_off.base_interval; a zero one (Envoy requires > 0)
      // is left out, with the validator's warning.
      ...(rule.retry.backoffMs ? { backoffMs: rule.retry.backoffMs } : {}),
    };
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
