/**
 * VirtualService (networking.istio.io) → model/istio.ts.
 *
 * Semantic choice: any invalid part (one bad route, one bad regex) makes the WHOLE object invalid
 * and it is skipped, as istiod's validation webhook rejects whole objects. Keeping the valid rest
 * would silently change routing order (a later catch-all route would start matching first).
 */
import type { Origin } from '../../model/diagnostics.js';
import { INPUT_LIMITS } from '../limits.js';
import type {
  CorsPolicy,
  HTTPDirectResponse,
  HTTPFaultInjection,
  HTTPMatchRequest,
  HTTPMirrorPolicy,
  HTTPRedirect,
  HTTPRetry,
  HTTPRewrite,
  HTTPRoute,
  HTTPRouteDestination,
  HeaderOperations,
  Headers,
  L4MatchAttributes,
  RouteDestination,
  StringMatch,
  TCPRoute,
  TLSRoute,
  VirtualService,
} from '../../model/istio.js';
import { checkWeights, destination, intPercent, percent, weight } from './common-istio.js';
import { duration } from './duration.js';
import { readCreationTimestamp, readMeta } from './meta.js';
import {
  bool,
  compact,
  fields,
  get,
  int,
  list,
  mapOf,
  port,
  requiredStr,
  str,
  strList,
  strMap,
  type Raw,
  type Reader,
} from './reader.js';
import { regexProblem, stringMatch } from './string-match.js';
import { checkExportTo } from './export-to.js';

export function readVirtualService(
  r: Reader,
  raw: Raw,
  origin: Origin,
  apiVersion: string,
): VirtualService | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const spec = fields(r, get(raw, 'spec'), 'spec', ['hosts', 'gateways', 'http', 'tcp', 'tls', 'exportTo']);
  if (!spec) {
    r.error('spec', 'is required', 'missing-field');
    return undefined;
  }
  const hosts = strList(r, get(spec, 'hosts'), 'spec.hosts', INPUT_LIMITS.maxHosts);
  if (!hosts || hosts.length === 0) {
    if (!r.failed) r.error('spec.hosts', 'must list at least one host', 'missing-field');
  } else {
    hosts.forEach((h, i) => h === '' && r.error(`spec.hosts[${i}]`, 'must not be empty'));
  }
  const gateways = strList(r, get(spec, 'gateways'), 'spec.gateways');
  const exportTo = strList(r, get(spec, 'exportTo'), 'spec.exportTo');
  checkExportTo(r, exportTo, 'spec.exportTo', meta?.namespace ?? '', { allowNone: false });
  const http = list(r, get(spec, 'http'), 'spec.http', (v, p) => httpRoute(r, v, p), INPUT_LIMITS.maxHttpRoutes);
  const tcp = list(r, get(spec, 'tcp'), 'spec.tcp', (v, p) => tcpRoute(r, v, p));
  const tls = list(r, get(spec, 'tls'), 'spec.tls', (v, p) => tlsRoute(r, v, p));
  if (!http?.length && !tcp?.length && !tls?.length && !r.failed)
    r.error('spec', 'needs at least one of http, tcp, tls routes', 'missing-field');
  // Of several VirtualServices for one host a sidecar uses the oldest (of its tier).
  const created = readCreationTimestamp(r, raw);
  if (!meta || r.failed || !hosts) return undefined;
  return {
    kind: 'VirtualService',
    apiVersion,
    meta,
    ...(created !== undefined && created !== '' ? { creationTimestamp: created } : {}),
    origin,
    spec: compact({ hosts, gateways, http, tcp, tls, exportTo }),
  };
}

const HTTP_ROUTE_FIELDS = [
  'name',
  'match',
  'route',
  'redirect',
  'directResponse',
  'delegate',
  'rewrite',
  'timeout',
  'retries',
  'fault',
  'mirror',
  'mirrorPercentage',
  'mirrorPercent',
  // mirrorPercent under its proto name: protojson reads both names into one field.
  'mirror_percent',
  'mirrors',
  'corsPolicy',
  'headers',
];

