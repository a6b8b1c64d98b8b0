/**
 * Mesh config `extensionProviders` → model/extension-provider.ts. External authorization
 * (`envoyExtAuthzHttp`, `envoyExtAuthzGrpc`), file access logs (`envoyFileAccessLog`, for
 * Telemetry access logging) and tracers (`zipkin`, `datadog`, `skywalking`, `opentelemetry`, for
 * Telemetry tracing and `defaultProviders.tracing`) are read; the gRPC and OpenTelemetry access log
 * services are marked (a Telemetry naming one is told it is not applied), and so is `lightstep`
 * (istiod: deprecated, it builds no tracer). A provider of another type (metrics, …) keeps its
 * name, so a CUSTOM policy naming it fails closed rather than unknown.
 *
 * A tracer's `service` and `port` are required (istiod's validateExtensionProviderTracing*). What
 * the Envoy API meshsnap encodes cannot say gets an `unsupported-field` warning naming it: zipkin's
 * `timeout`, `headers` and `USE_B3_WITH_W3C_PROPAGATION` (its ZipkinConfig is the pre-1.29 one:
 * collector cluster, endpoint and hostname), opentelemetry's `OTEL_SEMANTIC_CONVENTIONS`; a header
 * read from istiod's environment (`envName`) is dropped with a warning; skywalking's `accessToken`
 * gets an info (istiod does not use it either) and is not read, so it is not stored. */
import type {
  DatadogTracingProvider,
  DynatraceSampler,
  EnvoyFileAccessLogProvider,
  ExtAuthzGrpcProvider,
  ExtAuthzHttpProvider,
  ExtAuthzRequestBody,
  ExtensionProvider,
  OpenTelemetryTracingProvider,
  OtelHttpService,
  ProviderHeader,
  SkyWalkingTracingProvider,
  TracingCollector,
  UnbuiltAccessLogProvider,
  ZipkinTracingProvider,
} from '../../model/extension-provider.js';
import type { JsonValue } from '../../model/json-value.js';
import { duration } from './duration.js';
import {
  bool,
  compact,
  fields,
  get,
  int,
  list,
  obj,
  port,
  requiredStr,
  str,
  strList,
  strMap,
  type Reader,
} from './reader.js';

const COMMON = ['service', 'port', 'timeout', 'failOpen', 'statusOnError', 'includeRequestBodyInCheck'];
const HTTP_ONLY = [
  'pathPrefix',
  'includeRequestHeadersInCheck',
  'includeHeadersInCheck',
  'includeAdditionalHeadersInCheck',
  'headersToUpstreamOnAllow',
  'headersToDownstreamOnDeny',
  'headersToDownstreamOnAllow',
];

function requestBody(r: Reader, v: unknown, path: string): ExtAuthzRequestBody | undefined {
  const o = fields(r, v, path, ['maxRequestBytes', 'allowPartialMessage', 'packAsBytes']);
  if (!o) return undefined;
  return compact({
    maxRequestBytes: int(r, get(o, 'maxRequestBytes'), `${path}.maxRequestBytes`),
    allowPartialMessage: bool(r, get(o, 'allowPartialMessage'), `${path}.allowPartialMessage`),
    packAsBytes: bool(r, get(o, 'packAsBytes'), `${path}.packAsBytes`),
  });
}

/** `service` and `port`, both required (errors `missing-field`). */
function collector(r: Reader, o: Record<string, unknown>, path: string): TracingCollector | undefined {
  const service = requiredStr(r, get(o, 'service'), `${path}.service`);
  const p = port(r, get(o, 'port'), `${path}.port`);
  if (service === undefined || p === undefined) {
    if (p === undefined && get(o, 'port') === undefined) r.error(`${path}.port`, 'is required', 'missing-field');
    return undefined;
  }
  return { service, port: p };
}

function common(r: Reader, o: Record<string, unknown>, path: string): ExtAuthzGrpcProvider | undefined {
  const at = collector(r, o, path);
  if (!at) return undefined;
  return compact({
    ...at,
    timeoutMs: duration(r, get(o, 'timeout'), `${path}.timeout`),
    failOpen: bool(r, get(o, 'failOpen'), `${path}.failOpen`),
    statusOnError: str(r, get(o, 'statusOnError'), `${path}.statusOnError`),
    includeRequestBodyInCheck:
      get(o, 'includeRequestBodyInCheck') === undefined
        ? undefined
        : requestBody(r, get(o, 'includeRequestBodyInCheck'), `${path}.includeRequestBodyInCheck`),
  });
}

