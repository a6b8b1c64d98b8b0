/**
 * MeshConfig `defaultConfig` (ProxyConfig): the proxy settings every proxy starts with. Most of it
 * is read by istio-agent and the proxy's bootstrap, never by xDS (an `info` each). Three parts are
 * xDS, as istiod reads them (pilot/pkg/networking/util/proxy_headers.go, core/gateway.go
 * buildGatewayConnectionManager and buildGatewayListener, core/connection_settings.go):
 * `proxyHeaders` (the Server header, x-request-id, x-envoy-attempt-count, the x-envoy debug
 * headers, XFCC on inbound, x-forwarded-port and -host), `gatewayTopology` (numTrustedProxies,
 * forwardClientCertDetails, proxyProtocol) and `connectionSettings` (HCM timeouts, HTTP/2 limits,
 * header and path handling, gateway listener buffers; the EDGE profile's defaults on gateways).
 * Those xDS parts meshsnap does not build are warned about (`unsupported-field`).
 */
import type {
  ForwardClientCertDetails,
  MeshConnectionSettings,
  MeshGatewayTopology,
  MeshProxyHeaders,
  ProxyTracing,
  TracingCustomTag,
} from '../../model/mesh-config.js';
import { duration } from './duration.js';
import { bool, compact, fields, get, int, num, obj, str, type Reader } from './reader.js';

const FCC_MODES: readonly ForwardClientCertDetails[] = [
  'SANITIZE',
  'FORWARD_ONLY',
  'APPEND_FORWARD',
  'SANITIZE_SET',
  'ALWAYS_FORWARD_ONLY',
];

/** ProxyConfig fields istiod turns into xDS that meshsnap does not build, and why. */
const NOT_BUILT: Readonly<Record<string, string>> = {};

/** The xDS parts, read below. */
const XDS_PARTS: ReadonlySet<string> = new Set(['proxyHeaders', 'gatewayTopology', 'connectionSettings', 'tracing']);

/** A limit on `server.value`, the Server header's value. */
const MAX_SERVER_VALUE = 256;

export interface DefaultConfigParts {
  readonly proxyHeaders?: MeshProxyHeaders;
  readonly gatewayTopology?: MeshGatewayTopology;
  readonly connectionSettings?: MeshConnectionSettings;
  readonly tracing?: ProxyTracing;
}

export function readDefaultConfig(r: Reader, v: unknown, path: string): DefaultConfigParts {
  const o = obj(r, v, path);
  if (!o) return {};
  for (const key of Object.keys(o).sort()) {
    if (XDS_PARTS.has(key)) continue;
    const why = NOT_BUILT[key];
    if (why) r.warn(`${path}.${key}`, `is not applied: ${why}`, 'unsupported-field');
    else
      r.info(
        `${path}.${key.slice(0, 80)}`,
        'read by istio-agent and the proxy bootstrap, not by xDS: not used by meshsnap',
        'ignored-field',
      );
  }
  const proxyHeaders = readProxyHeaders(r, get(o, 'proxyHeaders'), `${path}.proxyHeaders`);
  const gatewayTopology = readTopology(r, get(o, 'gatewayTopology'), `${path}.gatewayTopology`);
  const connectionSettings = readConnectionSettings(r, get(o, 'connectionSettings'), `${path}.connectionSettings`);
  const tracing = readTracing(r, get(o, 'tracing'), `${path}.tracing`);
  return compact({
    proxyHeaders: nonEmpty(proxyHeaders),
    gatewayTopology: nonEmpty(gatewayTopology),
    connectionSettings: nonEmpty(connectionSettings),
    tracing: nonEmpty(tracing),
  });
}

/** The tracers: the proxy bootstrap's (istio-agent writes them), not xDS. */
const TRACERS = ['zipkin', 'lightstep', 'datadog', 'stackdriver', 'openCensusAgent', 'tlsSettings'] as const;
/** Bounds on what a custom tag names (a tag, an environment variable, a header). */
export const MAX_TAG_TEXT = 256;
export const MAX_CUSTOM_TAGS = 64;

