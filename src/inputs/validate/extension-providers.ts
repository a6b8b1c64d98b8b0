/**
 * Mesh config `extensionProviders` → model/extension-provider.ts. External authorization
 * (`envoyExtAuthzHttp`, `envoyExtAuthzGrpc`) and file access logs (`envoyFileAccessLog`, for
 * Telemetry access logging) are read; the gRPC and OpenTelemetry access log services are marked
 * (a Telemetry naming one is told it is not applied); a provider of another type (tracing,
 * metrics, …) keeps its name, so a CUSTOM policy naming it fails closed rather than unknown.
 */
import type {
  EnvoyFileAccessLogProvider,
  ExtAuthzGrpcProvider,
  ExtAuthzHttpProvider,
  ExtAuthzRequestBody,
  ExtensionProvider,
  UnbuiltAccessLogProvider,
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

function common(r: Reader, o: Record<string, unknown>, path: string): ExtAuthzGrpcProvider | undefined {
  const service = requiredStr(r, get(o, 'service'), `${path}.service`);
  const p = port(r, get(o, 'port'), `${path}.port`);
  if (service === undefined || p === undefined) {
    if (p === undefined && get(o, 'port') === undefined) r.error(`${path}.port`, 'is required', 'missing-field');
    return undefined;
  }
  return compact({
    service,
    port: p,
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
    return compact({
      name,
      envoyExtAuthzHttp: http === undefined ? undefined : httpProvider(r, http, `${p}.envoyExtAuthzHttp`),
      envoyExtAuthzGrpc: grpc === undefined ? undefined : grpcProvider(r, grpc, `${p}.envoyExtAuthzGrpc`),
      envoyFileAccessLog: file === undefined ? undefined : fileAccessLog(r, file, `${p}.envoyFileAccessLog`),
      unbuiltAccessLog: unbuilt,
    });
  });
}

const UNBUILT_ACCESS_LOGS: readonly UnbuiltAccessLogProvider[] = ['envoyHttpAls', 'envoyTcpAls', 'envoyOtelAls'];

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
