/**
 * ROUTE_CONFIGURATION, VIRTUAL_HOST and HTTP_ROUTE patches, ported from istiod's
 * pilot/pkg/networking/core/envoyfilter/rc_patch.go (ApplyRouteConfigurationPatches). Copy on
 * write: a route config, virtual host or route no patch changes is returned as it came.
 */
import type { envoy, Route, RouteConfiguration, VirtualHost } from '../../xds/proto.js';
import type { PatchContext, ResolvedPatch } from './types.js';
import {
  atoi,
  insertAfter,
  insertBefore,
  isMergeOperation,
  mergePatchValue,
  parseSubsetKey,
  patchesFor,
} from './util.js';

const RC_TYPE = 'envoy.config.route.v3.RouteConfiguration';
const VH_TYPE = 'envoy.config.route.v3.VirtualHost';
const ROUTE_TYPE = 'envoy.config.route.v3.Route';

type Vh = envoy.config.route.v3.VirtualHost.$Properties;

/** istiod's GatewayPortMap: a gateway RDS name's port (the target port) → the Gateway server ports that use it. */
export type GatewayPortMap = ReadonlyMap<number, readonly number[]>;

/** The route-side patches that apply in one context, by applyTo, in istiod's order. */
export interface RoutePatches {
  readonly ctx: PatchContext;
  readonly routeConfiguration: readonly ResolvedPatch[];
  readonly virtualHost: readonly ResolvedPatch[];
  readonly httpRoute: readonly ResolvedPatch[];
  readonly portMap: GatewayPortMap;
}

const NO_PORTS: GatewayPortMap = new Map();

/** The route-side patches of `patches` that apply in `ctx`; null when there are none. */
export function routePatches(
  ctx: PatchContext,
  patches: readonly ResolvedPatch[],
  portMap: GatewayPortMap = NO_PORTS,
): RoutePatches | null {
  const out: RoutePatches = {
    ctx,
    routeConfiguration: patchesFor(ctx, patches, 'ROUTE_CONFIGURATION'),
    virtualHost: patchesFor(ctx, patches, 'VIRTUAL_HOST'),
    httpRoute: patchesFor(ctx, patches, 'HTTP_ROUTE'),
    portMap,
  };
  return out.routeConfiguration.length + out.virtualHost.length + out.httpRoute.length > 0 ? out : null;
}

/** istiod's ApplyRouteConfigurationPatches for one route configuration. */
export function patchRouteConfiguration(P: RoutePatches, rc: RouteConfiguration): RouteConfiguration {
  let out = rc;
  // Only merges apply to a route configuration itself.
  for (const rp of P.routeConfiguration)
    if (isMergeOperation(rp.operation) && routeConfigurationMatch(P, out, rp)) out = mergePatchValue(RC_TYPE, rp, out);
  return patchVirtualHosts(P, out);
}

function patchVirtualHosts(P: RoutePatches, rc: RouteConfiguration): RouteConfiguration {
  const before = (rc.virtual_hosts ?? []) as Vh[];
  let vhosts: Vh[] = before;
  let changed = false;
  const removed = new Set<string>();
  // First the removes, merges and replaces.
  before.forEach((vh, i) => {
    const r = patchVirtualHost(P, rc, vh);
    if (r.vh !== vh) {
      if (!changed) vhosts = [...before];
      changed = true;
      vhosts[i] = r.vh;
    }
    if (r.removed) removed.add(r.vh.name ?? '');
  });
  // Then the adds.
  for (const rp of P.virtualHost) {
    if (rp.operation !== 'ADD' || !routeConfigurationMatch(P, rc, rp)) continue;
    vhosts = [...vhosts, (rp.value ?? {}) as Vh];
    changed = true;
  }
  // By name, as istiod: a virtual host added with a removed one's name goes too.
  if (removed.size > 0) {
    vhosts = vhosts.filter((vh) => !removed.has(vh.name ?? ''));
    changed = true;
  }
  return changed ? { ...rc, virtual_hosts: vhosts } : rc;
}

function patchVirtualHost(P: RoutePatches, rc: RouteConfiguration, vhost: Vh): { vh: Vh; removed: boolean } {
  let vh = vhost;
  for (const rp of P.virtualHost) {
    if (!routeConfigurationMatch(P, rc, rp) || !virtualHostMatch(vh, rp)) continue;
    if (rp.operation === 'REMOVE') return { vh, removed: true };
    if (isMergeOperation(rp.operation)) vh = mergePatchValue(VH_TYPE, rp, vh);
    else if (rp.operation === 'REPLACE') vh = (rp.value ?? {}) as Vh;
  }
  return { vh: patchHttpRoutes(P, rc, vh), removed: false };
}

const hasRouteMatch = (rp: ResolvedPatch): boolean => rp.routeConfiguration?.vhost?.route !== undefined;