function httpProvider(r: Reader, v: unknown, path: string): ExtAuthzHttpProvider | undefined {
  const o = fields(r, v, path, [...COMMON, ...HTTP_ONLY]);
  const base = o && common(r, o, path);
  if (!o || !base) return undefined;
  const strs = (k: string) => strList(r, get(o, k), `${path}.${k}`);
  return compact({
    ...base,
    pathPrefix: str(r, get(o, 'pathPrefix'), `${path}.pathPrefix`),
    includeRequestHeadersInCheck: strs('includeRequestHeadersInCheck'),
    includeHeadersInCheck: strs('includeHeadersInCheck'),
    includeAdditionalHeadersInCheck: strMap(
      r,
      get(o, 'includeAdditionalHeadersInCheck'),
      `${path}.includeAdditionalHeadersInCheck`,
    ),
    headersToUpstreamOnAllow: strs('headersToUpstreamOnAllow'),
    headersToDownstreamOnDeny: strs('headersToDownstreamOnDeny'),
    headersToDownstreamOnAllow: strs('headersToDownstreamOnAllow'),
  });
}

function grpcProvider(r: Reader, v: unknown, path: string): ExtAuthzGrpcProvider | undefined {
  const o = fields(r, v, path, COMMON);
  return o && common(r, o, path);
}

export function readExtensionProviders(r: Reader, v: unknown, path: string): ExtensionProvider[] | undefined {
  return list(r, v, path, (item, p) => {
    const o = obj(r, item, p);
    if (!o) return undefined;
    const name = requiredStr(r, get(o, 'name'), `${p}.name`);
    if (name === undefined) return undefined;
    const http = get(o, 'envoyExtAuthzHttp');
    const grpc = get(o, 'envoyExtAuthzGrpc');
    const file = get(o, 'envoyFileAccessLog');
    const unbuilt = UNBUILT_ACCESS_LOGS.find((k) => get(o, k) !== undefined);
    const read = <T>(key: string, f: (r: Reader, v: unknown, path: string) => T | undefined): T | undefined => {
      const v = get(o, key);
      return v === undefined || v === null ? undefined : f(r, v, `${p}.${key}`);
    };
    return compact({
      name,
      envoyExtAuthzHttp: http === undefined ? undefined : httpProvider(r, http, `${p}.envoyExtAuthzHttp`),
      envoyExtAuthzGrpc: grpc === undefined ? undefined : grpcProvider(r, grpc, `${p}.envoyExtAuthzGrpc`),
      envoyFileAccessLog: file === undefined ? undefined : fileAccessLog(r, file, `${p}.envoyFileAccessLog`),
      unbuiltAccessLog: unbuilt,
      zipkin: read('zipkin', zipkin),
      datadog: read('datadog', datadog),
      skywalking: read('skywalking', skywalking),
      opentelemetry: read('opentelemetry', opentelemetry),
      // Its fields are not read: istiod builds no tracer of it (its accessToken is not stored).
      unbuiltTracing: read('lightstep', () => 'lightstep' as const),
    });
  });
}

const UNBUILT_ACCESS_LOGS: readonly UnbuiltAccessLogProvider[] = ['envoyHttpAls', 'envoyTcpAls', 'envoyOtelAls'];

/** Bound on a tracer's `headers` / `initialMetadata`. */
export const MAX_PROVIDER_HEADERS = 64;
/** Bound on a tracer's `path` (as a file access log's). */
const MAX_PROVIDER_PATH_CHARS = 4096;

/** An enum value among `values`, or an error. */
function oneOf(r: Reader, v: unknown, path: string, values: readonly string[]): string | undefined {
  const s = str(r, v, path);
  if (s === undefined || values.includes(s)) return s;
  r.error(path, `must be one of ${values.join(', ')}, got "${s.slice(0, 40)}"`);
  return undefined;
}

/** A uint32 kept when not 0 (proto3: 0 is unset). */
function nonZero(r: Reader, v: unknown, path: string): number | undefined {
  return int(r, v, path) || undefined;
}

/** A path, within its bound; empty: undefined. */
function boundedPath(r: Reader, v: unknown, path: string): string | undefined {
  const s = str(r, v, path);
  if (s !== undefined && s.length > MAX_PROVIDER_PATH_CHARS)
    r.error(path, `is longer than ${MAX_PROVIDER_PATH_CHARS} characters`);
  return s || undefined;
}

/** Header names and values Envoy refuses (HeaderValue: no NUL, CR or LF). */
const BAD_HEADER_CHARS = /[\0\r\n]/;