/**
 * ProxyConfig.Tracing as istiod reads it into the HCMs (configureTracingFromTelemetry's legacy path):
 * `sampling` (percent; istiod takes 1 above 100, and Envoy refuses a negative one), `customTags`
 * (literal, environment, header; istiod's validateCustomTags refuses an empty one),
 * `maxPathTagLength`, `enableIstioTags`. The tracer fields are the bootstrap's (`info`).
 */
function readTracing(r: Reader, v: unknown, path: string): ProxyTracing | undefined {
  const o = fields(r, v, path, ['sampling', 'customTags', 'maxPathTagLength', 'enableIstioTags', ...TRACERS]);
  if (!o) return undefined;
  const at = (k: string): string => `${path}.${k}`;
  for (const k of TRACERS)
    if (get(o, k) !== undefined)
      r.info(
        at(k),
        "the tracer is configured in the proxy's bootstrap (istio-agent), not by xDS: meshsnap's HCMs set sampling and tags only, as istiod's",
        'ignored-field',
      );
  let sampling = num(r, get(o, 'sampling'), at('sampling'));
  if (sampling !== undefined && sampling < 0) {
    r.error(at('sampling'), `must be a percentage from 0 to 100, got ${sampling}`);
    sampling = undefined;
  } else if (sampling !== undefined && sampling > 100) {
    r.warn(at('sampling'), `is over 100: istiod samples 1 % instead, and so does meshsnap`, 'invalid-field');
    sampling = 1;
  }
  const tagsRaw = obj(r, get(o, 'customTags'), at('customTags'));
  const customTags: TracingCustomTag[] = [];
  for (const tag of Object.keys(tagsRaw ?? {}).sort()) {
    const tagPath = `${at('customTags')}[${JSON.stringify(tag.slice(0, 80))}]`;
    if (customTags.length >= MAX_CUSTOM_TAGS) {
      r.error(at('customTags'), `has more than ${MAX_CUSTOM_TAGS} tags`);
      break;
    }
    const read = readCustomTag(r, get(tagsRaw as Record<string, unknown>, tag), tagPath, tag);
    if (read) customTags.push(read);
  }
  const maxPathTagLength = int(r, get(o, 'maxPathTagLength'), at('maxPathTagLength'));
  const enableIstioTags = bool(r, get(o, 'enableIstioTags'), at('enableIstioTags'));
  return compact({
    sampling: sampling ? sampling : undefined,
    customTags: customTags.length ? customTags : undefined,
    maxPathTagLength: maxPathTagLength ? maxPathTagLength : undefined,
    enableIstioTags,
  });
}

function readCustomTag(r: Reader, v: unknown, path: string, tag: string): TracingCustomTag | undefined {
  const o = fields(r, v, path, ['literal', 'environment', 'header']);
  if (!o) {
    r.error(path, 'must be a custom tag (literal, environment or header), got nothing (istiod: nil custom tag)');
    return undefined;
  }
  const text = (x: unknown, p: string): string | undefined => {
    const s = str(r, x, p);
    if (s !== undefined && (s.length > MAX_TAG_TEXT || /[\r\n\0]/.test(s)))
      r.error(p, `must be at most ${MAX_TAG_TEXT} characters on one line`);
    return s;
  };
  if (tag === '' || tag.length > MAX_TAG_TEXT) r.error(path, `a tag name must have 1 to ${MAX_TAG_TEXT} characters`);
  const kinds = ['literal', 'environment', 'header'].filter((k) => get(o, k) !== undefined && get(o, k) !== null);
  if (kinds.length !== 1) {
    r.error(
      path,
      `must set exactly one of literal, environment, header; got ${kinds.length ? kinds.join(', ') : 'none'}`,
    );
    return undefined;
  }
  const kind = kinds[0] as 'literal' | 'environment' | 'header';
  if (kind === 'literal') {
    const l = fields(r, get(o, 'literal'), `${path}.literal`, ['value']);
    return { tag, literal: (l && text(get(l, 'value'), `${path}.literal.value`)) ?? '' };
  }
  const e = fields(r, get(o, kind), `${path}.${kind}`, ['name', 'defaultValue']);
  const name = e ? text(get(e, 'name'), `${path}.${kind}.name`) : undefined;
  if (!name) {
    r.error(`${path}.${kind}.name`, 'is required');
    return undefined;
  }
  const defaultValue = e ? text(get(e, 'defaultValue'), `${path}.${kind}.defaultValue`) : undefined;
  const source = { name, ...(defaultValue ? { defaultValue } : {}) };
  return kind === 'environment' ? { tag, environment: source } : { tag, header: source };
}

