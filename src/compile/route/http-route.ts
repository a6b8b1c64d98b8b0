/**
 * A VirtualService's HTTP routes → Envoy routes for one listener port (istiod's
 * BuildHTTPRoutesForVirtualService + TranslateRoute): one Envoy route per match (or one catch-all),
 * stopping after the first route that matches everything.
 */
import { MESH_GATEWAY, resolveGatewayRef } from '../../model/gateway.js';
import type { Destination, HTTPMatchRequest, HTTPRoute, VirtualService } from '../../model/istio.js';
import { flat } from '../../model/flat-string.js';
import { packAny, type Any, type Route } from '../../xds/proto.js';
import { TypeName } from '../../xds/type-urls.js';
import { selects } from '../../proxy-class/class-id.js';
import type { CompileContext, SourcedHttpRoute } from '../context.js';
import { exactList } from '../exact.js';
import { InternTable } from '../intern.js';
import { istioConfigMetadata } from '../metadata.js';
import { directResponseAction, forwardAction, redirectAction } from './action.js';
import { checkedRoute, objectRef, originOf } from './checked-route.js';
import { translateCors } from './cors.js';
import { destinationCluster, portProblem, reportDestination } from './destination.js';
import { translateFault } from './fault.js';
import { mutationFields, translateHeaders } from './headers.js';
import { isCatchAll, translateRouteMatch, usesJwtClaims } from './match.js';
import { proxylessClusterNames } from './proxyless-clusters.js';
import { reportOnce } from './report-once.js';

/** HTTP filter names shared with the listener's HttpConnectionManager. */
export const FAULT_FILTER = 'envoy.filters.http.fault';
export const CORS_FILTER = 'envoy.filters.http.cors';

export interface RouteTarget {
  readonly listenerPort: number;
  readonly clientNamespace: string;
  /** Proxyless gRPC: only what grpc-js-xds accepts. */
  readonly proxyless: boolean;
  /** Routes for a gateway (`<ns>/<name>`); sidecars route as the `mesh` gateway. */
  readonly gateway?: string;
}

export function translateVirtualServiceRoutes(
  ctx: CompileContext,
  routes: readonly SourcedHttpRoute[],
  target: RouteTarget,
): Route[] {
  const out: Route[] = [];
  for (const sourced of routes) {
    const http = checkedRoute(ctx, sourced);
    if (!http) continue;
    let catchAll = false;
    if (!http.match?.length) {
      const r = translateRoute(ctx, sourced, http, undefined, target);
      if (r) out.push(r);
      catchAll = true;
    } else {
      for (const [k, match] of http.match.entries()) {
        if (!matchApplies(ctx, sourced, match, k, target)) continue;
        const r = translateRoute(ctx, sourced, http, match, target);
        if (!r) continue;
        out.push(r);
        if (r.match && isCatchAll(r.match)) {
          catchAll = true;
          break;
        }
      }
    }
    if (catchAll) break;
  }
  // Kept in the virtual host (../exact.ts).
  return exactList(out);
}