/**
 * `HttpHeader` list (`headers`, `initialMetadata`): `{name, value}` kept; `{name, envName}` dropped
 * with a warning (istiod reads the variable from its own environment, which meshsnap has not).
 */
/** Header names whose values are credentials (API keys, tokens, authorization). */
const CREDENTIAL_HEADER = /authorization|token|key|secret|passw|credential|cookie|signature|x-honeycomb-team/i;

function headers(r: Reader, v: unknown, path: string): ProviderHeader[] | undefined {
  return list(
    r,
    v,
    path,
    (item, p) => {
      const o = fields(r, item, p, ['name', 'value', 'envName']);
      if (!o) return undefined;
      const name = requiredStr(r, get(o, 'name'), `${p}.name`);
      // A credential is secret material: its value is neither read (so not stored) nor served.
      if (name !== undefined && CREDENTIAL_HEADER.test(name)) {
        r.warn(
          `${p}.value`,
          `header "${name.slice(0, 80)}" carries a credential: meshsnap stores and serves no secrets, so it is not sent (let a collector in the mesh add it)`,
          'secret-not-stored',
        );
        return undefined;
      }
      const value = str(r, get(o, 'value'), `${p}.value`);
      const envName = str(r, get(o, 'envName'), `${p}.envName`);
      for (const [k, s] of [
        ['name', name],
        ['value', value],
      ] as const) {
        if (s === undefined) continue;
        if (s.length > MAX_PROVIDER_FORMAT_CHARS)
          r.error(`${p}.${k}`, `is longer than ${MAX_PROVIDER_FORMAT_CHARS} characters`);
        else if (BAD_HEADER_CHARS.test(s)) r.error(`${p}.${k}`, 'may not hold NUL, CR or LF: Envoy refuses it');
      }
      // A oneof: protojson refuses both.
      if (value !== undefined && envName !== undefined) {
        r.error(p, 'only one of value or envName may be set', 'conflicting-fields');
        return undefined;
      }
      if (envName !== undefined) {
        r.warn(
          `${p}.envName`,
          "envName reads istiod's own environment; meshsnap compiles without one: header not sent",
          'unsupported-field',
        );
        return undefined;
      }
      return name === undefined ? undefined : { name, value: value ?? '' };
    },
    MAX_PROVIDER_HEADERS,
  );
}

/** `HttpService` (`opentelemetry.http`, `dynatraceSampler.httpService.http`). */
function otelHttp(r: Reader, v: unknown, path: string): OtelHttpService | undefined {
  const o = fields(r, v, path, ['path', 'timeout', 'headers']);
  if (!o) return undefined;
  const hs = headers(r, get(o, 'headers'), `${path}.headers`);
  return compact({
    path: boundedPath(r, get(o, 'path'), `${path}.path`),
    timeoutMs: duration(r, get(o, 'timeout'), `${path}.timeout`),
    headers: hs?.length ? hs : undefined,
  });
}

const ZIPKIN_PRE_129 =
  'the Envoy API meshsnap encodes has the pre-1.29 ZipkinConfig (collector cluster, endpoint and hostname), with no HttpService';

/** `zipkin` (istiod's zipkinConfig for proxies before Istio 1.29). */
function zipkin(r: Reader, v: unknown, path: string): ZipkinTracingProvider | undefined {
  const o = fields(r, v, path, [
    'service',
    'port',
    'maxTagLength',
    'enable64bitTraceId',
    'path',
    'traceContextOption',
    'timeout',
    'headers',
  ]);
  const at = o && collector(r, o, path);
  if (!o) return undefined;
  const maxTagLength = nonZero(r, get(o, 'maxTagLength'), `${path}.maxTagLength`);
  const enable64 = bool(r, get(o, 'enable64bitTraceId'), `${path}.enable64bitTraceId`);
  const endpoint = boundedPath(r, get(o, 'path'), `${path}.path`);
  const option = oneOf(r, get(o, 'traceContextOption'), `${path}.traceContextOption`, [
    'USE_B3',
    'USE_B3_WITH_W3C_PROPAGATION',
  ]);
  if (option === 'USE_B3_WITH_W3C_PROPAGATION')
    r.warn(
      `${path}.traceContextOption`,
      `USE_B3_WITH_W3C_PROPAGATION is not applied: ${ZIPKIN_PRE_129} and no trace context option; proxies propagate B3 headers only`,
      'unsupported-field',
    );
  if (duration(r, get(o, 'timeout'), `${path}.timeout`) !== undefined)
    r.warn(`${path}.timeout`, `timeout is not applied: ${ZIPKIN_PRE_129} to set it on`, 'unsupported-field');
  // Checked for shape only: not applied, so neither kept nor stored.
  const given = list(
    r,
    get(o, 'headers'),
    `${path}.headers`,
    (item, p) => fields(r, item, p, ['name', 'value', 'envName']),
    MAX_PROVIDER_HEADERS,
  );
  if (given?.length)
    r.warn(`${path}.headers`, `headers are not applied: ${ZIPKIN_PRE_129} to send them with`, 'unsupported-field');
  if (!at) return undefined;
  return compact({
    ...at,
    maxTagLength,
    enable64bitTraceId: enable64 === true ? (true as const) : undefined,
    path: endpoint,
  });
}

