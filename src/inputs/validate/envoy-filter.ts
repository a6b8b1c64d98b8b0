/**
 * EnvoyFilter (networking.istio.io v1alpha3) → model/envoy-filter.ts, with the webhook's checks
 * (istio pkg/config/validation/envoyfilter: ValidateEnvoyFilter) and the CRD's: a config patch is
 * not null, has an applyTo, a patch, an operation and (but to REMOVE) a value; a proxyVersion
 * compiles as a Go (RE2) regex; applyTo and match line up (listener-class objects take a listener
 * match, route-class a routeConfiguration match, CLUSTER a cluster match); a filter match names its
 * filter, a subFilter match sits under the HTTP connection manager with applyTo HTTP_FILTER; one
 * object type per match, `waypoint` with context WAYPOINT only; workload selector labels as
 * istiod's ValidateAlphaWorkloadSelector; targetRefs in the EnvoyFilter's namespace, not with a
 * workloadSelector. One invalid part invalidates the EnvoyFilter.
 *
 * As istiod's convertToEnvoyFilterWrapper: INSERT_BEFORE / INSERT_AFTER / INSERT_FIRST on an applyTo
 * other than HTTP_FILTER, NETWORK_FILTER, HTTP_ROUTE, LISTENER_FILTER become ADD.
 *
 * `patch.value` is kept as written (the compile converts it into the Envoy message its applyTo
 * names, as istiod's BuildXDSObjectFromStruct): meshsnap stores and serves no secret, so a value
 * holding inline secret material (a private key, a password, session ticket keys, an HMAC, client
 * or token secret, or a TLS certificate entry as `inline_bytes` / `inline_string`; any PEM private
 * key) refuses the EnvoyFilter; a `filename` or an SDS config is fine.
 *
 * Not applied by meshsnap, each said so (`unsupported-field`), the patch left out of the model:
 * applyTo EXTENSION_CONFIG and BOOTSTRAP, match context WAYPOINT (meshsnap serves no waypoints).
 * `targetRefs` are warned about and kept; `match.proxy` is kept (the compile skips such patches and
 * says so: it compiles before it knows the proxies' versions and metadata). The annotation
 * `envoyfilter.istio.io/referenced-services` (waypoints and filtered gateways) is warned about.
 */
import { isGatewayRef } from '../../model/telemetry.js';
import { RE2JS } from 're2js';
import type { Origin } from '../../model/diagnostics.js';
import type {
  EnvoyFilter,
  EnvoyFilterApplyTo,
  EnvoyFilterClusterMatch,
  EnvoyFilterContext,
  EnvoyFilterListenerMatch,
  EnvoyFilterOperation,
  EnvoyFilterPatch,
  EnvoyFilterRouteConfigurationMatch,
} from '../../model/envoy-filter.js';
import type { JsonValue } from '../../model/json-value.js';
import { INPUT_LIMITS } from '../limits.js';
import { setMember } from '../plain-object.js';
import { readTargetRef } from './authorization-policy.js';
import { checkSelectorLabels } from './common-istio.js';
import { readCreationTimestamp, readMeta } from './meta.js';
import { compact, fields, get, int, list, str, strMap, type Raw, type Reader } from './reader.js';

/** The annotation istiod reads for waypoints and filtered gateways (not applied by meshsnap). */
export const REFERENCED_SERVICES_ANNOTATION = 'envoyfilter.istio.io/referenced-services';