/** istiod's port and source checks; what a shared per-namespace config cannot honour is reported. */
function matchApplies(
  ctx: CompileContext,
  sourced: SourcedHttpRoute,
  match: HTTPMatchRequest,
  k: number,
  target: RouteTarget,
): boolean {
  if (match.port && match.port !== target.listenerPort) return false;
  if (match.gateways?.length) {
    const ns = sourced.source.meta.namespace;
    return match.gateways.some((g) => resolveGatewayRef(g, ns) === (target.gateway ?? MESH_GATEWAY));
  }
  const { source, path } = originOf(sourced);
  const unsupported = (field: string, why: string) =>
    reportOnce(ctx.diags, {
      severity: 'warning',
      code: 'unsupported-field',
      ...objectRef(source),
      field: `${path}.match[${k}].${field}`,
      message: `${why}; this match is skipped`,
    });
  if (match.sourceLabels && Object.keys(match.sourceLabels).length) {
    // Classes whose labels select it have route configs of their own (./source-labels.ts);
    // proxyless clients are placed per namespace, not by labels.
    if (target.proxyless) {
      reportOnce(ctx.diags, {
        severity: 'info',
        code: 'source-labels-proxyless',
        ...objectRef(source),
        field: `${path}.match[${k}].sourceLabels`,
        message: 'proxyless gRPC clients are placed by namespace, not labels: this match does not apply to them',
      });
      return false;
    }
    if (!ctx.routeSource || !selects(match.sourceLabels, ctx.routeSource.labels)) return false;
  }
  if (usesJwtClaims(match)) {
    unsupported('headers', 'routing on JWT claims (@request.auth.claims) is not supported');
    return false;
  }
  return !match.sourceNamespace || match.sourceNamespace === target.clientNamespace;
}

function routeName(http: HTTPRoute, match: HTTPMatchRequest | undefined): string {
  const base = http.name ?? '';
  return match?.name ? `${base}.${match.name}` : base;
}

function translateRoute(
  ctx: CompileContext,
  sourced: SourcedHttpRoute,
  http: HTTPRoute,
  match: HTTPMatchRequest | undefined,
  target: RouteTarget,
): Route | undefined {
  const source: VirtualService = sourced.source;
  const out: Route = {};
  const name = routeName(http, match);
  if (name) out.name = name;
  // Proxyless gRPC clients know prefix, path and regex matchers only (gRFC A28): plain prefixes for them.
  out.match = translateRouteMatch(
    match,
    (source.gatewaySemantics === true || source.ingressSemantics === true) && !target.proxyless,
  );
  if (match?.statPrefix) out.stat_prefix = match.statPrefix;
  out.metadata = istioConfigMetadata(source);

  let authority = '';
  if (http.headers) {
    const ops = translateHeaders(http.headers);
    Object.assign(out, mutationFields(ops));
    authority = ops.authority;
  }

  if (http.redirect || http.directResponse) {
    if (target.proxyless) {
      // grpc-js-xds NACKs a whole RouteConfiguration holding such a route; istiod leaves them out.
      const { source: origin, path } = originOf(sourced);
      reportOnce(ctx.diags, {
        severity: 'info',
        code: 'proxyless-unsupported-route',
        ...objectRef(origin),
        field: `${path}.${http.redirect ? 'redirect' : 'directResponse'}`,
        message:
          'proxyless gRPC clients cannot follow redirect or directResponse routes; the route is left out of their configuration',
      });
      return undefined;
    }
    if (http.redirect) out.redirect = redirectAction(http.redirect, target.listenerPort);
    else if (http.directResponse) out.direct_response = directResponseAction(http.directResponse);
  } else {
    const onPort = destinationsOnPort(ctx, sourced, http, target.listenerPort);
    const forwarded = onPort && target.proxyless ? proxylessForward(ctx, sourced, onPort, target.listenerPort) : onPort;
    if (!forwarded) return undefined;
    const action = forwardAction(
      ctx,
      forwarded,
      out,
      target.listenerPort,
      authority,
      target.proxyless,
      source.gatewaySemantics === true,
    );
    if (!action) return undefined;
    out.route = action;
  }
  const operation = routeOperation(out, source.meta.name, target.listenerPort);
  out.decorator = decorators.get(operation, () => ({ operation }));

  const filters: [string, Any][] = [];
  if (http.corsPolicy && !target.proxyless)
    filters.push([CORS_FILTER, packAny(TypeName.CorsPolicy, translateCors(http.corsPolicy))]);
  const fault = http.fault ? translateFault(http.fault) : undefined;
  if (fault) filters.push([FAULT_FILTER, packAny(TypeName.Fault, fault)]);
  if (filters.length) out.typed_per_filter_config = Object.fromEntries(filters.sort(([a], [b]) => (a < b ? -1 : 1)));
  return out;
}