function datadog(r: Reader, v: unknown, path: string): DatadogTracingProvider | undefined {
  const o = fields(r, v, path, ['service', 'port', 'maxTagLength']);
  const at = o && collector(r, o, path);
  if (!o) return undefined;
  const maxTagLength = nonZero(r, get(o, 'maxTagLength'), `${path}.maxTagLength`);
  return at && compact({ ...at, maxTagLength });
}

/** A member set (not null), found without reading it: a credential meshsnap does not use is not stored. */
function setUnread(o: object, key: string): boolean {
  const d = Object.getOwnPropertyDescriptor(o, key);
  return d !== undefined && d.value !== undefined && d.value !== null;
}

function skywalking(r: Reader, v: unknown, path: string): SkyWalkingTracingProvider | undefined {
  const o = fields(r, v, path, ['service', 'port', 'accessToken']);
  if (!o) return undefined;
  const at = collector(r, o, path);
  if (setUnread(o, 'accessToken'))
    r.info(
      `${path}.accessToken`,
      "accessToken is not used: istiod's SkyWalking tracer does not send it either (meshsnap does not store it)",
      'unsupported-field',
    );
  return at;
}

const ENRICHMENTS = ['ISTIO_CANONICAL', 'OTEL_SEMANTIC_CONVENTIONS'];

/** `opentelemetry` (istiod's otelConfig): OTLP over `http` when set, else gRPC. */
function opentelemetry(r: Reader, v: unknown, path: string): OpenTelemetryTracingProvider | undefined {
  const o = fields(r, v, path, [
    'service',
    'port',
    'maxTagLength',
    'http',
    'grpc',
    'resourceDetectors',
    'dynatraceSampler',
    'serviceAttributeEnrichment',
  ]);
  const at = o && collector(r, o, path);
  if (!o) return undefined;
  const maxTagLength = nonZero(r, get(o, 'maxTagLength'), `${path}.maxTagLength`);
  const http = otelHttp(r, get(o, 'http'), `${path}.http`);
  const g = fields(r, get(o, 'grpc'), `${path}.grpc`, ['timeout', 'initialMetadata']);
  let grpc: OpenTelemetryTracingProvider['grpc'];
  if (g) {
    const metadata = headers(r, get(g, 'initialMetadata'), `${path}.grpc.initialMetadata`);
    grpc = compact({
      timeoutMs: duration(r, get(g, 'timeout'), `${path}.grpc.timeout`),
      initialMetadata: metadata?.length ? metadata : undefined,
    });
  }
  // ValidateExtensionProviderTracingOpentelemetry.
  if (http && grpc)
    r.error(path, 'OpenTelemetryTracingProvider cannot specify both grpc and http', 'conflicting-fields');
  const d = fields(r, get(o, 'resourceDetectors'), `${path}.resourceDetectors`, ['environment', 'dynatrace']);
  const detector = (k: string) =>
    d && fields(r, get(d, k), `${path}.resourceDetectors.${k}`, []) ? (true as const) : undefined;
  const resourceDetectors = d && compact({ environment: detector('environment'), dynatrace: detector('dynatrace') });
  const dynatraceSampler = sampler(r, get(o, 'dynatraceSampler'), `${path}.dynatraceSampler`);
  const enrichment = oneOf(r, get(o, 'serviceAttributeEnrichment'), `${path}.serviceAttributeEnrichment`, ENRICHMENTS);
  if (enrichment !== undefined && enrichment !== 'ISTIO_CANONICAL')
    r.warn(
      `${path}.serviceAttributeEnrichment`,
      `${enrichment} is not applied: the span service name is meshsnap's for every OpenTelemetry provider (none is written; the environment resource detector reads OTEL_RESOURCE_ATTRIBUTES: README, Telemetry tracing)`,
      'unsupported-field',
    );
  if (!at) return undefined;
  return compact({ ...at, maxTagLength, http, grpc, resourceDetectors, dynatraceSampler });
}