const APPLY_TO = [
  'INVALID',
  'LISTENER',
  'FILTER_CHAIN',
  'NETWORK_FILTER',
  'HTTP_FILTER',
  'ROUTE_CONFIGURATION',
  'VIRTUAL_HOST',
  'HTTP_ROUTE',
  'CLUSTER',
  'EXTENSION_CONFIG',
  'BOOTSTRAP',
  'LISTENER_FILTER',
];
/** applyTo values meshsnap has no resource for: ECDS extension configs, the bootstrap. */
const UNSUPPORTED_APPLY_TO = new Set(['EXTENSION_CONFIG', 'BOOTSTRAP']);
const CONTEXTS = ['ANY', 'SIDECAR_INBOUND', 'SIDECAR_OUTBOUND', 'GATEWAY', 'WAYPOINT'];
const OPERATIONS = [
  'INVALID',
  'MERGE',
  'ADD',
  'REMOVE',
  'INSERT_BEFORE',
  'INSERT_AFTER',
  'INSERT_FIRST',
  'REPLACE',
  'MERGE_AND_REPLACE_LIST',
];
const FILTER_CLASSES = ['UNSPECIFIED', 'AUTHN', 'AUTHZ', 'STATS'];
const ROUTE_ACTIONS = ['ANY', 'ROUTE', 'REDIRECT', 'DIRECT_RESPONSE'];
const LISTENER_CLASS = new Set(['LISTENER', 'FILTER_CHAIN', 'NETWORK_FILTER', 'HTTP_FILTER']);
const ROUTE_CLASS = new Set(['ROUTE_CONFIGURATION', 'VIRTUAL_HOST', 'HTTP_ROUTE']);
/** Where istiod keeps INSERT_BEFORE / INSERT_AFTER / INSERT_FIRST; elsewhere they become ADD. */
const INSERTABLE = new Set(['HTTP_FILTER', 'NETWORK_FILTER', 'HTTP_ROUTE', 'LISTENER_FILTER']);
const INSERTS = new Set(['INSERT_BEFORE', 'INSERT_AFTER', 'INSERT_FIRST']);

const HTTP_CONNECTION_MANAGER = 'envoy.filters.network.http_connection_manager';
/** istiod's maxProxyVersionLen: a longer proxyVersion is not compiled (a warning; the patch matches no proxy). */
const MAX_PROXY_VERSION = 1024;
const MAX_UINT32 = 2 ** 32 - 1;
const INT32: readonly [number, number] = [-(2 ** 31), 2 ** 31 - 1];
/** The CRD's bounds on `workloadSelector.labels`. */
const MAX_LABELS = 256;
const MAX_LABEL_VALUE = 63;
/** The parser's nesting bound (src/inputs/parse.ts MAX_DEPTH), kept here for objects that come another way. */
const MAX_VALUE_DEPTH = 64;

/** istiod's xds.ReverseDeprecatedFilterNames: a deprecated filter name → the canonical one. */
const DEPRECATED_FILTER_NAMES: Readonly<Record<string, string>> = {
  'envoy.buffer': 'envoy.filters.http.buffer',
  'envoy.cors': 'envoy.filters.http.cors',
  'envoy.csrf': 'envoy.filters.http.csrf',
  'envoy.http_dynamo_filter': 'envoy.filters.http.dynamo',
  'envoy.ext_authz': 'envoy.filters.http.ext_authz or envoy.filters.network.ext_authz',
  'envoy.fault': 'envoy.filters.http.fault',
  'envoy.grpc_http1_bridge': 'envoy.filters.http.grpc_http1_bridge',
  'envoy.grpc_json_transcoder': 'envoy.filters.http.grpc_json_transcoder',
  'envoy.grpc_web': 'envoy.filters.http.grpc_web',
  'envoy.gzip': 'envoy.filters.http.gzip',
  'envoy.health_check': 'envoy.filters.http.health_check',
  'envoy.ip_tagging': 'envoy.filters.http.ip_tagging',
  'envoy.lua': 'envoy.filters.http.lua',
  'envoy.rate_limit': 'envoy.filters.http.ratelimit',
  'envoy.router': 'envoy.filters.http.router',
  'envoy.squash': 'envoy.filters.http.squash',
  'envoy.listener.http_inspector': 'envoy.filters.listener.http_inspector',
  'envoy.listener.original_dst': 'envoy.filters.listener.original_dst',
  'envoy.listener.original_src': 'envoy.filters.listener.original_src',
  'envoy.listener.proxy_protocol': 'envoy.filters.listener.proxy_protocol',
  'envoy.listener.tls_inspector': 'envoy.filters.listener.tls_inspector',
  'envoy.client_ssl_auth': 'envoy.filters.network.client_ssl_auth',
  'envoy.http_connection_manager': HTTP_CONNECTION_MANAGER,
  'envoy.mongo_proxy': 'envoy.filters.network.mongo_proxy',
  'envoy.ratelimit': 'envoy.filters.network.ratelimit',
  'envoy.redis_proxy': 'envoy.filters.network.redis_proxy',
  'envoy.tcp_proxy': 'envoy.filters.network.tcp_proxy',
};

