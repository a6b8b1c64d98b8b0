/**
 * What a route attached to one parent contributes to the VirtualServices (istiod's route
 * collections): per hostname the route keeps after the listener's hostname and listener isolation,
 * a piece keyed `<Istio Gateway>/<host>`; for a Service parent (GAMMA) one piece keyed
 * `<route namespace>[/<port>]/<service FQDN>`, its matches narrowed to the port.
 */
import type { GatewayApiRoute } from '../../model/gateway-api.js';
import type { HTTPRoute as IstioHttpRoute } from '../../model/istio.js';
import { hostsOverlap, hostSubsetOf } from './hostnames.js';
import type { RuleConversion } from './rule-parts.js';
import type { L4Conversion } from './l4-rules.js';
import type { RouteParent } from './parents.js';
import type { Piece } from './virtual-services.js';

/** A route's rules converted for one kind of parent: HTTP routes, or L4 destinations per rule. */
export type Converted = RuleConversion | (L4Conversion & { readonly routes?: undefined });

export function piecesFor(route: GatewayApiRoute, p: RouteParent, result: Converted, suffix: string): Piece[] {
  const hostnames = 'hostnames' in route.spec ? route.spec.hostnames : [];
  if (p.parent.mesh) {
    const svc = p.parent.service;
    const host = `${svc.meta.name}.${svc.meta.namespace}.svc.${suffix}`;
    const port = p.ref.port;
    const key = `${route.meta.namespace}${port !== undefined ? `/${port}` : ''}/${host}`;
    if (result.routes) {
      const http = port !== undefined ? withPort(result.routes, port) : result.routes;
      return http.length ? [{ key, route, gateway: 'mesh', host, http }] : [];
    }
    const l4Key = `${route.meta.name}~${route.kind === 'TCPRoute' ? 'tcp' : 'tls'}~${route.meta.namespace}/${key}`;
    return l4Piece(route, l4Key, 'mesh', host, result.rules, port, [host]);
  }
  const listenerHost = p.parent.listener.hostname;
  const hosts = (hostnames.length ? hostnames : ['*']).filter(
    (h) => (listenerHost === undefined || hostsOverlap(listenerHost, h)) && allowedByIsolation(p, h),
  );
  if (result.routes) {
    if (!result.routes.length) return [];
    return hosts.map((host) => ({
      key: `${p.parent.mesh ? '' : p.parent.internalName}/${host}`,
      route,
      gateway: p.parent.mesh ? 'mesh' : p.parent.internalName,
      host,
      http: result.routes,
    }));
  }
  const internal = p.parent.internalName;
  if (route.kind === 'TCPRoute')
    return l4Piece(route, `${route.meta.name}~tcp~${internal}`, internal, '*', result.rules, undefined, []);
  // TLSRoute: SNI names are the route's hostnames met with the listener's.
  const sni = hosts.map((h) => (listenerHost && hostSubsetOf(listenerHost, h) ? listenerHost : h));
  return sni.flatMap((h) =>
    l4Piece(route, `${route.meta.name}~tls~${internal}/${h}`, internal, h, result.rules, undefined, [h]),
  );
}

function l4Piece(
  route: GatewayApiRoute,
  key: string,
  gateway: string,
  host: string,
  rules: L4Conversion['rules'],
  port: number | undefined,
  sniHosts: readonly string[],
): Piece[] {
  if (!rules.length) return [];
  const match = port !== undefined ? [{ port }] : undefined;
  if (route.kind === 'TCPRoute')
    return [{ key, route, gateway, host, tcp: rules.map((r) => ({ ...(match ? { match } : {}), route: r })) }];
  const sni = sniHosts.length ? sniHosts : [host];
  return [
    {
      key,
      route,
      gateway,
      host,
      tls: rules.map((r) => ({ match: [{ sniHosts: sni, ...(port !== undefined ? { port } : {}) }], route: r })),
    },
  ];
}

/** istiod's augmentPortMatch: a Service parentRef with a port narrows every route to that port. */
function withPort(routes: readonly IstioHttpRoute[], port: number): IstioHttpRoute[] {
  return routes.map((r) => ({
    ...r,
    match: r.match?.length ? r.match.map((m) => ({ ...m, port })) : [{ port }],
  }));
}

/**
 * Listener isolation (istiod's hostnameAllowedByIsolation): a route host that a more specific
 * listener on the same port and protocol also serves belongs to that listener only.
 */
function allowedByIsolation(p: RouteParent, routeHost: string): boolean {
  if (p.parent.mesh) return true;
  const ours = p.parent.listener.hostname ?? '';
  if (ours !== '' && !ours.startsWith('*')) return true;
  if (ours !== '' && !hostsOverlap(routeHost, ours)) return false;
  for (const other of p.banned) {
    if (ours.length > other.length) continue;
    if (other !== '' && hostSubsetOf(routeHost, other)) return false;
  }
  return true;
}