function httpRoute(r: Reader, v: unknown, path: string): HTTPRoute | undefined {
  const o = fields(r, v, path, HTTP_ROUTE_FIELDS);
  if (!o) return undefined;
  const name = str(r, get(o, 'name'), `${path}.name`);
  const match = list(r, get(o, 'match'), `${path}.match`, (m, p) => httpMatch(r, m, p), INPUT_LIMITS.maxMatches);
  const before = r.errorCount;
  const route = list(
    r,
    get(o, 'route'),
    `${path}.route`,
    (d, p) => httpRouteDestination(r, d, p),
    INPUT_LIMITS.maxDestinations,
  );
  if (route && r.errorCount === before)
    checkWeights(
      r,
      route.map((d) => d.weight),
      `${path}.route`,
    );
  const redirect = httpRedirect(r, get(o, 'redirect'), `${path}.redirect`);
  const directResponse = httpDirectResponse(r, get(o, 'directResponse'), `${path}.directResponse`);
  const delegate = httpDelegate(r, get(o, 'delegate'), `${path}.delegate`);
  const actions = [
    route?.length ? 'route' : '',
    redirect ? 'redirect' : '',
    directResponse ? 'directResponse' : '',
    delegate ? 'delegate' : '',
  ].filter(Boolean);
  if (actions.length === 0 && !r.failed)
    r.error(path, 'needs one of route, redirect, directResponse, delegate', 'missing-field');
  if (actions.length > 1) r.error(path, `cannot combine ${actions.join(' and ')}`);
  // istiod's validateHTTPRedirect: a prefix rewrite replaces the matched prefix, so every URI match must be one.
  if (redirect?.prefixRewrite !== undefined && match?.some((m) => m.uri && m.uri.prefix === undefined))
    r.error(
      `${path}.redirect.prefixRewrite`,
      'redirect prefix_rewrite requires all URI matches to use prefix match type',
    );
  const mirrors = httpMirrors(r, o, path);
  return compact({
    name,
    match,
    route: route?.length ? route : undefined,
    redirect,
    directResponse,
    delegate,
    rewrite: httpRewrite(r, get(o, 'rewrite'), `${path}.rewrite`),
    timeoutMs: duration(r, get(o, 'timeout'), `${path}.timeout`),
    retries: httpRetry(r, get(o, 'retries'), `${path}.retries`),
    fault: httpFault(r, get(o, 'fault'), `${path}.fault`),
    mirrors,
    corsPolicy: cors(r, get(o, 'corsPolicy'), `${path}.corsPolicy`),
    headers: headers(r, get(o, 'headers'), `${path}.headers`),
  });
}

const MATCH_FIELDS = [
  'name',
  'uri',
  'scheme',
  'method',
  'authority',
  'headers',
  'port',
  'sourceLabels',
  'gateways',
  'queryParams',
  'ignoreUriCase',
  'withoutHeaders',
  'sourceNamespace',
  'statPrefix',
];

function httpMatch(r: Reader, v: unknown, path: string): HTTPMatchRequest | undefined {
  const o = fields(r, v, path, MATCH_FIELDS);
  if (!o) return undefined;
  const sm = (key: string): StringMatch | undefined => stringMatch(r, get(o, key), `${path}.${key}`);
  const smMap = (key: string): Record<string, StringMatch> | undefined =>
    mapOf(r, get(o, key), `${path}.${key}`, (m, p) => stringMatch(r, m ?? {}, p));
  return compact({
    name: str(r, get(o, 'name'), `${path}.name`),
    uri: sm('uri'),
    scheme: sm('scheme'),
    method: sm('method'),
    authority: sm('authority'),
    headers: smMap('headers'),
    port: port(r, get(o, 'port'), `${path}.port`),
    sourceLabels: strMap(r, get(o, 'sourceLabels'), `${path}.sourceLabels`),
    gateways: strList(r, get(o, 'gateways'), `${path}.gateways`),
    queryParams: smMap('queryParams'),
    ignoreUriCase: bool(r, get(o, 'ignoreUriCase'), `${path}.ignoreUriCase`),
    withoutHeaders: smMap('withoutHeaders'),
    sourceNamespace: str(r, get(o, 'sourceNamespace'), `${path}.sourceNamespace`),
    statPrefix: str(r, get(o, 'statPrefix'), `${path}.statPrefix`),
  });
}