/** Keys whose value is secret material when given inline (proto and JSON names). */
const SECRET_KEYS = new Set([
  'private_key',
  'privateKey',
  'password',
  'session_ticket_keys',
  'sessionTicketKeys',
  'hmac_secret',
  'hmacSecret',
  'client_secret',
  'clientSecret',
  'token_secret',
  'tokenSecret',
  'generic_secret',
  'genericSecret',
  // Every member of a TlsCertificate entry.
  'tls_certificates',
  'tlsCertificates',
]);
/** A DataSource's inline members. */
const INLINE_KEYS = new Set(['inline_bytes', 'inlineBytes', 'inline_string', 'inlineString']);

/** An enum value among `values` (a string, as the CRD), or an error naming them. */
function enumOf(r: Reader, v: unknown, path: string, values: readonly string[]): string | undefined {
  const s = str(r, v, path);
  if (s === undefined || values.includes(s)) return s;
  r.error(path, `must be one of ${values.join(', ')}, got "${s.slice(0, 40)}"`);
  return undefined;
}

/** A proto3 string: empty is unset. */
const optStr = (r: Reader, v: unknown, path: string): string | undefined => str(r, v, path) || undefined;
/** A proto3 uint32: 0 is unset. */
const optUint32 = (r: Reader, v: unknown, path: string): number | undefined =>
  int(r, v, path, 0, MAX_UINT32) || undefined;

/** `match.listener`; istiod's filter / subFilter checks need the applyTo. */
function listenerMatch(r: Reader, o: Raw, path: string, applyTo: string | undefined): EnvoyFilterListenerMatch {
  const portNumber = optUint32(r, get(o, 'portNumber'), `${path}.portNumber`);
  if (optStr(r, get(o, 'portName'), `${path}.portName`) !== undefined)
    r.warn(
      `${path}.portName`,
      'istiod does not match listeners on portName (not implemented): ignored',
      'ignored-field',
    );
  const name = optStr(r, get(o, 'name'), `${path}.name`);
  const listenerFilter = optStr(r, get(o, 'listenerFilter'), `${path}.listenerFilter`);
  const fcPath = `${path}.filterChain`;
  const fc = fields(r, get(o, 'filterChain'), fcPath, [
    'name',
    'sni',
    'transportProtocol',
    'applicationProtocols',
    'filter',
    'destinationPort',
    'transportSocket',
  ]);
  let filterChain: EnvoyFilterListenerMatch['filterChain'];
  if (fc) {
    if (optStr(r, get(fc, 'transportSocket'), `${fcPath}.transportSocket`) !== undefined)
      r.warn(
        `${fcPath}.transportSocket`,
        'istiod does not match filter chains on transportSocket: ignored',
        'ignored-field',
      );
    filterChain = compact({
      name: optStr(r, get(fc, 'name'), `${fcPath}.name`),
      sni: optStr(r, get(fc, 'sni'), `${fcPath}.sni`),
      transportProtocol: optStr(r, get(fc, 'transportProtocol'), `${fcPath}.transportProtocol`),
      applicationProtocols: optStr(r, get(fc, 'applicationProtocols'), `${fcPath}.applicationProtocols`),
      destinationPort: optUint32(r, get(fc, 'destinationPort'), `${fcPath}.destinationPort`),
      filter: filterMatch(r, get(fc, 'filter'), `${fcPath}.filter`, applyTo),
    });
  }
  return compact({ portNumber, name, listenerFilter, filterChain });
}

