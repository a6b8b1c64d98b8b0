/**
 * Mesh config `extensionProviders` → model/extension-provider.ts. Only external authorization
 * (`envoyExtAuthzHttp`, `envoyExtAuthzGrpc`) is read; a provider of another type (tracing,
 * logging, …) keeps its name, so a CUSTOM policy naming it fails closed rather than unknown.
 */
import type {
  ExtAuthzGrpcProvider,
  ExtAuthzHttpProvider,
  ExtAuthzRequestBody,
  ExtensionProvider,
} from '../../model/extension-provider.js';
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
    return compact({
      name,
      envoyExtAuthzHttp: http === undefined ? undefined : httpProvider(r, http, `${p}.envoyExtAuthzHttp`),
      envoyExtAuthzGrpc: grpc === undefined ? undefined : grpcProvider(r, grpc, `${p}.envoyExtAuthzGrpc`),
    });
  });
}