/**
 * The destinations and mirrors that can be served on the listener's port: one naming no port of a
 * service with several goes to that port (portProblem); where the service has no such port it is
 * dropped on this port (reported), and a route left without a destination with it.
 */
function destinationsOnPort(
  ctx: CompileContext,
  sourced: SourcedHttpRoute,
  http: HTTPRoute,
  listenerPort: number,
): HTTPRoute | undefined {
  const route = http.route ?? [];
  const mirrors = http.mirrors ?? [];
  const problems = (list: readonly { destination: Destination }[], field: 'route' | 'mirrors') =>
    list.map((d, j) => {
      const problem = portProblem(ctx, d.destination, listenerPort);
      if (problem) {
        const { source, path } = originOf(sourced);
        // Indexes as written: the checked route may have dropped some before.
        const written = (field === 'route' ? sourced.route.route : sourced.route.mirrors) ?? [];
        const i = written.indexOf(d as never);
        reportDestination(ctx.diags, source, `${path}.${field}[${i >= 0 ? i : j}]`, problem);
      }
      return problem;
    });
  const routeProblems = problems(route, 'route');
  const mirrorProblems = problems(mirrors, 'mirrors');
  if (!routeProblems.some(Boolean) && !mirrorProblems.some(Boolean)) return http;
  const kept = route.filter((_, j) => !routeProblems[j]);
  if (!kept.length) return undefined;
  return { ...http, route: kept, mirrors: mirrors.filter((_, j) => !mirrorProblems[j]) };
}

/** By operation: a route translated for sidecars and for proxyless clients names the same one. */
const decorators = new InternTable<NonNullable<Route['decorator']>>();

/**
 * Proxyless clients only get EDS clusters (cluster/grpc.ts): destinations and mirrors going to a
 * headless, ExternalName or PASSTHROUGH service are left out of their routes (with an info), and a
 * route left without a destination is left out.
 */
function proxylessForward(
  ctx: CompileContext,
  sourced: SourcedHttpRoute,
  http: HTTPRoute,
  listenerPort: number,
): HTTPRoute | undefined {
  const clusters = proxylessClusterNames(ctx);
  const ok = (d: Destination): boolean => clusters.has(destinationCluster(ctx, d, listenerPort));
  const route = http.route ?? [];
  const mirrors = http.mirrors ?? [];
  const kept = route.filter((d) => ok(d.destination));
  const keptMirrors = mirrors.filter((m) => ok(m.destination));
  if (kept.length === route.length && keptMirrors.length === mirrors.length) return http;
  const { source, path } = originOf(sourced);
  reportOnce(ctx.diags, {
    severity: 'info',
    code: 'proxyless-unsupported-destination',
    ...objectRef(source),
    field: `${path}.${kept.length === route.length ? 'mirrors' : 'route'}`,
    message:
      'proxyless gRPC clients only get EDS clusters: destinations to headless, ExternalName or PASSTHROUGH services are left out of their configuration',
  });
  if (!kept.length) return undefined;
  return { ...http, route: kept, mirrors: keptMirrors };
}

/** Tracing operation name, as istiod's GetRouteOperation: `<host>:<port><path>` or `<vs>:<listener port><path>`. */
export function routeOperation(route: Route, vsName: string, port: number): string {
  const m = route.match ?? {};
  const path =
    m.prefix != null
      ? `${m.prefix}*`
      : m.path != null
        ? m.path
        : m.safe_regex?.regex != null
          ? m.safe_regex.regex
          : '/*';
  const cluster = route.route?.cluster;
  const parts = cluster?.split('|');
  if (parts && parts.length === 4 && parts[0] === 'outbound' && /^\d+$/.test(parts[1] ?? ''))
    return flat(`${parts[3]}:${parts[1]}${path}`);
  return flat(`${vsName}:${port}${path}`);
}
