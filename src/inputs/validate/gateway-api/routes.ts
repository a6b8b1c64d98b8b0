/**
 * HTTPRoute, GRPCRoute (v1/v1beta1 resp. v1), TCPRoute and TLSRoute (v1alpha2) → model/gateway-api.ts,
 * with the CRDs' schema and CEL rules (apis/v1/httproute_types.go, grpcroute_types.go,
 * apis/v1alpha2/tcproute_types.go, tlsroute_types.go).
 */
import type { Origin } from '../../../model/diagnostics.js';
import type {
  GRPCBackendRef,
  GRPCMethodMatch,
  GRPCRoute,
  GRPCRouteFilter,
  GRPCRouteMatch,
  HTTPBackendRef,
  HTTPRoute,
  HTTPRouteMatch,
  HTTPRouteRule,
  L4BackendRef,
  L4RouteRule,
  TCPRoute,
  TLSRoute,
} from '../../../model/gateway-api.js';
import { regexProblem } from '../../../xds/re2.js';
import { fields, get, int, list, str, type Raw, type Reader } from '../reader.js';
import {
  BACKEND_REF_FIELDS,
  backendObjectRef,
  gwDuration,
  hostnames,
  parentRefs,
  readGatewayApiMeta,
  readSpec,
  sectionName,
  valueMatches,
  weight,
} from './common.js';
import { filterList, usesReplacePrefixMatch } from './filters.js';

const HTTP_FILTERS = [
  'RequestHeaderModifier',
  'ResponseHeaderModifier',
  'RequestRedirect',
  'URLRewrite',
  'RequestMirror',
  'CORS',
  'ExtensionRef',
] as const;
const GRPC_FILTERS = ['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestMirror', 'ExtensionRef'] as const;
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'];

export function readHTTPRoute(r: Reader, raw: Raw, origin: Origin, apiVersion: string): HTTPRoute | undefined {
  const meta = readGatewayApiMeta(r, raw, true);
  const spec = readSpec(r, raw, ['parentRefs', 'hostnames', 'rules', 'useDefaultGateways']);
  if (!spec) return undefined;
  if (get(spec, 'useDefaultGateways') != null)
    r.warn(
      'spec.useDefaultGateways',
      'useDefaultGateways is not applied (istiod does not implement default Gateways): the route attaches only to its parentRefs',
      'unsupported-field',
    );
  const refs = parentRefs(r, get(spec, 'parentRefs'), 'spec.parentRefs');
  const hosts = hostnames(r, get(spec, 'hostnames'), 'spec.hostnames');
  const rules = list(r, get(spec, 'rules'), 'spec.rules', (v, p) => httpRule(r, v, p), 16) ?? [defaultHttpRule()];
  if (rules.reduce((n, x) => n + x.matches.length, 0) > 128)
    r.error('spec.rules', 'the total number of matches across all rules in a route must be less than 128');
  uniqueRuleNames(r, rules);
  if (!meta || r.failed) return undefined;
  return { kind: 'HTTPRoute', apiVersion, meta, origin, spec: { parentRefs: refs, hostnames: hosts, rules } };
}

const DEFAULT_MATCH: HTTPRouteMatch = { path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] };
const defaultHttpRule = (): HTTPRouteRule => ({ matches: [DEFAULT_MATCH], filters: [], backendRefs: [] });