/** Absent when nothing is set: a mesh that sets nothing keeps its digests. */
const nonEmpty = <T extends object>(o: T | undefined): T | undefined => (o && Object.keys(o).length ? o : undefined);

function fccMode(r: Reader, v: unknown, path: string): ForwardClientCertDetails | undefined {
  const s = str(r, v, path);
  if (s === undefined || s === 'UNDEFINED') return undefined;
  if ((FCC_MODES as readonly string[]).includes(s)) return s as ForwardClientCertDetails;
  r.error(path, `must be one of UNDEFINED, ${FCC_MODES.join(', ')}, got "${s.slice(0, 40)}"`);
  return undefined;
}

/** A `{disabled: bool}` (or `{enabled: bool}`) message: whether the flag is set true. */
function flag(r: Reader, v: unknown, path: string, key: 'disabled' | 'enabled'): true | undefined {
  const o = fields(r, v, path, [key]);
  return o && bool(r, get(o, key), `${path}.${key}`) === true ? true : undefined;
}

function readProxyHeaders(r: Reader, v: unknown, path: string): MeshProxyHeaders | undefined {
  const o = fields(r, v, path, [
    'forwardedClientCert',
    'setCurrentClientCertDetails',
    'requestId',
    'server',
    'attemptCount',
    'envoyDebugHeaders',
    'metadataExchangeHeaders',
    'preserveHttp1HeaderCase',
    'xForwardedPort',
    'xForwardedHost',
  ]);
  if (!o) return undefined;
  const at = (k: string): string => `${path}.${k}`;
  const details = fields(r, get(o, 'setCurrentClientCertDetails'), at('setCurrentClientCertDetails'), [
    'subject',
    'cert',
    'chain',
    'dns',
    'uri',
  ]);
  const detail = (k: string) =>
    details ? bool(r, get(details, k), `${at('setCurrentClientCertDetails')}.${k}`) : undefined;
  const setCurrentClientCertDetails = details
    ? compact({
        subject: detail('subject'),
        cert: detail('cert'),
        chain: detail('chain'),
        dns: detail('dns'),
        uri: detail('uri'),
      })
    : undefined;
  const server = fields(r, get(o, 'server'), at('server'), ['disabled', 'value']);
  const serverDisabled: true | undefined =
    server && bool(r, get(server, 'disabled'), at('server.disabled')) === true ? true : undefined;
  const serverValue = server ? str(r, get(server, 'value'), at('server.value')) : undefined;
  if (serverValue !== undefined && (serverValue.length > MAX_SERVER_VALUE || /[\r\n\0]/.test(serverValue)))
    r.error(at('server.value'), `must be a header value of at most ${MAX_SERVER_VALUE} characters`);
  if (get(o, 'metadataExchangeHeaders') !== undefined) {
    const mx = fields(r, get(o, 'metadataExchangeHeaders'), at('metadataExchangeHeaders'), ['mode']);
    const mode = mx ? str(r, get(mx, 'mode'), at('metadataExchangeHeaders.mode')) : undefined;
    if (mode !== undefined && mode !== 'UNDEFINED' && mode !== 'IN_MESH')
      r.error(at('metadataExchangeHeaders.mode'), `must be UNDEFINED or IN_MESH, got "${mode.slice(0, 40)}"`);
    r.info(
      at('metadataExchangeHeaders'),
      "meshsnap serves no Istio metadata exchange filter (it is istio-proxy's, not Envoy's): nothing to change",
      'ignored-field',
    );
  }
  if (bool(r, get(o, 'preserveHttp1HeaderCase'), at('preserveHttp1HeaderCase')) === true)
    r.warn(
      at('preserveHttp1HeaderCase'),
      "is not applied: meshsnap's Envoy API has no preserve_case header formatter; HTTP/1 header names are lower-cased",
      'unsupported-field',
    );
  return compact({
    forwardedClientCert: fccMode(r, get(o, 'forwardedClientCert'), at('forwardedClientCert')),
    setCurrentClientCertDetails,
    requestIdDisabled: flag(r, get(o, 'requestId'), at('requestId'), 'disabled'),
    serverDisabled,
    serverValue: serverDisabled || !serverValue ? undefined : serverValue,
    attemptCountDisabled: flag(r, get(o, 'attemptCount'), at('attemptCount'), 'disabled'),
    envoyDebugHeadersDisabled: flag(r, get(o, 'envoyDebugHeaders'), at('envoyDebugHeaders'), 'disabled'),
    xForwardedPort: flag(r, get(o, 'xForwardedPort'), at('xForwardedPort'), 'enabled'),
    xForwardedHost: flag(r, get(o, 'xForwardedHost'), at('xForwardedHost'), 'enabled'),
  });
}