function httpRouteDestination(r: Reader, v: unknown, path: string): HTTPRouteDestination | undefined {
  const o = fields(r, v, path, ['destination', 'weight', 'headers']);
  if (!o) return undefined;
  const dest = destination(r, get(o, 'destination'), `${path}.destination`);
  const w = weight(r, get(o, 'weight'), `${path}.weight`);
  const h = headers(r, get(o, 'headers'), `${path}.headers`);
  return dest ? compact({ destination: dest, weight: w, headers: h }) : undefined;
}

function routeDestination(r: Reader, v: unknown, path: string): RouteDestination | undefined {
  const o = fields(r, v, path, ['destination', 'weight']);
  if (!o) return undefined;
  const dest = destination(r, get(o, 'destination'), `${path}.destination`);
  const w = weight(r, get(o, 'weight'), `${path}.weight`);
  return dest ? compact({ destination: dest, weight: w }) : undefined;
}

function httpRedirect(r: Reader, v: unknown, path: string): HTTPRedirect | undefined {
  const o = fields(r, v, path, ['uri', 'prefixRewrite', 'authority', 'port', 'derivePort', 'scheme', 'redirectCode']);
  if (!o) return undefined;
  const derive = str(r, get(o, 'derivePort'), `${path}.derivePort`);
  if (derive !== undefined && derive !== 'FROM_PROTOCOL_DEFAULT' && derive !== 'FROM_REQUEST_PORT') {
    r.error(`${path}.derivePort`, 'must be FROM_PROTOCOL_DEFAULT or FROM_REQUEST_PORT');
  }
  const uri = str(r, get(o, 'uri'), `${path}.uri`);
  // istiod's ApplyRedirect: a non-empty prefixRewrite becomes the redirect's prefix_rewrite (else path_redirect).
  const prefixRewrite = str(r, get(o, 'prefixRewrite'), `${path}.prefixRewrite`) || undefined;
  if (uri && prefixRewrite) r.error(path, 'redirect may only specify one of uri or prefix_rewrite');
  return compact({
    uri,
    prefixRewrite,
    authority: str(r, get(o, 'authority'), `${path}.authority`),
    port: port(r, get(o, 'port'), `${path}.port`),
    derivePort: derive as HTTPRedirect['derivePort'],
    scheme: str(r, get(o, 'scheme'), `${path}.scheme`),
    redirectCode: int(r, get(o, 'redirectCode'), `${path}.redirectCode`, 300, 399),
  });
}

function httpDirectResponse(r: Reader, v: unknown, path: string): HTTPDirectResponse | undefined {
  const o = fields(r, v, path, ['status', 'body']);
  if (!o) return undefined;
  const status = int(r, get(o, 'status'), `${path}.status`, 200, 599);
  if (get(o, 'status') === undefined || get(o, 'status') === null)
    r.error(`${path}.status`, 'is required', 'missing-field');
  const b = fields(r, get(o, 'body'), `${path}.body`, ['string', 'bytes']);
  const body = b
    ? compact({
        string: str(r, get(b, 'string'), `${path}.body.string`),
        bytes: str(r, get(b, 'bytes'), `${path}.body.bytes`),
      })
    : undefined;
  if (body?.string !== undefined && body.bytes !== undefined)
    r.error(`${path}.body`, 'must set only one of string, bytes');
  return status === undefined ? undefined : compact({ status, body });
}

function httpDelegate(r: Reader, v: unknown, path: string): HTTPRoute['delegate'] {
  const o = fields(r, v, path, ['name', 'namespace']);
  if (!o) return undefined;
  const name = requiredStr(r, get(o, 'name'), `${path}.name`);
  const namespace = str(r, get(o, 'namespace'), `${path}.namespace`);
  return name === undefined ? undefined : compact({ name, namespace: namespace === '' ? undefined : namespace });
}

