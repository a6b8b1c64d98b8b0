/**
 * RDS for a gateway: one RouteConfiguration per route name (`http.<port>`,
 * `https.<port>.<portName>.<gateway>.<ns>`), as istiod's buildGatewayHTTPRouteConfig builds it:
 *
 * - for each server of the route, each VirtualService bound to the server's Gateway, each host the
 *   server allows of that VirtualService (namespace and wildcard matching): a virtual host
 *   `<host>:<server port>` with domain `<host>`, holding the VirtualService's routes for that
 *   gateway and port; a host met again appends its routes;
 * - `httpsRedirect` sets `require_tls: ALL` on the server's virtual hosts, and adds one for each of
 *   its hosts no VirtualService serves;
 * - no default route: a host without a VirtualService gets no virtual host (Envoy answers 404);
 *   with no virtual host at all, istiod's `blackhole:<port>` one (domain `*`, no routes);
 * - virtual hosts whose routes are the same objects are collapsed into the first (by host), catch-all
 *   routes moved last, virtual hosts sorted by name.
 */
import { proxyHeaders } from '../listener/proxy-headers.js';
import type { Route, RouteConfiguration, VirtualHost } from '../../xds/proto.js';
import type { CompileContext } from '../context.js';
import { isCatchAll } from '../route/match.js';
import { translateVirtualServiceRoutes } from '../route/http-route.js';
import { gatewayBindings } from './bindings.js';
import type { MergedServer } from './merge.js';
import { gatewayVirtualHostName } from './names.js';
import { intersectHosts, serverHostsFor } from './server-hosts.js';

/** istiod's limit on direct response bodies (1 MiB). */
const MAX_DIRECT_RESPONSE_BODY = 1024 * 1024;
const REQUIRE_TLS_ALL = 2;

interface VhostDraft {
  readonly host: string;
  readonly name: string;
  routes: Route[];
  requireTls: boolean;
}

export function buildGatewayRouteConfig(
  ctx: CompileContext,
  routeName: string,
  servers: readonly MergedServer[],
  proxyNamespace: string,
): RouteConfiguration {
  const bindings = gatewayBindings(ctx);
  const vhosts = new Map<string, VhostDraft>();
  // Per gateway and VirtualService, as istiod caches them (built for the first server's port).
  const routesCache = new Map<string, Route[]>();
  for (const m of servers) {
    const port = m.server.port.number;
    const redirect = m.server.tls?.httpsRedirect === true;
    for (const bound of bindings.get(m.gatewayKey) ?? []) {
      const hosts = intersectHosts(serverHostsFor(m.hosts, bound.vs.meta.namespace), bound.hosts);
      if (!hosts.length) continue;
      const key = `${m.gatewayKey}|${bound.vs.meta.namespace}/${bound.vs.meta.name}`;
      let routes = routesCache.get(key);
      if (!routes) {
        routes = translateVirtualServiceRoutes(ctx, bound.http, {
          listenerPort: port,
          clientNamespace: proxyNamespace,
          proxyless: false,
          gateway: m.gatewayKey,
        });
        routesCache.set(key, routes);
      }
      for (const raw of hosts) {
        const host = raw.toLowerCase();
        const existing = vhosts.get(host);
        if (existing) {
          existing.routes = [...existing.routes, ...routes];
          if (redirect) existing.requireTls = true;
        } else {
          vhosts.set(host, {
            host,
            name: gatewayVirtualHostName(host, port),
            routes: [...routes],
            requireTls: redirect,
          });
        }
      }
    }
    if (!redirect) continue;
    for (const raw of m.hosts) {
      // istiod keys this by the host as written (`ns/host` included); meshsnap uses the DNS name.
      const host = (raw.includes('/') ? raw.slice(raw.indexOf('/') + 1) : raw).toLowerCase();
      const existing = vhosts.get(host);
      if (existing) existing.requireTls = true;
      else
        vhosts.set(host, {
          host,
          name: gatewayVirtualHostName(host, port),
          routes: [],
          requireTls: true,
        });
    }
  }

  let virtualHosts: VirtualHost[];
  if (vhosts.size === 0) {
    const port = servers[0]?.server.port.number ?? 0;
    virtualHosts = [{ name: gatewayVirtualHostName('blackhole', port), domains: ['*'], routes: [] }];
  } else {
    const attempts = proxyHeaders(ctx.mesh, 'gateway').includeRequestAttemptCount;
    virtualHosts = collapse([...vhosts.values()]).map((v) => toVirtualHost(v, attempts));
    virtualHosts.sort((a, b) => ((a.name ?? '') < (b.name ?? '') ? -1 : (a.name ?? '') > (b.name ?? '') ? 1 : 0));
  }
  return {
    name: routeName,
    virtual_hosts: virtualHosts,
    validate_clusters: { value: false },
    max_direct_response_body_size_bytes: { value: MAX_DIRECT_RESPONSE_BODY },
    ignore_port_in_host_matching: true,
  };
}

/** istiod's collapseDuplicateRoutes: hosts (in name order) with the very same route objects share the first's virtual host. */
function collapse(drafts: VhostDraft[]): { draft: VhostDraft; domains: string[] }[] {
  const sorted = [...drafts].sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  const out: { draft: VhostDraft; domains: string[] }[] = [];
  const byFirstRoute = new Map<Route | undefined, { draft: VhostDraft; domains: string[] }[]>();
  for (const d of sorted) {
    const candidates = byFirstRoute.get(d.routes[0]) ?? [];
    const twin = candidates.find(
      (o) =>
        o.draft.requireTls === d.requireTls &&
        o.draft.routes.length === d.routes.length &&
        o.draft.routes.every((r, i) => r === d.routes[i]),
    );
    if (twin) {
      twin.domains.push(d.host);
      continue;
    }
    const entry = { draft: d, domains: [d.host] };
    out.push(entry);
    byFirstRoute.set(d.routes[0], [...candidates, entry]);
  }
  return out;
}

function toVirtualHost(
  { draft, domains }: { draft: VhostDraft; domains: string[] },
  includeRequestAttemptCount: boolean,
): VirtualHost {
  const catchAll = (r: Route): boolean => r.match != null && isCatchAll(r.match);
  const ordered = [...draft.routes.filter((r) => !catchAll(r)), ...draft.routes.filter(catchAll)];
  const vh: VirtualHost = {
    name: draft.name,
    domains,
    routes: ordered,
    include_request_attempt_count: includeRequestAttemptCount,
  };
  if (draft.requireTls) vh.require_tls = REQUIRE_TLS_ALL;
  return vh;
}