function readTopology(r: Reader, v: unknown, path: string): MeshGatewayTopology | undefined {
  const o = fields(r, v, path, ['numTrustedProxies', 'forwardClientCertDetails', 'proxyProtocol']);
  if (!o) return undefined;
  const proxyProtocol = get(o, 'proxyProtocol');
  if (proxyProtocol !== undefined && proxyProtocol !== null) fields(r, proxyProtocol, `${path}.proxyProtocol`, []);
  const numTrustedProxies = int(r, get(o, 'numTrustedProxies'), `${path}.numTrustedProxies`);
  return compact({
    numTrustedProxies: numTrustedProxies ? numTrustedProxies : undefined,
    forwardClientCertDetails: fccMode(r, get(o, 'forwardClientCertDetails'), `${path}.forwardClientCertDetails`),
    proxyProtocol: proxyProtocol !== undefined && proxyProtocol !== null ? (true as const) : undefined,
  });
}

const INT32_MAX = 2 ** 31 - 1;
/** The longest google.protobuf.Duration (10,000 years), in milliseconds. */
const MAX_DURATION_MS = 315_576_000_000_000;
const UNDERSCORE_ACTIONS = ['ALLOW', 'REJECT_REQUEST', 'DROP_HEADER'] as const;
const ESCAPED_SLASH_ACTIONS = [
  'KEEP_UNCHANGED',
  'REJECT_REQUEST',
  'UNESCAPE_AND_REDIRECT',
  'UNESCAPE_AND_FORWARD',
] as const;

/** ConnectionSettings fields istiod does not turn into xDS, and why. */
const CONNECTION_NOT_XDS: Readonly<Record<string, string>> = {
  clusterPerConnectionBufferLimitBytes: 'istiod validates it but builds it into no cluster',
  listenerConnectionLimit: 'istiod validates it but builds it into no listener yet',
  globalDownstreamConnectionLimit: "read into the proxy's bootstrap (runtime), not by xDS",
};

/**
 * ProxyConfig.ConnectionSettings, validated as istiod's validateConnectionSettings (pkg/config/
 * validation/agent): sizes non-negative, durations non-negative, concurrent streams positive,
 * HTTP/2 windows at least 65535, connection limits positive; enums by name.
 */