function httpRewrite(r: Reader, v: unknown, path: string): HTTPRewrite | undefined {
  const o = fields(r, v, path, ['uri', 'authority', 'uriRegexRewrite']);
  if (!o) return undefined;
  const uri = str(r, get(o, 'uri'), `${path}.uri`);
  const authority = str(r, get(o, 'authority'), `${path}.authority`);
  const rr = fields(r, get(o, 'uriRegexRewrite'), `${path}.uriRegexRewrite`, ['match', 'rewrite']);
  let uriRegexRewrite: HTTPRewrite['uriRegexRewrite'];
  if (rr) {
    const match = requiredStr(r, get(rr, 'match'), `${path}.uriRegexRewrite.match`);
    const rewrite = str(r, get(rr, 'rewrite'), `${path}.uriRegexRewrite.rewrite`) ?? '';
    const problem = match !== undefined ? regexProblem(match) : undefined;
    if (problem) r.error(`${path}.uriRegexRewrite.match`, problem);
    if (match !== undefined) uriRegexRewrite = { match, rewrite };
  }
  if (uri !== undefined && uriRegexRewrite) r.error(path, 'cannot set both uri and uriRegexRewrite');
  return compact({ uri, authority, uriRegexRewrite });
}

export function httpRetry(r: Reader, v: unknown, path: string): HTTPRetry | undefined {
  const o = fields(r, v, path, [
    'attempts',
    'perTryTimeout',
    'retryOn',
    'retryRemoteLocalities',
    'retryIgnorePreviousHosts',
    'backoff',
  ]);
  if (!o) return undefined;
  const attempts = int(r, get(o, 'attempts'), `${path}.attempts`, 0, 2 ** 31 - 1);
  return compact({
    attempts: attempts ?? 0,
    perTryTimeoutMs: duration(r, get(o, 'perTryTimeout'), `${path}.perTryTimeout`),
    retryOn: str(r, get(o, 'retryOn'), `${path}.retryOn`),
    retryRemoteLocalities: bool(r, get(o, 'retryRemoteLocalities'), `${path}.retryRemoteLocalities`),
    retryIgnorePreviousHosts: bool(r, get(o, 'retryIgnorePreviousHosts'), `${path}.retryIgnorePreviousHosts`),
    backoffMs: duration(r, get(o, 'backoff'), `${path}.backoff`),
  });
}

function httpFault(r: Reader, v: unknown, path: string): HTTPFaultInjection | undefined {
  const o = fields(r, v, path, ['delay', 'abort']);
  if (!o) return undefined;
  let delay: HTTPFaultInjection['delay'];
  const d = fields(r, get(o, 'delay'), `${path}.delay`, ['fixedDelay', 'exponentialDelay', 'percentage', 'percent']);
  if (d) {
    const fixedDelayMs = duration(r, get(d, 'fixedDelay'), `${path}.delay.fixedDelay`);
    // istiod's validateHTTPFaultInjectionDelay rejects an exponential delay ("not supported yet").
    const exponential = get(d, 'exponentialDelay');
    if (exponential !== undefined && exponential !== null) {
      duration(r, exponential, `${path}.delay.exponentialDelay`);
      r.error(`${path}.delay.exponentialDelay`, 'exponentialDelay not supported yet');
      if (get(d, 'fixedDelay') !== undefined)
        r.error(`${path}.delay`, 'must set only one of fixedDelay, exponentialDelay');
    } else if (get(d, 'fixedDelay') === undefined) r.error(`${path}.delay.fixedDelay`, 'is required', 'missing-field');
    const percentage =
      percent(r, get(d, 'percentage'), `${path}.delay.percentage`) ??
      intPercent(r, get(d, 'percent'), `${path}.delay.percent`);
    if (fixedDelayMs !== undefined) delay = compact({ fixedDelayMs, percentage });
  }
  let abort: HTTPFaultInjection['abort'];
  const a = fields(r, get(o, 'abort'), `${path}.abort`, ['httpStatus', 'grpcStatus', 'http2Error', 'percentage']);
  if (a) {
    const httpStatus = int(r, get(a, 'httpStatus'), `${path}.abort.httpStatus`, 200, 599);
    const grpcStatus = str(r, get(a, 'grpcStatus'), `${path}.abort.grpcStatus`);
    // istiod's validateHTTPFaultInjectionAbort rejects an HTTP/2 error abort ("not supported yet").
    if (str(r, get(a, 'http2Error'), `${path}.abort.http2Error`) !== undefined)
      r.error(`${path}.abort.http2Error`, 'HTTP/2 abort fault injection not supported yet');
    const percentage = percent(r, get(a, 'percentage'), `${path}.abort.percentage`);
    if (httpStatus === undefined && grpcStatus === undefined && !r.failed)
      r.error(`${path}.abort`, 'needs httpStatus or grpcStatus', 'missing-field');
    abort = compact({ httpStatus, grpcStatus, percentage });
  }
  if (!delay && !abort && !r.failed) r.error(path, 'needs delay or abort', 'missing-field');
  return compact({ delay, abort });
}