/** `filterChain.filter`, with istiod's checks of it against the applyTo. */
function filterMatch(
  r: Reader,
  v: unknown,
  path: string,
  applyTo: string | undefined,
): { name?: string; subFilter?: { name?: string } } | undefined {
  const o = fields(r, v, path, ['name', 'subFilter']);
  if (!o) return undefined;
  const name = optStr(r, get(o, 'name'), `${path}.name`);
  const sub = fields(r, get(o, 'subFilter'), `${path}.subFilter`, ['name']);
  const subName = sub ? optStr(r, get(sub, 'name'), `${path}.subFilter.name`) : undefined;
  if (applyTo === 'LISTENER' || applyTo === 'FILTER_CHAIN')
    r.warn(path, `filter match has no effect when used with ${applyTo}`, 'ignored-field');
  if (applyTo !== undefined && LISTENER_CLASS.has(applyTo)) {
    // istiod's order: one error per patch, the first that applies.
    if (name === undefined) r.error(`${path}.name`, 'filter match has no name to match on', 'missing-field');
    else if (sub && applyTo !== 'HTTP_FILTER')
      r.error(`${path}.subFilter`, 'subfilter match can be used with applyTo HTTP_FILTER only');
    else if (sub && name !== HTTP_CONNECTION_MANAGER && name !== 'envoy.http_connection_manager')
      r.error(`${path}.name`, `subfilter match requires filter match with ${HTTP_CONNECTION_MANAGER}`);
    else if (sub && subName === undefined)
      r.error(`${path}.subFilter.name`, 'subfilter match has no name to match on', 'missing-field');
    else {
      deprecatedName(r, name, `${path}.name`);
      if (subName !== undefined) deprecatedName(r, subName, `${path}.subFilter.name`);
    }
  }
  return compact({ name, subFilter: sub ? compact({ name: subName }) : undefined });
}

function deprecatedName(r: Reader, name: string, path: string): void {
  const canonical = Object.hasOwn(DEPRECATED_FILTER_NAMES, name) ? DEPRECATED_FILTER_NAMES[name] : undefined;
  if (canonical) r.warn(path, `using deprecated filter name "${name}"; use ${canonical} instead`, 'deprecated-field');
}

function routeConfigurationMatch(r: Reader, o: Raw, path: string): EnvoyFilterRouteConfigurationMatch {
  const vhostPath = `${path}.vhost`;
  const vh = fields(r, get(o, 'vhost'), vhostPath, ['name', 'domainName', 'route']);
  const route = vh ? fields(r, get(vh, 'route'), `${vhostPath}.route`, ['name', 'action']) : undefined;
  const action = route ? enumOf(r, get(route, 'action'), `${vhostPath}.route.action`, ROUTE_ACTIONS) : undefined;
  return compact({
    portNumber: optUint32(r, get(o, 'portNumber'), `${path}.portNumber`),
    portName: optStr(r, get(o, 'portName'), `${path}.portName`),
    gateway: optStr(r, get(o, 'gateway'), `${path}.gateway`),
    name: optStr(r, get(o, 'name'), `${path}.name`),
    vhost: vh
      ? compact({
          name: optStr(r, get(vh, 'name'), `${vhostPath}.name`),
          domainName: optStr(r, get(vh, 'domainName'), `${vhostPath}.domainName`),
          route: route
            ? compact({
                name: optStr(r, get(route, 'name'), `${vhostPath}.route.name`),
                // ANY (the enum's zero) is unset.
                action: action && action !== 'ANY' ? (action as 'ROUTE' | 'REDIRECT' | 'DIRECT_RESPONSE') : undefined,
              })
            : undefined,
        })
      : undefined,
  });
}

function clusterMatch(r: Reader, o: Raw, path: string): EnvoyFilterClusterMatch {
  return compact({
    portNumber: optUint32(r, get(o, 'portNumber'), `${path}.portNumber`),
    service: optStr(r, get(o, 'service'), `${path}.service`),
    subset: optStr(r, get(o, 'subset'), `${path}.subset`),
    name: optStr(r, get(o, 'name'), `${path}.name`),
  });
}