function readConnectionSettings(r: Reader, v: unknown, path: string): MeshConnectionSettings | undefined {
  const o = fields(r, v, path, [
    'profile',
    'listenerPerConnectionBufferLimitBytes',
    'clusterPerConnectionBufferLimitBytes',
    'httpIdleTimeout',
    'httpMaxConnectionDuration',
    'httpDrainTimeout',
    'httpRequestTimeout',
    'httpRequestHeadersTimeout',
    'httpStreamIdleTimeout',
    'httpMaxStreamDuration',
    'httpMaxConcurrentStreams',
    'http2InitialStreamWindowSize',
    'http2InitialConnectionWindowSize',
    'httpHeadersWithUnderscoresAction',
    'httpMergeSlashes',
    'httpPathWithEscapedSlashesAction',
    'listenerConnectionLimit',
    'globalDownstreamConnectionLimit',
  ]);
  if (!o) return undefined;
  const at = (k: string): string => `${path}.${k}`;
  const int32 = (k: string, min: number) => int(r, get(o, k), at(k), min, INT32_MAX);
  const ms = (k: string): number | undefined => {
    const d = duration(r, get(o, k), at(k));
    if (d !== undefined && d > MAX_DURATION_MS) {
      r.error(at(k), 'is longer than a protobuf Duration can be');
      return undefined;
    }
    return d;
  };
  /** An enum by its Istio name (`prefix` + name); the model keeps the name. */
  const enumOf = <T extends string>(
    k: string,
    names: readonly T[],
    unspecified: string,
    prefix = '',
  ): T | undefined => {
    const s = str(r, get(o, k), at(k));
    if (s === undefined || s === unspecified) return undefined;
    const name = names.find((n) => prefix + n === s);
    if (name === undefined)
      r.error(
        at(k),
        `must be one of ${[unspecified, ...names.map((n) => prefix + n)].join(', ')}, got "${s.slice(0, 40)}"`,
      );
    return name;
  };
  const profile = str(r, get(o, 'profile'), at('profile'));
  if (profile !== undefined && profile !== 'SIDECAR' && profile !== 'EDGE')
    r.error(at('profile'), `must be SIDECAR or EDGE, got "${profile.slice(0, 40)}"`);
  // Checked as istiod, then reported: not xDS.
  int32('clusterPerConnectionBufferLimitBytes', 0);
  int32('listenerConnectionLimit', 1);
  int32('globalDownstreamConnectionLimit', 1);
  for (const [k, why] of Object.entries(CONNECTION_NOT_XDS))
    if (get(o, k) !== undefined && get(o, k) !== null) r.info(at(k), `${why}: not used by meshsnap`, 'ignored-field');
  return compact({
    edge: profile === 'EDGE' ? (true as const) : undefined,
    listenerPerConnectionBufferLimitBytes: int32('listenerPerConnectionBufferLimitBytes', 0),
    httpIdleTimeoutMs: ms('httpIdleTimeout'),
    httpMaxConnectionDurationMs: ms('httpMaxConnectionDuration'),
    httpDrainTimeoutMs: ms('httpDrainTimeout'),
    httpRequestTimeoutMs: ms('httpRequestTimeout'),
    httpRequestHeadersTimeoutMs: ms('httpRequestHeadersTimeout'),
    httpStreamIdleTimeoutMs: ms('httpStreamIdleTimeout'),
    httpMaxStreamDurationMs: ms('httpMaxStreamDuration'),
    httpMaxConcurrentStreams: int32('httpMaxConcurrentStreams', 1),
    http2InitialStreamWindowSize: int32('http2InitialStreamWindowSize', 65535),
    http2InitialConnectionWindowSize: int32('http2InitialConnectionWindowSize', 65535),
    httpHeadersWithUnderscoresAction: enumOf(
      'httpHeadersWithUnderscoresAction',
      UNDERSCORE_ACTIONS,
      'HEADERS_WITH_UNDERSCORES_UNSPECIFIED',
      'HEADERS_WITH_UNDERSCORES_',
    ),
    httpMergeSlashes: bool(r, get(o, 'httpMergeSlashes'), at('httpMergeSlashes')),
    httpPathWithEscapedSlashesAction: enumOf(
      'httpPathWithEscapedSlashesAction',
      ESCAPED_SLASH_ACTIONS,
      'PATH_WITH_ESCAPED_SLASHES_UNSPECIFIED',
    ),
  });
}
