/**
 * The action of a VirtualService route: forward (RouteAction), redirect, or direct response
 * (istiod's applyHTTPRouteDestination / ApplyRedirect / ApplyDirectResponse).
 */
import { proxyHeaders } from '../listener/proxy-headers.js';
import type { HTTPDirectResponse, HTTPRedirect, HTTPRoute } from '../../model/istio.js';
import { envoy, type Duration, type Route, type RouteAction } from '../../xds/proto.js';
import type { CompileContext } from '../context.js';
import { deepFreeze, sharedDurationMs } from '../intern.js';
import { destinationCluster } from './destination.js';
import { destinationHash, toHashPolicy } from './hash-policy.js';
import { mutationFields, translateHeaders } from './headers.js';
import { integerToFraction, percentToFraction } from './percent.js';
import { translateRetry } from './retry.js';

const ResponseCode = envoy.config.route.v3.RedirectAction.RedirectResponseCode;
const REDIRECT_CODE: Readonly<Record<number, number>> = {
  301: ResponseCode.MOVED_PERMANENTLY,
  302: ResponseCode.FOUND,
  303: ResponseCode.SEE_OTHER,
  307: ResponseCode.TEMPORARY_REDIRECT,
  308: ResponseCode.PERMANENT_REDIRECT,
};

/** Go's regexp.QuoteMeta. */
const escapeRegex = (s: string): string => s.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');

export const NO_TIMEOUT: Duration = { seconds: 0 };

type HashPolicy = NonNullable<RouteAction['hash_policy']>[number];

/** Hash policies are small plain objects built in a fixed key order (hash-policy.ts): compare their JSON. */
const sameHashPolicy = (a: HashPolicy, b: HashPolicy): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Sidecars bound gRPC calls by `max_grpc_timeout`; proxyless gRPC only knows max_stream_duration. */
export function timeoutFields(
  timeoutMs: number | undefined,
  proxyless: boolean,
): Pick<RouteAction, 'timeout' | 'max_grpc_timeout' | 'max_stream_duration'> {
  const timeout = timeoutMs !== undefined ? sharedDurationMs(timeoutMs) : NO_TIMEOUT;
  return proxyless ? { timeout, max_stream_duration: streamDuration(timeout) } : { timeout, max_grpc_timeout: timeout };
}

type MaxStreamDuration = NonNullable<RouteAction['max_stream_duration']>;

/** `{ max_stream_duration: timeout }`, one per timeout (timeouts are shared), frozen. */
function streamDuration(timeout: Duration): MaxStreamDuration {
  let known = streamDurations.get(timeout);
  if (!known) streamDurations.set(timeout, (known = deepFreeze({ max_stream_duration: timeout })));
  return known;
}

const streamDurations = new WeakMap<Duration, MaxStreamDuration>();

export function redirectAction(redirect: HTTPRedirect, listenerPort: number): Route['redirect'] {
  const out: NonNullable<Route['redirect']> = {};
  if (redirect.authority) out.host_redirect = redirect.authority;
  if (redirect.uri) out.path_redirect = redirect.uri;
  else if (redirect.prefixRewrite !== undefined) out.prefix_rewrite = redirect.prefixRewrite;
  if (redirect.scheme) out.scheme_redirect = redirect.scheme;
  if (redirect.port !== undefined || redirect.derivePort !== undefined) {
    let port = redirect.port ?? (redirect.derivePort === 'FROM_REQUEST_PORT' ? listenerPort : 0);
    // The scheme's default port is left out of the Location header, as istiod does.
    const scheme = redirect.scheme || 'http';
    if ((port === 80 && scheme === 'http') || (port === 443 && scheme === 'https')) port = 0;
    if (port) out.port_redirect = port;
  }
  const code = REDIRECT_CODE[redirect.redirectCode ?? 301];
  if (code) out.response_code = code;
  return out;
}

/** base64 → bytes without Buffer (this module must run in Workers). */
function base64Bytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function directResponseAction(dr: HTTPDirectResponse): Route['direct_response'] {
  const out: NonNullable<Route['direct_response']> = { status: dr.status };
  if (dr.body?.string !== undefined) out.body = { inline_string: dr.body.string };
  else if (dr.body?.bytes !== undefined) out.body = { inline_bytes: base64Bytes(dr.body.bytes) };
  return out;
}

/**
 * The forwarding action; header mutations coming from a single destination are added to `route`.
 * `authority` is the host rewrite asked for by the route's own header operations.
 */