/** `mirror` + `mirrorPercentage` (or deprecated `mirrorPercent`) fold into `mirrors`. */
function httpMirrors(r: Reader, o: Raw, path: string): HTTPMirrorPolicy[] | undefined {
  const out: HTTPMirrorPolicy[] = [];
  const single =
    get(o, 'mirror') !== undefined && get(o, 'mirror') !== null
      ? destination(r, get(o, 'mirror'), `${path}.mirror`)
      : undefined;
  // `mirror_percent` is mirrorPercent's proto name; protojson refuses the field set twice.
  const legacy = get(o, 'mirrorPercent') !== undefined ? 'mirrorPercent' : 'mirror_percent';
  if (legacy === 'mirrorPercent' && get(o, 'mirror_percent') !== undefined)
    r.error(`${path}.mirror_percent`, 'duplicate field: mirror_percent is mirrorPercent under its proto name');
  const pct =
    percent(r, get(o, 'mirrorPercentage'), `${path}.mirrorPercentage`) ??
    intPercent(r, get(o, legacy), `${path}.${legacy}`);
  if (single) out.push(compact({ destination: single, percentage: pct }));
  const many = list(r, get(o, 'mirrors'), `${path}.mirrors`, (v, p) => {
    const m = fields(r, v, p, ['destination', 'percentage']);
    if (!m) return undefined;
    const dest = destination(r, get(m, 'destination'), `${p}.destination`);
    const percentage = percent(r, get(m, 'percentage'), `${p}.percentage`);
    return dest ? compact({ destination: dest, percentage }) : undefined;
  });
  if (single && many?.length) r.error(`${path}.mirrors`, 'cannot be combined with mirror');
  for (const m of many ?? []) out.push(m);
  return out.length ? out : undefined;
}

function cors(r: Reader, v: unknown, path: string): CorsPolicy | undefined {
  const o = fields(r, v, path, [
    'allowOrigins',
    'allowOrigin',
    'allowMethods',
    'allowHeaders',
    'exposeHeaders',
    'maxAge',
    'allowCredentials',
    'unmatchedPreflights',
  ]);
  if (!o) return undefined;
  const origins = list(r, get(o, 'allowOrigins'), `${path}.allowOrigins`, (m, p) => stringMatch(r, m, p));
  // Deprecated `allowOrigin: [string]` means exact matches.
  const legacy = strList(r, get(o, 'allowOrigin'), `${path}.allowOrigin`)?.map((exact) => ({ exact }));
  const allowOrigins = origins || legacy ? [...(origins ?? []), ...(legacy ?? [])] : undefined;
  return compact({
    allowOrigins,
    allowMethods: strList(r, get(o, 'allowMethods'), `${path}.allowMethods`),
    allowHeaders: strList(r, get(o, 'allowHeaders'), `${path}.allowHeaders`),
    exposeHeaders: strList(r, get(o, 'exposeHeaders'), `${path}.exposeHeaders`),
    maxAgeMs: duration(r, get(o, 'maxAge'), `${path}.maxAge`),
    allowCredentials: bool(r, get(o, 'allowCredentials'), `${path}.allowCredentials`),
    unmatchedPreflights: unmatchedPreflights(r, get(o, 'unmatchedPreflights'), `${path}.unmatchedPreflights`),
  });
}

const UNMATCHED_PREFLIGHTS = ['UNSPECIFIED', 'FORWARD', 'IGNORE'] as const;

