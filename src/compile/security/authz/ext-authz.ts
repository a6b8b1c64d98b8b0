/**
 * Mesh config external authorization providers → Envoy ext_authz filter configs (istiod's
 * builder/extauthz.go). A provider with any error is kept with its errors: the CUSTOM policies
 * using it then become DENY rules, so a broken provider fails closed.
 */
import type {
  ExtAuthzHttpProvider,
  ExtAuthzGrpcProvider,
  ExtAuthzRequestBody,
  ExtensionProvider,
} from '../../../model/extension-provider.js';
import { envoy, durationMs } from '../../../xds/proto.js';
import type { MetadataMatcher } from './matchers.js';

export type HttpExtAuthz = envoy.extensions.filters.http.ext_authz.v3.ExtAuthz.$Properties;
export type TcpExtAuthz = envoy.extensions.filters.network.ext_authz.v3.ExtAuthz.$Properties;
type ListStringMatcher = envoy.type.matcher.v3.ListStringMatcher.$Properties;

export const EXT_AUTHZ_MATCH_PREFIX = 'istio-ext-authz';
const SHADOW_EFFECTIVE_POLICY_ID_KEY = 'istio_ext_authz_shadow_effective_policy_id';
const API_V3 = envoy.config.core.v3.ApiVersion.V3;

export interface BuiltExtAuthz {
  readonly http?: HttpExtAuthz;
  /** Only gRPC providers also serve TCP. */
  readonly tcp?: TcpExtAuthz;
  readonly errors: readonly string[];
}

/** Resolves `[<ns>/]<host>` of a provider to the outbound cluster; undefined if no such service is known. */
export type ServiceLookup = (
  service: string,
  port: number,
) => { readonly hostname: string; readonly cluster: string } | undefined;

/** Runs only the provider's ext_authz filter when the RBAC shadow rules matched a policy of this provider. */
export function filterEnabledMetadata(rbacFilterName: string, provider: string): MetadataMatcher {
  return {
    filter: rbacFilterName,
    path: [{ key: SHADOW_EFFECTIVE_POLICY_ID_KEY }],
    value: { string_match: { prefix: `${EXT_AUTHZ_MATCH_PREFIX}-${provider}` } },
  };
}

function providerNameErrors(name: string): string[] {
  if (name === '') return ['extension provider name must not be empty'];
  if (name.length > 63) return [`provider name too long (max 63 characters): ${name.length}`];
  if (!/^[a-z0-9-]+$/.test(name))
    return [`invalid provider name ${JSON.stringify(name)}: only lowercase letters, digits, and hyphens allowed`];
  if (name.startsWith('-') || name.endsWith('-'))
    return [`invalid provider name ${JSON.stringify(name)}: cannot start or end with hyphen`];
  return [];
}

const STATUS_CODES = new Set<number>(
  Object.values(envoy.type.v3.StatusCode).filter((v): v is number => typeof v === 'number'),
);

function statusOnError(status: string | undefined, errors: string[]): envoy.type.v3.HttpStatus.$Properties | undefined {
  if (status === undefined || status === '') return undefined;
  const code = /^-?\d+$/.test(status) ? Number(status) : NaN;
  if (!STATUS_CODES.has(code)) {
    errors.push(`unsupported statusOnError ${status}`);
    return undefined;
  }
  return { code };
}

function resolveService(
  p: ExtAuthzGrpcProvider,
  lookup: ServiceLookup,
  errors: string[],
): { hostname: string; cluster: string } | undefined {
  if (!(Number.isInteger(p.port) && p.port >= 1 && p.port <= 65535))
    errors.push(`port must be in the range [1, 65535], found: ${p.port}`);
  const found = lookup(p.service, p.port);
  if (!found) errors.push(`could not find service ${p.service} in the mesh`);
  return found;
}

function headerPatterns(headers: readonly string[] | undefined): ListStringMatcher | undefined {
  if (!headers || headers.length === 0) return undefined;
  return {
    patterns: headers.map((h) =>
      h.startsWith('*')
        ? { suffix: h.slice(1), ignore_case: true }
        : h.endsWith('*')
          ? { prefix: h.slice(0, -1), ignore_case: true }
          : { exact: h, ignore_case: true },
    ),
  };
}

function withRequestBody(
  body: ExtAuthzRequestBody | undefined,
): envoy.extensions.filters.http.ext_authz.v3.BufferSettings.$Properties | undefined {
  if (!body) return undefined;
  return {
    max_request_bytes: body.maxRequestBytes ?? 0,
    allow_partial_message: body.allowPartialMessage ?? false,
    pack_as_bytes: body.packAsBytes ?? false,
  };
}

const timeout = (ms: number | undefined) => durationMs(ms ?? 600_000);