function httpRule(r: Reader, v: unknown, p: string): HTTPRouteRule | undefined {
  const o = fields(r, v, p, ['name', 'matches', 'filters', 'backendRefs', 'timeouts', 'retry', 'sessionPersistence']);
  if (!o) return undefined;
  sessionPersistence(r, o, p);
  const name = sectionName(r, get(o, 'name'), `${p}.name`);
  const matches = list(r, get(o, 'matches'), `${p}.matches`, (m, mp) => httpMatch(r, m, mp), 64) ?? [DEFAULT_MATCH];
  const filters = filterList(r, get(o, 'filters'), `${p}.filters`, HTTP_FILTERS);
  const backendRefs =
    list(
      r,
      get(o, 'backendRefs'),
      `${p}.backendRefs`,
      (b, bp): HTTPBackendRef | undefined => {
        const ref = fields(r, b, bp, [...BACKEND_REF_FIELDS, 'weight', 'filters']);
        if (!ref) return undefined;
        const base = backendObjectRef(r, ref, bp);
        const w = weight(r, get(ref, 'weight'), `${bp}.weight`);
        const f = filterList(r, get(ref, 'filters'), `${bp}.filters`, HTTP_FILTERS);
        return base && { ...base, weight: w, filters: f };
      },
      16,
    ) ?? [];
  if (backendRefs.length > 0 && filters.some((f) => f.type === 'RequestRedirect'))
    r.error(`${p}.filters`, 'RequestRedirect filter must not be used together with backendRefs');
  const prefixRewrite = usesReplacePrefixMatch(filters) || backendRefs.some((b) => usesReplacePrefixMatch(b.filters));
  if (prefixRewrite && (matches.length !== 1 || matches[0]?.path.type !== 'PathPrefix'))
    r.error(
      `${p}.matches`,
      'When using a filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified',
    );
  const timeouts = fields(r, get(o, 'timeouts'), `${p}.timeouts`, ['request', 'backendRequest']);
  const requestMs = timeouts ? gwDuration(r, get(timeouts, 'request'), `${p}.timeouts.request`) : undefined;
  const backendRequestMs = timeouts
    ? gwDuration(r, get(timeouts, 'backendRequest'), `${p}.timeouts.backendRequest`)
    : undefined;
  if (requestMs && backendRequestMs !== undefined && backendRequestMs > requestMs)
    r.error(`${p}.timeouts`, 'backendRequest timeout cannot be longer than request timeout');
  const retryRaw = fields(r, get(o, 'retry'), `${p}.retry`, ['codes', 'attempts', 'backoff']);
  const backoffMs = retryRaw ? gwDuration(r, get(retryRaw, 'backoff'), `${p}.retry.backoff`) : undefined;
  if (backoffMs === 0)
    r.warn(
      `${p}.retry.backoff`,
      "a zero backoff is not sent: Envoy requires a positive retry_back_off.base_interval (istiod sends it and the proxy rejects the routes); Envoy's default back-off applies",
      'ignored-field',
    );
  const retry = retryRaw
    ? {
        codes: list(r, get(retryRaw, 'codes'), `${p}.retry.codes`, (c, cp) => int(r, c, cp, 400, 599)) ?? [],
        ...optional('attempts', int(r, get(retryRaw, 'attempts'), `${p}.retry.attempts`, 0)),
        ...optional('backoffMs', backoffMs),
      }
    : undefined;
  return {
    ...(name !== undefined ? { name } : {}),
    matches,
    filters,
    backendRefs,
    ...(timeouts
      ? { timeouts: { ...optional('requestMs', requestMs), ...optional('backendRequestMs', backendRequestMs) } }
      : {}),
    ...(retry ? { retry } : {}),
  };
}

/** A rule's sessionPersistence: istiod's route conversion does not read it (nor does meshsnap). */
function sessionPersistence(r: Reader, rule: Raw, p: string): void {
  if (get(rule, 'sessionPersistence') == null) return;
  r.warn(
    `${p}.sessionPersistence`,
    'sessionPersistence is not applied (istiod does not implement it on routes): requests are not pinned to a backend',
    'unsupported-field',
  );
}

const optional = <K extends string, V>(key: K, v: V | undefined): Partial<Record<K, V>> =>
  (v === undefined ? {} : { [key]: v }) as Partial<Record<K, V>>;

const PATH_CHARS = /^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$/;

function httpMatch(r: Reader, v: unknown, p: string): HTTPRouteMatch | undefined {
  const o = fields(r, v, p, ['path', 'headers', 'queryParams', 'method']);
  if (!o) return undefined;
  const path = fields(r, get(o, 'path'), `${p}.path`, ['type', 'value']);
  const type = (path ? str(r, get(path, 'type'), `${p}.path.type`) : undefined) ?? 'PathPrefix';
  const value = (path ? str(r, get(path, 'value'), `${p}.path.value`) : undefined) ?? '/';
  if (type !== 'Exact' && type !== 'PathPrefix' && type !== 'RegularExpression')
    r.error(`${p}.path.type`, "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']");
  else if (type === 'RegularExpression') {
    const problem = regexProblem(value);
    if (problem) r.error(`${p}.path.value`, problem);
  } else checkPathValue(r, value, `${p}.path.value`);
  const method = str(r, get(o, 'method'), `${p}.method`);
  if (method !== undefined && !METHODS.includes(method)) r.error(`${p}.method`, `must be one of ${METHODS.join(', ')}`);
  return {
    path: { type: type as HTTPRouteMatch['path']['type'], value },
    headers: valueMatches(r, get(o, 'headers'), `${p}.headers`, true),
    queryParams: valueMatches(r, get(o, 'queryParams'), `${p}.queryParams`, false),
    ...(method !== undefined ? { method } : {}),
  };
}