/** `match.waypoint`: checked as the CRD (meshsnap serves no waypoints: not kept). */
function waypointMatch(r: Reader, o: Raw, path: string): void {
  const port = get(o, 'portNumber');
  const n = int(r, port, `${path}.portNumber`, 0, MAX_UINT32);
  if (n !== undefined && (n < 1 || n > 65535)) r.error(`${path}.portNumber`, 'port must be between 1-65535');
  const route = fields(r, get(o, 'route'), `${path}.route`, ['name']);
  if (route) str(r, get(route, 'name'), `${path}.route.name`);
  const filter = fields(r, get(o, 'filter'), `${path}.filter`, ['name', 'subFilter']);
  if (filter) {
    str(r, get(filter, 'name'), `${path}.filter.name`);
    const sub = fields(r, get(filter, 'subFilter'), `${path}.filter.subFilter`, ['name']);
    if (sub) str(r, get(sub, 'name'), `${path}.filter.subFilter.name`);
  }
}

/** `match.proxy`: a proxyVersion that compiles as a Go regex (RE2), metadata strings. */
function proxyMatch(r: Reader, v: unknown, path: string): EnvoyFilterPatch['proxy'] {
  const o = fields(r, v, path, ['proxyVersion', 'metadata']);
  if (!o) return undefined;
  const proxyVersion = optStr(r, get(o, 'proxyVersion'), `${path}.proxyVersion`);
  const metadata = strMap(r, get(o, 'metadata'), `${path}.metadata`);
  if (proxyVersion !== undefined) {
    if (proxyVersion.length > MAX_PROXY_VERSION)
      r.warn(
        `${path}.proxyVersion`,
        `proxyVersion match exceeds ${MAX_PROXY_VERSION} characters and will be ignored (istiod then matches no proxy)`,
        'invalid-field',
      );
    else {
      try {
        RE2JS.compile(proxyVersion);
      } catch (e) {
        r.error(
          `${path}.proxyVersion`,
          `invalid regex for proxy version, [${(e instanceof Error ? e.message : String(e)).slice(0, 120)}]`,
        );
      }
    }
  }
  return compact({
    proxyVersion,
    metadata: metadata && Object.keys(metadata).length > 0 ? metadata : undefined,
  });
}

/** What a patch's `match` gave. */
interface MatchRead {
  readonly context: string;
  /** The match's object type (its oneof), when one is set. */
  readonly objectType?: 'listener' | 'routeConfiguration' | 'cluster' | 'waypoint';
  readonly listener?: EnvoyFilterListenerMatch;
  readonly routeConfiguration?: EnvoyFilterRouteConfigurationMatch;
  readonly cluster?: EnvoyFilterClusterMatch;
  readonly proxy?: EnvoyFilterPatch['proxy'];
}

const OBJECT_TYPES = ['listener', 'routeConfiguration', 'cluster', 'waypoint'] as const;

