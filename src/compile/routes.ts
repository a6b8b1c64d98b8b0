/**
 * RDS: the outbound RouteConfigurations of sidecars and proxyless gRPC clients.
 *
 * Sidecars: one RouteConfiguration per outbound HTTP port P, named "P", with a virtual host per
 * HTTP service exposing P (domains as seen from the client's namespace), sorted by name, then the
 * catch-all `allow_any` (ALLOW_ANY) or `block_all` (REGISTRY_ONLY) virtual host.
 *
 * Proxyless gRPC: one RouteConfiguration per HTTP service port, named like its api_listener
 * (`host:port`), holding that service's virtual host only.
 *
 * A service routed by a VirtualService gets its translated routes; if none apply to the port it
 * gets istiod's `default` route, as istiod does.
 */
import type { MeshService } from '../model/service-model.js';
import { isHttpProtocol } from '../model/service-model.js';
import type { Route, RouteConfiguration, VirtualHost } from '../xds/proto.js';
import type { CompileContext } from './context.js';
import { PASSTHROUGH_CLUSTER, proxylessListenerName, routeConfigName, virtualHostName } from './names.js';
import { NO_TIMEOUT } from './route/action.js';
import { defaultRoute } from './route/default-route.js';
import { DomainDeduper, serviceDomains } from './route/domains.js';
import { translateVirtualServiceRoutes } from './route/http-route.js';

export const ALLOW_ANY_VHOST = 'allow_any';
export const BLOCK_ALL_VHOST = 'block_all';
/** istiod's limit on direct response bodies (1 MiB). */
const MAX_DIRECT_RESPONSE_BODY = 1024 * 1024;

/** Services that get virtual hosts: ExternalName services are aliases, which istiod skips here. */
const routable = (s: MeshService): boolean => s.externalName === undefined;

/**
 * Routes do not depend on the client namespace unless a match names a sourceNamespace, so they are
 * built once per compile and shared between the namespaces' configs (10k services × namespaces).
 */
const routeCache = new WeakMap<CompileContext, Map<string, Route[]>>();

function serviceRoutes(ctx: CompileContext, service: MeshService, port: number, clientNamespace: string, proxyless: boolean): Route[] {
  let cache = routeCache.get(ctx);
  if (!cache) routeCache.set(ctx, (cache = new Map()));
  const sourced = ctx.virtualServices.httpRoutes(service.hostname);
  const perNamespace = sourced?.some((s) => s.route.match?.some((m) => m.sourceNamespace)) ?? false;
  const key = `${proxyless ? 'g' : 's'}|${port}|${service.hostname}${perNamespace ? `|${clientNamespace}` : ''}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let routes: Route[] = [];
  if (sourced?.length) routes = translateVirtualServiceRoutes(ctx, sourced, { listenerPort: port, clientNamespace, proxyless });
  if (!routes.length) routes = [defaultRoute(service.hostname, port, ctx.destinationRules.lookup(service.hostname))];
  cache.set(key, routes);
  return routes;
}

function catchAllVirtualHost(ctx: CompileContext): VirtualHost {
  if (ctx.mesh.outboundTrafficPolicy === 'REGISTRY_ONLY') {
    return { name: BLOCK_ALL_VHOST, domains: ['*'], routes: [{ name: BLOCK_ALL_VHOST, match: { prefix: '/' }, direct_response: { status: 502 } }], include_request_attempt_count: true };
  }
  return {
    name: ALLOW_ANY_VHOST,
    domains: ['*'],
    routes: [{ name: ALLOW_ANY_VHOST, match: { prefix: '/' }, route: { cluster: PASSTHROUGH_CLUSTER, timeout: NO_TIMEOUT, max_grpc_timeout: NO_TIMEOUT } }],
    include_request_attempt_count: true,
  };
}

/** HTTP service ports, grouped by port number; services stay in hostname order. */
function httpServicesByPort(ctx: CompileContext): Map<number, MeshService[]> {
  const byPort = new Map<number, MeshService[]>();
  for (const s of ctx.model.services) {
    if (!routable(s)) continue;
    for (const p of s.ports) {
      if (!isHttpProtocol(p.protocol)) continue;
      const list = byPort.get(p.port) ?? [];
      if (list[list.length - 1] !== s) list.push(s);
      byPort.set(p.port, list);
    }
  }
  return byPort;
}

const byName = (a: VirtualHost, b: VirtualHost): number => ((a.name ?? '') < (b.name ?? '') ? -1 : (a.name ?? '') > (b.name ?? '') ? 1 : 0);

export function buildOutboundRoutes(ctx: CompileContext, clientNamespace: string): Map<string, RouteConfiguration> {
  const out = new Map<string, RouteConfiguration>();
  const byPort = httpServicesByPort(ctx);
  for (const port of [...byPort.keys()].sort((a, b) => a - b)) {
    const services = byPort.get(port) as MeshService[];
    const dedupe = new DomainDeduper();
    const vhosts: VirtualHost[] = [];
    for (const s of services) {
      const domains = dedupe.keep(serviceDomains(s, clientNamespace, ctx.mesh.domainSuffix, undefined));
      if (!domains.length) continue;
      vhosts.push({ name: virtualHostName(s.hostname, port), domains, routes: serviceRoutes(ctx, s, port, clientNamespace, false), include_request_attempt_count: true });
    }
    vhosts.sort(byName);
    vhosts.push(catchAllVirtualHost(ctx));
    const name = routeConfigName(port);
    out.set(name, {
      name,
      virtual_hosts: vhosts,
      validate_clusters: { value: false },
      max_direct_response_body_size_bytes: { value: MAX_DIRECT_RESPONSE_BODY },
      ignore_port_in_host_matching: true,
    });
  }
  return out;
}

export function buildProxylessRoutes(ctx: CompileContext, clientNamespace: string): Map<string, RouteConfiguration> {
  const out = new Map<string, RouteConfiguration>();
  for (const s of ctx.model.services) {
    if (!routable(s)) continue;
    for (const p of s.ports) {
      if (!isHttpProtocol(p.protocol)) continue;
      const name = proxylessListenerName(s.hostname, p.port);
      if (out.has(name)) continue;
      const vhost: VirtualHost = {
        name: virtualHostName(s.hostname, p.port),
        domains: new DomainDeduper().keep(serviceDomains(s, clientNamespace, ctx.mesh.domainSuffix, p.port)),
        routes: serviceRoutes(ctx, s, p.port, clientNamespace, true),
        include_request_attempt_count: true,
      };
      out.set(name, { name, virtual_hosts: [vhost] });
    }
  }
  return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