/** The CEL rules on Exact and PathPrefix values. */
function checkPathValue(r: Reader, value: string, p: string): void {
  const problem = !value.startsWith('/')
    ? "value must be an absolute path and start with '/'"
    : value.length > 1024
      ? 'must be at most 1024 characters'
      : (['//', '/./', '/../', '%2f', '%2F', '#'].find((s) => value.includes(s)) ?? '') !== ''
        ? `must not contain '${['//', '/./', '/../', '%2f', '%2F', '#'].find((s) => value.includes(s))}'`
        : value.endsWith('/..') || value.endsWith('/.')
          ? "must not end with '/..' or '/.'"
          : !PATH_CHARS.test(value)
            ? 'must only contain valid path characters'
            : undefined;
  if (problem) r.error(p, problem);
}

function uniqueRuleNames(r: Reader, rules: readonly { readonly name?: string }[]): void {
  const names = new Set<string>();
  rules.forEach((x, i) => {
    if (x.name === undefined) return;
    if (names.has(x.name)) r.error(`spec.rules[${i}].name`, 'Rule name must be unique within the route');
    names.add(x.name);
  });
}

export function readGRPCRoute(r: Reader, raw: Raw, origin: Origin, apiVersion: string): GRPCRoute | undefined {
  const meta = readGatewayApiMeta(r, raw, true);
  const spec = readSpec(r, raw, ['parentRefs', 'hostnames', 'rules']);
  if (!spec) return undefined;
  const refs = parentRefs(r, get(spec, 'parentRefs'), 'spec.parentRefs');
  const hosts = hostnames(r, get(spec, 'hostnames'), 'spec.hostnames');
  const rules =
    list(
      r,
      get(spec, 'rules'),
      'spec.rules',
      (v, p) => {
        const o = fields(r, v, p, ['name', 'matches', 'filters', 'backendRefs', 'sessionPersistence']);
        if (!o) return undefined;
        sessionPersistence(r, o, p);
        const name = sectionName(r, get(o, 'name'), `${p}.name`);
        const matches = list(r, get(o, 'matches'), `${p}.matches`, (m, mp) => grpcMatch(r, m, mp), 64) ?? [];
        const filters = filterList(r, get(o, 'filters'), `${p}.filters`, GRPC_FILTERS) as GRPCRouteFilter[];
        const backendRefs =
          list(
            r,
            get(o, 'backendRefs'),
            `${p}.backendRefs`,
            (b, bp): GRPCBackendRef | undefined => {
              const ref = fields(r, b, bp, [...BACKEND_REF_FIELDS, 'weight', 'filters']);
              if (!ref) return undefined;
              const base = backendObjectRef(r, ref, bp);
              const w = weight(r, get(ref, 'weight'), `${bp}.weight`);
              const f = filterList(r, get(ref, 'filters'), `${bp}.filters`, GRPC_FILTERS) as GRPCRouteFilter[];
              return base && { ...base, weight: w, filters: f };
            },
            16,
          ) ?? [];
        return { ...(name !== undefined ? { name } : {}), matches, filters, backendRefs };
      },
      16,
    ) ?? [];
  uniqueRuleNames(r, rules);
  if (!meta || r.failed) return undefined;
  return { kind: 'GRPCRoute', apiVersion, meta, origin, spec: { parentRefs: refs, hostnames: hosts, rules } };
}