function readMatch(r: Reader, v: unknown, path: string, applyTo: string | undefined): MatchRead {
  const o = fields(r, v, path, ['context', 'proxy', 'listener', 'routeConfiguration', 'cluster', 'waypoint']);
  if (!o) return { context: 'ANY' };
  const context = enumOf(r, get(o, 'context'), `${path}.context`, CONTEXTS) ?? 'ANY';
  const set = OBJECT_TYPES.filter((k) => get(o, k) !== undefined && get(o, k) !== null);
  if (set.length > 1)
    r.error(path, `only one of listener, routeConfiguration, cluster or waypoint may be set`, 'conflicting-fields');
  // The CRD: `waypoint` with context WAYPOINT only, and WAYPOINT needs it.
  if ((context === 'WAYPOINT') !== set.includes('waypoint'))
    r.error(path, 'only support waypointMatch when context is WAYPOINT');
  // istiod validates nothing more of a WAYPOINT patch.
  const checked = context === 'WAYPOINT' ? undefined : applyTo;
  const l = fields(r, get(o, 'listener'), `${path}.listener`, [
    'portNumber',
    'portName',
    'filterChain',
    'listenerFilter',
    'name',
  ]);
  const rc = fields(r, get(o, 'routeConfiguration'), `${path}.routeConfiguration`, [
    'portNumber',
    'portName',
    'gateway',
    'vhost',
    'name',
  ]);
  const c = fields(r, get(o, 'cluster'), `${path}.cluster`, ['portNumber', 'service', 'subset', 'name']);
  const w = fields(r, get(o, 'waypoint'), `${path}.waypoint`, ['portNumber', 'route', 'filter']);
  if (w) waypointMatch(r, w, `${path}.waypoint`);
  return compact({
    context,
    // Two at once is refused above (protojson refuses a oneof set twice): no applyTo check then.
    objectType: set.length === 1 ? set[0] : undefined,
    listener: l ? listenerMatch(r, l, `${path}.listener`, checked) : undefined,
    routeConfiguration: rc ? routeConfigurationMatch(r, rc, `${path}.routeConfiguration`) : undefined,
    cluster: c ? clusterMatch(r, c, `${path}.cluster`) : undefined,
    proxy: proxyMatch(r, get(o, 'proxy'), `${path}.proxy`),
  });
}

/**
 * `patch.value`: a JSON object as written (a google.protobuf.Struct), copied within the nesting
 * bound; inline secret material in it is an error naming where.
 */
function patchValue(r: Reader, v: unknown, path: string): { [k: string]: JsonValue } | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    r.error(path, 'must be an object (the JSON config of the object being patched)');
    return undefined;
  }
  let problem = false;
  let secretAt: string | undefined;
  let secretKey = '';
  // `secret`: the secret key above, when inside one.
  const copy = (x: unknown, at: string, depth: number, secret: string | undefined): JsonValue | undefined => {
    if (depth > MAX_VALUE_DEPTH) return ((problem = true), undefined);
    if (x === null || typeof x === 'boolean') return x;
    if (typeof x === 'string') {
      if (secretAt === undefined && /PRIVATE KEY-----/.test(x)) [secretAt, secretKey] = [at, 'PEM private key'];
      return x;
    }
    if (typeof x === 'number') return Number.isFinite(x) ? x : ((problem = true), undefined);
    if (Array.isArray(x)) {
      const out = new Array<JsonValue>(x.length);
      for (let i = 0; i < x.length; i++) {
        const c = copy(x[i], `${at}[${i}]`, depth + 1, secret);
        if (c === undefined) return undefined;
        out[i] = c;
      }
      return out;
    }
    if (typeof x !== 'object') return ((problem = true), undefined);
    const out: Record<string, JsonValue> = {};
    for (const k of Object.keys(x)) {
      const memberAt = `${at}.${k}`;
      if (secret !== undefined && INLINE_KEYS.has(k) && secretAt === undefined)
        [secretAt, secretKey] = [memberAt, `${secret}.${k}`];
      const c = copy(get(x as Raw, k), memberAt, depth + 1, secret ?? (SECRET_KEYS.has(k) ? k : undefined));
      if (c === undefined) return undefined;
      setMember(out, k, c);
    }
    return out;
  };
  const value = copy(v, path, 1, undefined);
  if (value === undefined || problem) {
    r.error(path, `must be a JSON object (no infinite numbers) nesting at most ${MAX_VALUE_DEPTH} levels`);
    return undefined;
  }
  if (secretAt !== undefined) {
    r.error(
      secretAt,
      `inline secret material (${secretKey}) is refused: meshsnap stores and serves no secrets; reference it by SDS (sds_config) or a file (filename)`,
      'inline-secret',
    );
    return undefined;
  }
  return value as { [k: string]: JsonValue };
}