function unmatchedPreflights(r: Reader, v: unknown, path: string): 'FORWARD' | 'IGNORE' | undefined {
  const value = str(r, v, path);
  if (value === undefined) return undefined;
  if (!(UNMATCHED_PREFLIGHTS as readonly string[]).includes(value)) {
    r.error(path, `must be one of ${UNMATCHED_PREFLIGHTS.join(', ')}`);
    return undefined;
  }
  return value === 'IGNORE' ? 'IGNORE' : value === 'FORWARD' ? 'FORWARD' : undefined;
}

function headerOps(r: Reader, v: unknown, path: string): HeaderOperations | undefined {
  const o = fields(r, v, path, ['set', 'add', 'remove']);
  if (!o) return undefined;
  return compact({
    set: strMap(r, get(o, 'set'), `${path}.set`),
    add: strMap(r, get(o, 'add'), `${path}.add`),
    remove: strList(r, get(o, 'remove'), `${path}.remove`),
  });
}

function headers(r: Reader, v: unknown, path: string): Headers | undefined {
  const o = fields(r, v, path, ['request', 'response']);
  if (!o) return undefined;
  return compact({
    request: headerOps(r, get(o, 'request'), `${path}.request`),
    response: headerOps(r, get(o, 'response'), `${path}.response`),
  });
}

function l4Match(r: Reader, o: Raw, path: string): L4MatchAttributes {
  return compact({
    destinationSubnets: strList(r, get(o, 'destinationSubnets'), `${path}.destinationSubnets`),
    port: port(r, get(o, 'port'), `${path}.port`),
    sourceLabels: strMap(r, get(o, 'sourceLabels'), `${path}.sourceLabels`),
    gateways: strList(r, get(o, 'gateways'), `${path}.gateways`),
    sourceNamespace: str(r, get(o, 'sourceNamespace'), `${path}.sourceNamespace`),
  });
}

const L4_FIELDS = ['destinationSubnets', 'port', 'sourceLabels', 'gateways', 'sourceNamespace'];

function l4Routes(r: Reader, v: unknown, path: string): RouteDestination[] | undefined {
  const before = r.errorCount;
  const route = list(r, v, path, (d, p) => routeDestination(r, d, p), INPUT_LIMITS.maxDestinations);
  if (!route?.length) {
    if (!r.failed) r.error(path, 'must list at least one destination', 'missing-field');
    return undefined;
  }
  if (r.errorCount === before)
    checkWeights(
      r,
      route.map((d) => d.weight),
      path,
    );
  return route;
}

function tcpRoute(r: Reader, v: unknown, path: string): TCPRoute | undefined {
  const o = fields(r, v, path, ['match', 'route']);
  if (!o) return undefined;
  const match = list(r, get(o, 'match'), `${path}.match`, (m, p) => {
    const mo = fields(r, m, p, [...L4_FIELDS, 'sourceSubnet']);
    if (!mo) return undefined;
    // In the API and the CRD, read by no istiod code (its matchTCP matches no source subnet): not applied.
    if (str(r, get(mo, 'sourceSubnet'), `${p}.sourceSubnet`))
      r.warn(
        `${p}.sourceSubnet`,
        'sourceSubnet is not applied: istiod does not apply it either (the match applies to every source)',
        'unsupported-field',
      );
    return l4Match(r, mo, p);
  });
  const route = l4Routes(r, get(o, 'route'), `${path}.route`);
  return route ? compact({ match, route }) : undefined;
}

function tlsRoute(r: Reader, v: unknown, path: string): TLSRoute | undefined {
  const o = fields(r, v, path, ['match', 'route']);
  if (!o) return undefined;
  const match = list(r, get(o, 'match'), `${path}.match`, (m, p) => {
    const mo = fields(r, m, p, [...L4_FIELDS, 'sniHosts']);
    if (!mo) return undefined;
    const sniHosts = strList(r, get(mo, 'sniHosts'), `${p}.sniHosts`);
    if (!sniHosts?.length && !r.failed) r.error(`${p}.sniHosts`, 'must list at least one SNI host', 'missing-field');
    return { ...l4Match(r, mo, p), sniHosts: sniHosts ?? [] };
  });
  if (!match?.length && !r.failed) r.error(`${path}.match`, 'a TLS route needs at least one match', 'missing-field');
  const route = l4Routes(r, get(o, 'route'), `${path}.route`);
  return route && match ? { match, route } : undefined;
}