/** `dynatraceSampler` (istiod's configureDynatraceSampler); its `httpService` needs a service and port. */
function sampler(r: Reader, v: unknown, path: string): DynatraceSampler | undefined {
  const o = fields(r, v, path, ['tenant', 'clusterId', 'rootSpansPerMinute', 'httpService']);
  if (!o) return undefined;
  const tenant = str(r, get(o, 'tenant'), `${path}.tenant`);
  const clusterId = int(r, get(o, 'clusterId'), `${path}.clusterId`, -(2 ** 31), 2 ** 31 - 1);
  const rootSpansPerMinute = nonZero(r, get(o, 'rootSpansPerMinute'), `${path}.rootSpansPerMinute`);
  const h = fields(r, get(o, 'httpService'), `${path}.httpService`, ['service', 'port', 'http']);
  let httpService: DynatraceSampler['httpService'];
  if (h) {
    const at = collector(r, h, `${path}.httpService`);
    const http = otelHttp(r, get(h, 'http'), `${path}.httpService.http`);
    httpService = at && compact({ ...at, http });
  }
  return compact({ tenant: tenant || undefined, clusterId: clusterId || undefined, rootSpansPerMinute, httpService });
}

/** Bounds on a file access log provider's format: its text length, and the nesting of its labels. */
export const MAX_PROVIDER_FORMAT_CHARS = 16_384;
export const MAX_PROVIDER_LABELS_DEPTH = 16;

/** `envoyFileAccessLog`: `path`, `logFormat` (`text` or `labels`), `omitEmptyValues`. */
function fileAccessLog(r: Reader, v: unknown, path: string): EnvoyFileAccessLogProvider | undefined {
  const o = fields(r, v, path, ['path', 'logFormat', 'omitEmptyValues']);
  if (!o) return undefined;
  const file = str(r, get(o, 'path'), `${path}.path`);
  if (file !== undefined && file.length > 4096) r.error(`${path}.path`, 'is longer than 4096 characters');
  const omit = bool(r, get(o, 'omitEmptyValues'), `${path}.omitEmptyValues`);
  const format = fields(r, get(o, 'logFormat'), `${path}.logFormat`, ['text', 'labels']);
  let logFormat: EnvoyFileAccessLogProvider['logFormat'];
  if (format) {
    const text = str(r, get(format, 'text'), `${path}.logFormat.text`);
    if (text !== undefined && text.length > MAX_PROVIDER_FORMAT_CHARS)
      r.error(`${path}.logFormat.text`, `is longer than ${MAX_PROVIDER_FORMAT_CHARS} characters`);
    const labelsRaw = get(format, 'labels');
    const labels = labelsRaw === undefined ? undefined : jsonLabels(r, labelsRaw, `${path}.logFormat.labels`);
    // A oneof: protojson refuses both.
    if (text !== undefined && labelsRaw !== undefined)
      r.error(`${path}.logFormat`, 'only one of text or labels may be set', 'conflicting-fields');
    logFormat = compact({ text, labels });
  }
  return compact({ path: file || undefined, logFormat, omitEmptyValues: omit === true ? (true as const) : undefined });
}

/** A google.protobuf.Struct written as YAML/JSON: an object of JSON values, within the depth bound. */
function jsonLabels(r: Reader, v: unknown, path: string): Record<string, JsonValue> | undefined {
  const o = obj(r, v, path);
  if (!o) return undefined;
  const copy = (x: unknown, depth: number): JsonValue | undefined => {
    if (depth > MAX_PROVIDER_LABELS_DEPTH) return undefined;
    if (x === null || typeof x === 'string' || typeof x === 'boolean') return x;
    if (typeof x === 'number') return Number.isFinite(x) ? x : undefined;
    if (Array.isArray(x)) {
      const items = x.map((i) => copy(i, depth + 1));
      return items.every((i) => i !== undefined) ? (items as JsonValue[]) : undefined;
    }
    if (typeof x === 'object') {
      const out: Record<string, JsonValue> = {};
      for (const k of Object.keys(x as object).sort()) {
        const c = copy((x as Record<string, unknown>)[k], depth + 1);
        if (c === undefined) return undefined;
        Object.defineProperty(out, k, { value: c, enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return undefined;
  };
  const value = copy(o, 1);
  if (value === undefined) {
    r.error(path, `must be a JSON object nesting at most ${MAX_PROVIDER_LABELS_DEPTH} levels`);
    return undefined;
  }
  return value as Record<string, JsonValue>;
}