/** One `configPatches[]` entry: the model's patch, or undefined when it is dropped (an error, or not applied). */
function configPatch(r: Reader, v: unknown, path: string, index: number): EnvoyFilterPatch | undefined {
  if (v === null) {
    r.error(path, 'null config patch', 'missing-field');
    return undefined;
  }
  const o = fields(r, v, path, ['applyTo', 'match', 'patch']);
  if (!o) return undefined;
  const applyTo = enumOf(r, get(o, 'applyTo'), `${path}.applyTo`, APPLY_TO);
  const match = readMatch(r, get(o, 'match'), `${path}.match`, applyTo);
  const p = fields(r, get(o, 'patch'), `${path}.patch`, ['operation', 'value', 'filterClass']);
  const operation = p ? enumOf(r, get(p, 'operation'), `${path}.patch.operation`, OPERATIONS) : undefined;
  const rawValue = p ? get(p, 'value') : undefined;
  const value =
    rawValue === undefined || rawValue === null ? undefined : patchValue(r, rawValue, `${path}.patch.value`);
  const filterClass = p ? enumOf(r, get(p, 'filterClass'), `${path}.patch.filterClass`, FILTER_CLASSES) : undefined;
  if (filterClass !== undefined && filterClass !== 'UNSPECIFIED')
    r.warn(
      `${path}.patch.filterClass`,
      'is ignored: istiod does not read it for EnvoyFilter patches (only WasmPlugins are placed by class); the operation decides where the filter goes',
      'ignored-field',
    );

  if (match.context === 'WAYPOINT') {
    // istiod skips its checks of waypoint patches; meshsnap serves no waypoints.
    r.warn(
      `${path}.match.context`,
      'WAYPOINT patches are not applied by meshsnap (it serves no waypoints)',
      'unsupported-field',
    );
    return undefined;
  }
  if (applyTo === undefined || applyTo === 'INVALID') {
    if (get(o, 'applyTo') === undefined || applyTo === 'INVALID')
      r.error(`${path}.applyTo`, 'missing applyTo', 'missing-field');
    return undefined;
  }
  if (!p) {
    r.error(`${path}.patch`, 'missing patch', 'missing-field');
    return undefined;
  }
  if (operation === undefined || operation === 'INVALID') {
    if (get(p, 'operation') === undefined || operation === 'INVALID')
      r.error(`${path}.patch.operation`, 'missing patch operation', 'missing-field');
    return undefined;
  }
  if (operation !== 'REMOVE' && (rawValue === undefined || rawValue === null)) {
    r.error(`${path}.patch.value`, 'missing patch value for non-remove operation', 'missing-field');
    return undefined;
  }
  // applyTo and match line up (istiod: only when the match sets an object type).
  const type = match.objectType;
  if (type !== undefined) {
    if (LISTENER_CLASS.has(applyTo) && type !== 'listener')
      r.error(`${path}.match`, 'applyTo for listener class objects cannot have non listener match');
    if (ROUTE_CLASS.has(applyTo) && type !== 'routeConfiguration')
      r.error(`${path}.match`, 'applyTo for http route class objects cannot have non route configuration match');
    if (applyTo === 'CLUSTER' && type !== 'cluster')
      r.error(`${path}.match`, 'applyTo for cluster class objects cannot have non cluster match');
  }
  if (UNSUPPORTED_APPLY_TO.has(applyTo)) {
    r.warn(
      `${path}.applyTo`,
      `applyTo ${applyTo} is not applied by meshsnap (it serves no ${applyTo === 'BOOTSTRAP' ? 'bootstrap' : 'extension configs (ECDS)'})`,
      'unsupported-field',
    );
    return undefined;
  }
  // istiod's convertToEnvoyFilterWrapper: the INSERT_* operations are ADD but where a list is ordered.
  const op = INSERTS.has(operation) && !INSERTABLE.has(applyTo) ? 'ADD' : operation;
  return {
    index,
    applyTo: applyTo as EnvoyFilterApplyTo,
    context: match.context as EnvoyFilterContext,
    ...(match.listener ? { listener: match.listener } : {}),
    ...(match.routeConfiguration ? { routeConfiguration: match.routeConfiguration } : {}),
    ...(match.cluster ? { cluster: match.cluster } : {}),
    ...(match.proxy ? { proxy: match.proxy } : {}),
    operation: op as EnvoyFilterOperation,
    ...(filterClass && filterClass !== 'UNSPECIFIED'
      ? { filterClass: filterClass as 'AUTHN' | 'AUTHZ' | 'STATS' }
      : {}),
    ...(value !== undefined ? { value } : {}),
  };
}