export function forwardAction(
  ctx: CompileContext,
  http: HTTPRoute,
  route: Route,
  listenerPort: number,
  authority: string,
  proxyless: boolean,
  gatewaySemantics = false,
): RouteAction | undefined {
  const action: RouteAction = timeoutFields(http.timeoutMs, proxyless);
  if (http.rewrite) {
    if (http.rewrite.uriRegexRewrite)
      action.regex_rewrite = {
        pattern: { regex: http.rewrite.uriRegexRewrite.match },
        substitution: http.rewrite.uriRegexRewrite.rewrite,
      };
    else if (http.rewrite.uri) {
      const separated = route.match?.path_separated_prefix;
      if (gatewaySemantics && http.rewrite.uri === '/' && separated)
        // Removing the whole prefix keeps the `/` after it (istiod's Gateway API rewrite).
        action.regex_rewrite = { pattern: { regex: `^${escapeRegex(separated)}(/?)(.*)` }, substitution: '/\\2' };
      else action.prefix_rewrite = http.rewrite.uri;
    }
    if (http.rewrite.authority) authority = http.rewrite.authority;
    // ProxyConfig `proxyHeaders.xForwardedHost` (istiod's translateRoute sets it on rewriting routes).
    if (!proxyless && proxyHeaders(ctx.mesh, 'outbound').xForwardedHost) action.append_x_forwarded_host = true;
  }
  if (authority) action.host_rewrite_literal = authority;

  const mirrors = (http.mirrors ?? []).flatMap((m) => {
    if (m.percentage && m.percentage.value <= 0) return [];
    const fraction = m.percentage ? percentToFraction(m.percentage.value) : integerToFraction(100);
    return [
      {
        cluster: destinationCluster(ctx, m.destination, listenerPort),
        runtime_fraction: { default_value: fraction },
        trace_sampled: { value: false },
      },
    ];
  });
  if (mirrors.length) action.request_mirror_policies = mirrors;

  const destinations = http.route ?? [];
  const hashes: NonNullable<RouteAction['hash_policy']> = [];
  let consistentHash = false;
  if (destinations.length === 1) {
    const only = destinations[0] as (typeof destinations)[number];
    action.cluster = destinationCluster(ctx, only.destination, listenerPort);
    if (only.headers) {
      const ops = translateHeaders(only.headers);
      const f = mutationFields(ops);
      route.request_headers_to_add = [...(route.request_headers_to_add ?? []), ...(f.request_headers_to_add ?? [])];
      route.request_headers_to_remove = [
        ...(route.request_headers_to_remove ?? []),
        ...(f.request_headers_to_remove ?? []),
      ];
      route.response_headers_to_add = [...(route.response_headers_to_add ?? []), ...(f.response_headers_to_add ?? [])];
      route.response_headers_to_remove = [
        ...(route.response_headers_to_remove ?? []),
        ...(f.response_headers_to_remove ?? []),
      ];
      for (const k of [
        'request_headers_to_add',
        'request_headers_to_remove',
        'response_headers_to_add',
        'response_headers_to_remove',
      ] as const)
        if (!route[k]?.length) delete route[k];
      if (ops.authority && !action.host_rewrite_literal) action.host_rewrite_literal = ops.authority;
    }
    const hash = destinationHash(ctx.destinationRules.lookup(only.destination.host), only.destination);
    const policy = toHashPolicy(hash);
    if (policy) hashes.push(policy);
    consistentHash = hash !== undefined;
  } else {
    const clusters: NonNullable<NonNullable<RouteAction['weighted_clusters']>['clusters']> = [];
    for (const d of destinations) {
      if (!d.weight) continue; // istiod leaves out zero-weight destinations
      const cw: (typeof clusters)[number] = {
        name: destinationCluster(ctx, d.destination, listenerPort),
        weight: { value: d.weight },
      };
      if (d.headers) {
        const ops = translateHeaders(d.headers);
        Object.assign(cw, mutationFields(ops));
        if (ops.authority) cw.host_rewrite_literal = ops.authority;
      }
      clusters.push(cw);
      const policy = toHashPolicy(destinationHash(ctx.destinationRules.lookup(d.destination.host), d.destination));
      // Destinations of one service usually share its consistent hash: Envoy needs it once.
      if (policy && !hashes.some((h) => sameHashPolicy(h, policy))) hashes.push(policy);
    }
    if (!clusters.length) return undefined;
    action.weighted_clusters = { clusters };
  }
  if (hashes.length) action.hash_policy = hashes;
  // A route without `retries` takes the mesh's defaultHttpRetryPolicy, whole (istiod's applyHTTPRouteDestination).
  const retry = translateRetry(http.retries ?? ctx.mesh.defaultHttpRetryPolicy, consistentHash);
  if (retry) action.retry_policy = retry;
  return action;
}