const GRPC_NAME = /^[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*$/;
const GRPC_METHOD = /^[A-Za-z_][A-Za-z_0-9]*$/;

function grpcMatch(r: Reader, v: unknown, p: string): GRPCRouteMatch | undefined {
  const o = fields(r, v, p, ['method', 'headers']);
  if (!o) return undefined;
  const m = fields(r, get(o, 'method'), `${p}.method`, ['type', 'service', 'method']);
  let method: GRPCMethodMatch | undefined;
  if (m) {
    const type = str(r, get(m, 'type'), `${p}.method.type`) ?? 'Exact';
    const service = str(r, get(m, 'service'), `${p}.method.service`);
    const name = str(r, get(m, 'method'), `${p}.method.method`);
    if (type !== 'Exact' && type !== 'RegularExpression')
      r.error(`${p}.method.type`, 'must be Exact or RegularExpression');
    if (service === undefined && name === undefined)
      r.error(`${p}.method`, 'One or both of service or method must be specified');
    if (type === 'Exact') {
      if (service !== undefined && !GRPC_NAME.test(service))
        r.error(`${p}.method.service`, 'service must only contain valid characters');
      if (name !== undefined && !GRPC_METHOD.test(name))
        r.error(`${p}.method.method`, 'method must only contain valid characters');
    } else {
      for (const [s, f] of [
        [service, 'service'],
        [name, 'method'],
      ] as const) {
        const problem = s !== undefined ? regexProblem(s) : undefined;
        if (problem) r.error(`${p}.method.${f}`, problem);
      }
    }
    method = {
      type: type === 'RegularExpression' ? type : 'Exact',
      ...(service !== undefined ? { service } : {}),
      ...(name !== undefined ? { method: name } : {}),
    };
  }
  return { ...(method ? { method } : {}), headers: valueMatches(r, get(o, 'headers'), `${p}.headers`, true) };
}

function l4Rules(r: Reader, v: unknown): L4RouteRule[] {
  const rules =
    list(
      r,
      v,
      'spec.rules',
      (item, p) => {
        const o = fields(r, item, p, ['name', 'backendRefs']);
        if (!o) return undefined;
        const name = sectionName(r, get(o, 'name'), `${p}.name`);
        const backendRefs =
          list(
            r,
            get(o, 'backendRefs'),
            `${p}.backendRefs`,
            (b, bp): L4BackendRef | undefined => {
              const ref = fields(r, b, bp, [...BACKEND_REF_FIELDS, 'weight']);
              const base = ref && backendObjectRef(r, ref, bp);
              return base && { ...base, weight: weight(r, get(ref as Raw, 'weight'), `${bp}.weight`) };
            },
            16,
          ) ?? [];
        if (backendRefs.length === 0) r.error(`${p}.backendRefs`, 'must have at least one backendRef', 'missing-field');
        return { ...(name !== undefined ? { name } : {}), backendRefs };
      },
      16,
    ) ?? [];
  if (rules.length === 0) r.error('spec.rules', 'must have at least one rule', 'missing-field');
  uniqueRuleNames(r, rules);
  return rules;
}

export function readTCPRoute(r: Reader, raw: Raw, origin: Origin, apiVersion: string): TCPRoute | undefined {
  const meta = readGatewayApiMeta(r, raw, true);
  const spec = readSpec(r, raw, ['parentRefs', 'rules']);
  if (!spec) return undefined;
  const refs = parentRefs(r, get(spec, 'parentRefs'), 'spec.parentRefs');
  const rules = l4Rules(r, get(spec, 'rules'));
  if (!meta || r.failed) return undefined;
  return { kind: 'TCPRoute', apiVersion, meta, origin, spec: { parentRefs: refs, rules } };
}

export function readTLSRoute(r: Reader, raw: Raw, origin: Origin, apiVersion: string): TLSRoute | undefined {
  const meta = readGatewayApiMeta(r, raw, true);
  const spec = readSpec(r, raw, ['parentRefs', 'hostnames', 'rules']);
  if (!spec) return undefined;
  const refs = parentRefs(r, get(spec, 'parentRefs'), 'spec.parentRefs');
  const hosts = hostnames(r, get(spec, 'hostnames'), 'spec.hostnames');
  const rules = l4Rules(r, get(spec, 'rules'));
  if (!meta || r.failed) return undefined;
  return { kind: 'TLSRoute', apiVersion, meta, origin, spec: { parentRefs: refs, hostnames: hosts, rules } };
}