/** `spec.workloadSelector.labels` (istiod's ValidateAlphaWorkloadSelector and the CRD); undefined when empty. */
function workloadLabels(r: Reader, v: unknown): Record<string, string> | undefined {
  const path = 'spec.workloadSelector';
  const o = fields(r, v, path, ['labels']);
  if (!o) return undefined;
  const labels = strMap(r, get(o, 'labels'), `${path}.labels`) ?? {};
  checkSelectorLabels(r, labels, `${path}.labels`);
  const keys = Object.keys(labels);
  if (keys.length > MAX_LABELS)
    r.error(`${path}.labels`, `has ${keys.length} labels; at most ${MAX_LABELS} are accepted`);
  for (const k of keys)
    if ((labels[k] as string).length > MAX_LABEL_VALUE)
      r.error(`${path}.labels.${k}`, `may be at most ${MAX_LABEL_VALUE} characters`);
  if (keys.length === 0) {
    r.warn(
      `${path}.labels`,
      'workload selector specified without labels, will be applied to all services in namespace',
      'empty-selector',
    );
    return undefined;
  }
  return labels;
}

export function readEnvoyFilter(r: Reader, raw: Raw, origin: Origin, apiVersion: string): EnvoyFilter | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const created = readCreationTimestamp(r, raw);
  const spec =
    fields(r, get(raw, 'spec'), 'spec', ['workloadSelector', 'configPatches', 'priority', 'targetRefs']) ?? {};
  const labels = workloadLabels(r, get(spec, 'workloadSelector'));
  const refs = list(r, get(spec, 'targetRefs'), 'spec.targetRefs', (item, p) => readTargetRef(r, item, p), 16);
  refs?.forEach((ref, i) => {
    if (ref.namespace)
      r.error(`spec.targetRefs[${i}].namespace`, 'cross namespace referencing is not currently supported');
  });
  const hasSelector = get(spec, 'workloadSelector') !== undefined && get(spec, 'workloadSelector') !== null;
  const hasRefs = get(spec, 'targetRefs') !== undefined && get(spec, 'targetRefs') !== null;
  if (hasSelector && hasRefs)
    r.error('spec', 'only one of targetRefs or workloadSelector can be set', 'conflicting-fields');
  const priority = int(r, get(spec, 'priority'), 'spec.priority', ...INT32) ?? 0;
  // `list` reads the items in order: `at` is the item's index in spec.configPatches.
  let at = 0;
  const patches = list(
    r,
    get(spec, 'configPatches'),
    'spec.configPatches',
    (item, p) => configPatch(r, item, p, at++),
    INPUT_LIMITS.maxEnvoyFilterPatches,
  );
  if (!meta || r.failed) return undefined;
  if (Object.hasOwn(meta.annotations, REFERENCED_SERVICES_ANNOTATION))
    r.warn(
      `metadata.annotations.${REFERENCED_SERVICES_ANNOTATION}`,
      'referenced services (for waypoints and filtered gateways) are not applied by meshsnap',
      'unsupported-field',
    );
  refs?.forEach((ref, i) => {
    if (!isGatewayRef(ref))
      r.warn(
        `spec.targetRefs[${i}]`,
        `a targetRef to a ${ref.kind} attaches the EnvoyFilter to waypoints, which meshsnap does not serve (a Gateway API Gateway's proxies get it)`,
        'unsupported-field',
      );
  });
  const targetRefs = refs?.map((x) => compact({ group: x.group, kind: x.kind, name: x.name }));
  return {
    kind: 'EnvoyFilter',
    apiVersion,
    meta,
    origin,
    ...(created ? { creationTimestamp: created } : {}),
    priority,
    ...(labels ? { workloadLabels: labels } : {}),
    ...(targetRefs?.length ? { targetRefs } : {}),
    configPatches: patches ?? [],
  };
}