function buildHttp(p: ExtAuthzHttpProvider, lookup: ServiceLookup): BuiltExtAuthz {
  const errors: string[] = [];
  const service = resolveService(p, lookup, errors);
  const status = statusOnError(p.statusOnError, errors);
  if (p.pathPrefix && !p.pathPrefix.startsWith('/'))
    errors.push(`pathPrefix must begin with \`/\`, found: ${JSON.stringify(p.pathPrefix)}`);
  const wildcardFields: [string, readonly string[] | undefined][] = [
    ['IncludeRequestHeadersInCheck', p.includeRequestHeadersInCheck],
    ['IncludeHeadersInCheck', p.includeHeadersInCheck],
    ['HeadersToDownstreamOnDeny', p.headersToDownstreamOnDeny],
    ['HeadersToDownstreamOnAllow', p.headersToDownstreamOnAllow],
    ['HeadersToUpstreamOnAllow', p.headersToUpstreamOnAllow],
  ];
  for (const [field, values] of wildcardFields)
    if (values?.includes('*'))
      errors.push(`a single wildcard ("*") is not supported, change it to either prefix or suffix match: ${field}`);
  if (errors.length > 0 || !service) return { errors };

  const httpService: envoy.extensions.filters.http.ext_authz.v3.HttpService.$Properties = {
    path_prefix: p.pathPrefix ?? '',
    server_uri: { timeout: timeout(p.timeoutMs), uri: `http://${service.hostname}`, cluster: service.cluster },
  };
  const additional = Object.keys(p.includeAdditionalHeadersInCheck ?? {}).sort();
  if (additional.length > 0)
    httpService.authorization_request = {
      headers_to_add: additional.map((key) => ({ key, value: p.includeAdditionalHeadersInCheck?.[key] ?? '' })),
    };
  if (
    p.headersToUpstreamOnAllow?.length ||
    p.headersToDownstreamOnDeny?.length ||
    p.headersToDownstreamOnAllow?.length
  ) {
    httpService.authorization_response = {
      allowed_upstream_headers: headerPatterns(p.headersToUpstreamOnAllow),
      allowed_client_headers: headerPatterns(p.headersToDownstreamOnDeny),
      allowed_client_headers_on_success: headerPatterns(p.headersToDownstreamOnAllow),
    };
  }
  const http: HttpExtAuthz = {
    status_on_error: status,
    failure_mode_allow: p.failOpen ?? false,
    transport_api_version: API_V3,
    http_service: httpService,
    with_request_body: withRequestBody(p.includeRequestBodyInCheck),
    allowed_headers: headerPatterns(p.includeRequestHeadersInCheck) ?? headerPatterns(p.includeHeadersInCheck),
  };
  return { http, errors };
}

function buildGrpc(p: ExtAuthzGrpcProvider, lookup: ServiceLookup): BuiltExtAuthz {
  const errors: string[] = [];
  const service = resolveService(p, lookup, errors);
  const status = statusOnError(p.statusOnError, errors);
  if (errors.length > 0 || !service) return { errors };
  const grpcService: envoy.config.core.v3.GrpcService.$Properties = {
    envoy_grpc: { cluster_name: service.cluster, authority: service.hostname },
    timeout: timeout(p.timeoutMs),
  };
  return {
    http: {
      status_on_error: status,
      failure_mode_allow: p.failOpen ?? false,
      grpc_service: grpcService,
      transport_api_version: API_V3,
      with_request_body: withRequestBody(p.includeRequestBodyInCheck),
    },
    tcp: {
      stat_prefix: 'tcp.',
      failure_mode_allow: p.failOpen ?? false,
      transport_api_version: API_V3,
      grpc_service: grpcService,
    },
    errors,
  };
}

/** Every ext_authz provider of the mesh config by name (other provider kinds are ignored). */
export function resolveExtAuthzProviders(
  providers: readonly ExtensionProvider[],
  lookup: ServiceLookup,
): ReadonlyMap<string, BuiltExtAuthz> {
  const resolved = new Map<string, BuiltExtAuthz>();
  providers.forEach((provider, index) => {
    if (!provider.envoyExtAuthzHttp && !provider.envoyExtAuthzGrpc) return;
    const errors =
      provider.name === ''
        ? [`extension provider name must not be empty, found empty at index: ${index}`]
        : providerNameErrors(provider.name);
    if (resolved.has(provider.name))
      errors.push(`extension provider name must be unique, found duplicate: ${provider.name}`);
    const built = provider.envoyExtAuthzHttp
      ? buildHttp(provider.envoyExtAuthzHttp, lookup)
      : buildGrpc(provider.envoyExtAuthzGrpc as ExtAuthzGrpcProvider, lookup);
    resolved.set(provider.name, { ...built, errors: [...errors, ...built.errors] });
  });
  return resolved;
}