function patchHttpRoutes(P: RoutePatches, rc: RouteConfiguration, vh: Vh): Vh {
  const before = (vh.routes ?? []) as Route[];
  // A removed route is null until the end (istiod nils it in place).
  let routes: (Route | null)[] = before;
  let changed = false;
  let removed = false;
  before.forEach((route, i) => {
    const r = patchHttpRoute(P, rc, vh, route);
    if (r === route) return;
    if (!changed) routes = [...before];
    changed = true;
    routes[i] = r;
    if (r === null) removed = true;
  });
  const matches = (rp: ResolvedPatch) => (r: Route | null) => routeMatch(r, rp);
  for (const rp of P.httpRoute) {
    if (!routeConfigurationMatch(P, rc, rp) || !virtualHostMatch(vh, rp)) continue;
    const value = (rp.value ?? {}) as Route;
    let next: (Route | null)[] | null = null;
    switch (rp.operation) {
      case 'ADD':
        next = [...routes, value];
        break;
      case 'INSERT_AFTER':
        // Without a route match: the same as ADD.
        next = hasRouteMatch(rp) ? insertAfter(routes, matches(rp), value) : [...routes, value];
        break;
      case 'INSERT_BEFORE':
        // Without a route match: first.
        next = hasRouteMatch(rp) ? insertBefore(routes, matches(rp), value) : [value, ...routes];
        break;
      case 'INSERT_FIRST':
        // First, but with a route match only when some route matches.
        next = !hasRouteMatch(rp) || routes.some(matches(rp)) ? [value, ...routes] : null;
        break;
      default:
        break;
    }
    if (next) {
      routes = next;
      changed = true;
    }
  }
  if (!changed) return vh;
  return { ...vh, routes: removed ? (routes.filter((r) => r !== null) as Route[]) : (routes as Route[]) };
}

/** One route's removes and merges: null when removed. */
function patchHttpRoute(P: RoutePatches, rc: RouteConfiguration, vh: Vh, route: Route): Route | null {
  let r = route;
  for (const rp of P.httpRoute) {
    if (!routeConfigurationMatch(P, rc, rp) || !virtualHostMatch(vh, rp) || !routeMatch(r, rp)) continue;
    if (rp.operation === 'REMOVE') return null;
    if (isMergeOperation(rp.operation)) r = mergePatchValue(ROUTE_TYPE, rp, r);
  }
  return r;
}

/** istiod's routeConfigurationMatch. */
export function routeConfigurationMatch(P: RoutePatches, rc: RouteConfiguration, rp: ResolvedPatch): boolean {
  const m = rp.routeConfiguration;
  if (!m) return true;
  const name = rc.name ?? '';
  // Sidecars: the route config's name and port; gateways: also the server's port name and gateway.
  if (m.name && m.name !== name) return false;
  if (P.ctx !== 'GATEWAY') return !m.portNumber || m.portNumber === listenerPortFromName(name);
  const gw = parseGatewayRdsRouteName(name);
  if (m.portName && m.portName !== gw.portName) return false;
  if (m.gateway && m.gateway !== gw.gateway) return false;
  if (m.portNumber && !anyPortMatches(P.portMap, gw.port, m.portNumber)) return false;
  return true;
}

/** istiod's getListenerPortFromName: `inbound|<port>||…` or a bare port number (`9080`); else 0. */
export function listenerPortFromName(name: string): number {
  return name.startsWith('inbound') ? parseSubsetKey(name).port : atoi(name);
}

function anyPortMatches(m: GatewayPortMap, port: number, matchPort: number): boolean {
  const servicePorts = m.get(port);
  // When the port is a target port of Gateway server ports, those are matched; else the port itself.
  return servicePorts ? servicePorts.includes(matchPort) : port === matchPort;
}

/** istiod's model.ParseGatewayRDSRouteName: `http.<port>` or `https.<port>.<portName>.<gw>.<ns>`. */
export function parseGatewayRdsRouteName(name: string): { port: number; portName: string; gateway: string } {
  let port = 0;
  let portName = '';
  let gateway = '';
  if (name.startsWith('http.')) return { port: atoi(name.slice('http.'.length)), portName, gateway };
  if (name.startsWith('https.') && name.split('.').length - 1 === 4) {
    const [p, n, gw, ns] = name.slice('https.'.length).split('.') as [string, string, string, string];
    port = atoi(p);
    portName = n;
    gateway = `${ns}/${gw}`;
  }
  return { port, portName, gateway };
}

/** istiod's virtualHostMatch. */
export function virtualHostMatch(vh: VirtualHost | null | undefined, rp: ResolvedPatch): boolean {
  const match = rp.routeConfiguration?.vhost;
  if (!match) return true;
  if (!vh) return false;
  return (
    (!match.name || match.name === (vh.name ?? '')) &&
    (!match.domainName || (vh.domains ?? []).includes(match.domainName))
  );
}

/** istiod's routeMatch. */
export function routeMatch(route: Route | null | undefined, rp: ResolvedPatch): boolean {
  const match = rp.routeConfiguration?.vhost?.route;
  if (!match) return true;
  if (!route) return false;
  if (match.name && match.name !== (route.name ?? '')) return false;
  if (match.action && match.action !== 'ANY') {
    if (route.route != null) return match.action === 'ROUTE';
    if (route.redirect != null) return match.action === 'REDIRECT';
    if (route.direct_response != null) return match.action === 'DIRECT_RESPONSE';
  }
  return true;
}
