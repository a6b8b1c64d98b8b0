/**
 * RDS: the outbound RouteConfigurations of sidecars and proxyless gRPC clients.
 *
 * Sidecars: one RouteConfiguration per outbound HTTP port P, named "P", with a virtual host per
 * HTTP service exposing P (domains as seen from the client's namespace), sorted by name, then the
 * catch-all `allow_any` (ALLOW_ANY) or `block_all` (REGISTRY_ONLY) virtual host.
 *
 * Virtual hosts of services outside the client's namespace are the same objects in every
 * namespace's config (built once; see PortPlan).
 *
 * Proxyless gRPC: one RouteConfiguration per HTTP service port, named like its api_listener
 * (`host:port`), holding that service's virtual host only, with FQDN domains: shared by every
 * client namespace.
 *
 * A service routed by a VirtualService gets its translated routes; if none apply to the port it
 * gets istiod's `default` route, as istiod does.
 */
import { proxyHeaders } from './listener/proxy-headers.js';
import type { MeshService } from '../model/service-model.js';
import { isHttpProtocol } from '../model/service-model.js';
import type { Route, RouteConfiguration, VirtualHost } from '../xds/proto.js';
import type { CompileContext, SourcedHttpRoute } from './context.js';
import { PASSTHROUGH_CLUSTER, routeConfigName, virtualHostName } from './names.js';
import { NO_TIMEOUT } from './route/action.js';
import { defaultRoute } from './route/default-route.js';
import { DomainDeduper, serviceDomains } from './route/domains.js';
import { translateVirtualServiceRoutes } from './route/http-route.js';
import { proxylessPorts } from './route/proxyless-clusters.js';
import { exactList } from './exact.js';
import { perCompile } from './per-compile.js';
import { sortedByName } from './sorted.js';
import { sniffedOnWildcard, sniffedOutbound, sniffedRouteName } from './sniffing.js';

export const ALLOW_ANY_VHOST = 'allow_any';
export const BLOCK_ALL_VHOST = 'block_all';
/** istiod's limit on direct response bodies (1 MiB). */
const MAX_DIRECT_RESPONSE_BODY = 1024 * 1024;

/** Services that get virtual hosts: ExternalName services are aliases, which istiod skips here. */
const routable = (s: MeshService): boolean => s.externalName === undefined;

/** A route slot's routes for sidecars and for proxyless clients. */
interface RouteSlot {
  sidecar?: Route[];
  proxyless?: Route[];
}

/** One service port's routes: for every client namespace, or by client namespace (sourceNamespace matches). */
interface PortRoutes extends RouteSlot {
  byNamespace?: Map<string, RouteSlot>;
  /** The default route, the same for sidecars and proxyless clients: one array for both. */
  fallback?: Route[];
}

/** A service host's VirtualService routes and what was built of them, by port. */
interface HostRoutes {
  readonly sourced: readonly SourcedHttpRoute[] | undefined;
  /** Whether its routes depend on the client namespace (a match names a sourceNamespace). */
  readonly perNamespace: boolean;
  readonly ports: Map<number, PortRoutes>;
}

/**
 * Routes do not depend on the client namespace unless a match names a sourceNamespace, so they are
 * built once per compile and shared between the namespaces' configs (10k services × namespaces).
 * Found by host and port (no key string per lookup: a lookup per virtual host of every config).
 */
const routesByHost = perCompile(() => new Map<string, HostRoutes>());

function hostRoutes(ctx: CompileContext, hostname: string): HostRoutes {
  const byHost = routesByHost(ctx);
  let host = byHost.get(hostname);
  if (!host) {
    const sourced = ctx.virtualServices.httpRoutes(hostname);
    const perNamespace = sourced?.some((s) => s.route.match?.some((m) => m.sourceNamespace)) ?? false;
    byHost.set(hostname, (host = { sourced, perNamespace, ports: new Map() }));
  }
  return host;
}

/** Whether a service's routes depend on the client namespace (a match names a sourceNamespace). */
const routesPerNamespace = (ctx: CompileContext, service: MeshService): boolean =>
  hostRoutes(ctx, service.hostname).perNamespace;

function serviceRoutes(
  ctx: CompileContext,
  service: MeshService,
  port: number,
  clientNamespace: string,
  proxyless: boolean,
): Route[] {
  const host = hostRoutes(ctx, service.hostname);
  let byPort = host.ports.get(port);
  if (!byPort) host.ports.set(port, (byPort = {}));
  let slot: RouteSlot = byPort;
  if (host.perNamespace) {
    byPort.byNamespace ??= new Map();
    let own = byPort.byNamespace.get(clientNamespace);
    if (!own) byPort.byNamespace.set(clientNamespace, (own = {}));
    slot = own;
  }
  const hit = proxyless ? slot.proxyless : slot.sidecar;
  if (hit) return hit;
  let routes: Route[] = [];
  if (host.sourced?.length)
    routes = translateVirtualServiceRoutes(ctx, host.sourced, { listenerPort: port, clientNamespace, proxyless });
  if (!routes.length)
    routes = byPort.fallback ??= [
      defaultRoute(ctx, service.hostname, port, ctx.destinationRules.lookup(service.hostname)),
    ];
  if (proxyless) slot.proxyless = routes;
  else slot.sidecar = routes;
  return routes;
}

/** Virtual hosts' `include_request_attempt_count` (ProxyConfig `proxyHeaders.attemptCount`). */
const countsAttempts = (ctx: CompileContext): boolean => proxyHeaders(ctx.mesh, 'outbound').includeRequestAttemptCount;

/** The catch-all virtual host: one object per compile, shared by every route config (and encoded once). */
const catchAllVirtualHost = perCompile((ctx): VirtualHost => {
  if (ctx.mesh.outboundTrafficPolicy === 'REGISTRY_ONLY') {
    return {
      name: BLOCK_ALL_VHOST,
      domains: ['*'],
      routes: [{ name: BLOCK_ALL_VHOST, match: { prefix: '/' }, direct_response: { status: 502 } }],
      include_request_attempt_count: countsAttempts(ctx),
    };
  }
  return {
    name: ALLOW_ANY_VHOST,
    domains: ['*'],
    routes: [
      {
        name: ALLOW_ANY_VHOST,
        match: { prefix: '/' },
        route: {
          cluster: ctx.egressProxyCluster ?? PASSTHROUGH_CLUSTER,
          timeout: NO_TIMEOUT,
          max_grpc_timeout: NO_TIMEOUT,
          ...(proxyHeaders(ctx.mesh, 'outbound').xForwardedHost ? { append_x_forwarded_host: true } : {}),
        },
      },
    ],
    include_request_attempt_count: countsAttempts(ctx),
  };
});

/**
 * Service ports with virtual hosts, grouped by port number: HTTP ones and those that name no protocol
 * (istiod's IsHTTPOrSniffed: a port's route config routes sniffed HTTP to them too); services stay
 * in hostname order. `http`: the ports an HTTP service, or one sniffed on the wildcard address, uses
 * (they get a `0.0.0.0_<port>` HTTP chain).
 */
function routedServicesByPort(ctx: CompileContext): { byPort: Map<number, MeshService[]>; http: Set<number> } {
  const byPort = new Map<number, MeshService[]>();
  const http = new Set<number>();
  for (const s of ctx.model.services) {
    if (!routable(s)) continue;
    for (const p of s.ports) {
      if (isHttpProtocol(p.protocol) || sniffedOnWildcard(ctx.model, s, p)) http.add(p.port);
      else if (!p.protocolDefaulted) continue;
      const list = byPort.get(p.port) ?? [];
      if (list[list.length - 1] !== s) list.push(s);
      byPort.set(p.port, list);
    }
  }
  return { byPort, http };
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * One sidecar route config port, planned once per compile. A service's virtual host is the same
 * object in every client namespace's config, except where the namespace changes it: services of
 * the client's own namespace (their short name is a domain there) and services whose routes match
 * on sourceNamespace. Those are built per namespace; everything else is shared, so the snapshot
 * encoder can encode each shared virtual host once (src/xds/route-config-encoder.ts).
 */
interface PortPlan {
  readonly port: number;
  /**
   * Whether `0.0.0.0_<port>` has an HTTP chain asking for `"<port>"` (an HTTP service, or one sniffed
   * on the wildcard, uses the port); else only services sniffed on their own addresses do.
   */
  readonly http: boolean;
  /** In virtual host name order. */
  readonly services: readonly MeshService[];
  /** Aligned with `services`: their virtual host names. */
  readonly names: readonly string[];
  /** Aligned with `services`: the shared virtual host, or null where it is built per namespace. */
  readonly shared: readonly (VirtualHost | null)[];
  /** Aligned with `services`: domains an earlier virtual host claimed (lowercase), usually none. */
  readonly claimed: readonly (ReadonlySet<string> | undefined)[];
  /** Client namespace → indexes of `services` whose virtual host is built for that namespace. */
  readonly perNamespace: ReadonlyMap<string, readonly number[]>;
  /** Indexes whose routes depend on the client namespace (built for every namespace). */
  readonly everyNamespace: readonly number[];
  /** Indexes of services sniffed on their own addresses on this port (their `<host>:<port>` route config: ./sniffing.ts). */
  readonly sniffed: readonly number[];
  /** Indexes of services whose port names no protocol (a Sidecar bind sniffs them all). */
  readonly defaulted: readonly number[];
  /** Sniffed services' virtual hosts shared by every client namespace, made when first asked for. */
  readonly sniffedShared: Map<number, VirtualHost>;
}

/** A namespace no Kubernetes object can have: domains as seen from another namespace. */
const NO_NAMESPACE = '';

/** Per HTTP port, in port order: its services' virtual hosts as every namespace's config shares them. */
const portPlans = perCompile((ctx): PortPlan[] => {
  const plans: PortPlan[] = [];
  const { byPort, http } = routedServicesByPort(ctx);
  // A service's domains as seen from another namespace, once: its virtual hosts on every port share the list.
  const domainsOf = new Map<MeshService, readonly string[]>();
  const sharedDomains = (s: MeshService): readonly string[] => {
    let all = domainsOf.get(s);
    if (!all) domainsOf.set(s, (all = exactList(serviceDomains(s, NO_NAMESPACE, ctx.mesh.domainSuffix, undefined))));
    return all;
  };
  for (const port of [...byPort.keys()].sort((a, b) => a - b)) {
    // Each name built once, not per comparison.
    const named = (byPort.get(port) as MeshService[]).map((s) => ({ s, name: virtualHostName(s.hostname, port) }));
    named.sort((a, b) => compareStrings(a.name, b.name));
    const services = named.map((n) => n.s);
    const names = named.map((n) => n.name);
    // Domains that collide across services (the same cluster IP twice) go to the first service in
    // name order, as they did when each namespace deduplicated its own list: only namespace-free
    // forms can collide (a short name has no dot, every other form has one, or is a bracketed IPv6).
    const dedupe = new DomainDeduper();
    const shared: (VirtualHost | null)[] = [];
    const claimed: (ReadonlySet<string> | undefined)[] = [];
    const perNamespace = new Map<string, number[]>();
    const everyNamespace: number[] = [];
    const sniffed: number[] = [];
    const defaulted: number[] = [];
    for (const [i, s] of services.entries()) {
      const own = s.ports.find((p) => p.port === port);
      if (own?.protocolDefaulted) defaulted.push(i);
      if (own && sniffedOutbound(ctx.model, s, own)) sniffed.push(i);
      const all = sharedDomains(s);
      const domains = dedupe.keepShared(all);
      claimed.push(
        domains.length === all.length
          ? undefined
          : new Set(all.map((d) => d.toLowerCase()).filter((d) => !domains.some((k) => k.toLowerCase() === d))),
      );
      const list = perNamespace.get(s.namespace) ?? [];
      list.push(i);
      perNamespace.set(s.namespace, list);
      if (routesPerNamespace(ctx, s)) {
        everyNamespace.push(i);
        shared.push(null);
      } else {
        shared.push(
          domains.length
            ? {
                name: names[i] as string,
                // Not changed after (the encoder and the check only read it).
                domains: domains as string[],
                routes: serviceRoutes(ctx, s, port, NO_NAMESPACE, false),
                include_request_attempt_count: countsAttempts(ctx),
              }
            : null,
        );
      }
    }
    plans.push({
      port,
      http: http.has(port),
      services,
      names,
      shared,
      claimed,
      perNamespace,
      everyNamespace,
      sniffed,
      defaulted,
      sniffedShared: new Map(),
    });
  }
  return plans;
});

/** Per compile, service and client namespace: a service's domains (deduplicated), shared by its virtual hosts on every port. */
const domainsByService = perCompile(() => new Map<MeshService, Map<string, readonly string[]>>());

function domainsFrom(ctx: CompileContext, s: MeshService, clientNamespace: string): readonly string[] {
  const byService = domainsByService(ctx);
  let byNamespace = byService.get(s);
  if (!byNamespace) byService.set(s, (byNamespace = new Map()));
  let domains = byNamespace.get(clientNamespace);
  if (!domains) {
    const all = serviceDomains(s, clientNamespace, ctx.mesh.domainSuffix, undefined);
    byNamespace.set(clientNamespace, (domains = new DomainDeduper().keep(all)));
  }
  return domains;
}

/** The virtual host of `service` as a client in `clientNamespace` sees it, or undefined when it has no domain left. */
function namespaceVirtualHost(
  ctx: CompileContext,
  plan: PortPlan,
  i: number,
  clientNamespace: string,
): VirtualHost | undefined {
  const s = plan.services[i] as MeshService;
  const claimed = plan.claimed[i];
  let domains: readonly string[];
  if (claimed) {
    const all = serviceDomains(s, clientNamespace, ctx.mesh.domainSuffix, undefined);
    domains = new DomainDeduper().keep(all.filter((d) => !claimed.has(d.toLowerCase())));
  } else domains = domainsFrom(ctx, s, clientNamespace);
  if (!domains.length) return undefined;
  return {
    name: plan.names[i] as string,
    // Not changed after (the encoder and the check only read it).
    domains: domains as string[],
    routes: serviceRoutes(ctx, s, plan.port, clientNamespace, false),
    include_request_attempt_count: countsAttempts(ctx),
  };
}

/** A namespace's sidecar route configs: one per HTTP port (`"<port>"`), then the sniffed ports' (`<host>:<port>`). */
export function buildOutboundRoutes(ctx: CompileContext, clientNamespace: string): Map<string, RouteConfiguration> {
  const out = portRouteConfigs(ctx, clientNamespace, false);
  for (const [name, config] of sniffedRouteConfigs(ctx, clientNamespace)) out.set(name, config);
  return out;
}

/**
 * Route config `"<port>"` per port, in port order: of the ports an HTTP service uses, or with
 * `everyPort` of every port with a virtual host (a Sidecar's HTTP egress port, a unix socket's).
 */
export function portRouteConfigs(
  ctx: CompileContext,
  clientNamespace: string,
  everyPort: boolean,
): Map<string, RouteConfiguration> {
  const out = new Map<string, RouteConfiguration>();
  for (const plan of portPlans(ctx)) {
    if (!plan.http && !everyPort) continue;
    // One slot more for the catch-all: a push would grow the list (thousands of hosts) by half (./exact.ts).
    const catchAll = catchAllVirtualHost(ctx);
    const slots: (VirtualHost | null | undefined)[] = plan.shared.concat(catchAll);
    let holes = false;
    const own = plan.perNamespace.get(clientNamespace) ?? [];
    for (const indexes of [own, plan.everyNamespace]) {
      for (const i of indexes) {
        const vh = namespaceVirtualHost(ctx, plan, i, clientNamespace);
        slots[i] = vh;
        if (!vh) holes = true;
      }
    }
    if (!holes) holes = slots.includes(null);
    const vhosts = (holes ? exactList(slots.filter((v): v is VirtualHost => !!v)) : slots) as VirtualHost[];
    const name = routeConfigName(plan.port);
    out.set(name, sidecarRouteConfig(name, vhosts));
  }
  return out;
}

/** Every domain: a sniffed port's route config holds its one service (istiod's getVirtualHostsForSniffedServicePort). */
const ANY_DOMAIN: string[] = Object.freeze(['*']) as unknown as string[];

/**
 * The `<host>:<port>` route configs of the service ports sniffed on their own addresses
 * (./sniffing.ts), or with `everyDefaulted` of every port naming no protocol (a Sidecar bind's), by
 * name: the service's virtual host with the domain `*` and no catch-all, as istiod builds them.
 */
export function sniffedRouteConfigs(
  ctx: CompileContext,
  clientNamespace: string,
  everyDefaulted = false,
): Map<string, RouteConfiguration> {
  const configs: [string, RouteConfiguration][] = [];
  for (const plan of portPlans(ctx)) {
    for (const i of everyDefaulted ? plan.defaulted : plan.sniffed) {
      const s = plan.services[i] as MeshService;
      const name = sniffedRouteName(s, plan.port);
      configs.push([name, sidecarRouteConfig(name, [sniffedVirtualHost(ctx, plan, i, clientNamespace)])]);
    }
  }
  configs.sort((a, b) => compareStrings(a[0], b[0]));
  return new Map(configs);
}

function sniffedVirtualHost(ctx: CompileContext, plan: PortPlan, i: number, clientNamespace: string): VirtualHost {
  const s = plan.services[i] as MeshService;
  const perNamespace = routesPerNamespace(ctx, s);
  const shared = perNamespace ? undefined : plan.sniffedShared.get(i);
  if (shared) return shared;
  const vh: VirtualHost = {
    name: plan.names[i] as string,
    domains: ANY_DOMAIN,
    routes: serviceRoutes(ctx, s, plan.port, perNamespace ? clientNamespace : NO_NAMESPACE, false),
    include_request_attempt_count: countsAttempts(ctx),
  };
  if (!perNamespace) plan.sniffedShared.set(i, vh);
  return vh;
}

const NO_VALIDATION = Object.freeze({ value: false });
const MAX_BODY = Object.freeze({ value: MAX_DIRECT_RESPONSE_BODY });

const sidecarRouteConfig = (name: string, vhosts: VirtualHost[]): RouteConfiguration => ({
  name,
  virtual_hosts: vhosts,
  validate_clusters: NO_VALIDATION,
  max_direct_response_body_size_bytes: MAX_BODY,
  ignore_port_in_host_matching: true,
});

/** The route config of a port a listener asks for but no HTTP service of the view uses: the catch-all virtual host only. */
export const catchAllRouteConfig = (ctx: CompileContext, port: number): RouteConfiguration =>
  sidecarRouteConfig(routeConfigName(port), [catchAllVirtualHost(ctx)]);

/**
 * The route config of a Sidecar unix socket or HTTP_PROXY listener (istiod's
 * BuildSidecarOutboundVirtualHosts with listener port 0, mergeAllVirtualHosts): the virtual hosts
 * of every HTTP port, by name, then the catch-all. Listener port 0 keeps the port in the domains
 * (generateVirtualHostDomains: each domain followed by `domain:port`); port 80's virtual hosts keep
 * both forms, the others only `domain:port` (a bare host means port 80 to a client).
 */
export function allPortsRouteConfig(ctx: CompileContext, name: string, clientNamespace: string): RouteConfiguration {
  const catchAll = catchAllVirtualHost(ctx);
  const vhosts: VirtualHost[] = [];
  for (const [portName, config] of portRouteConfigs(ctx, clientNamespace, true)) {
    for (const vh of config.virtual_hosts ?? []) {
      if (vh === catchAll) continue;
      const domains = (vh.domains ?? []).flatMap((d) =>
        portName === '80' ? [d, `${d}:${portName}`] : [`${d}:${portName}`],
      );
      vhosts.push({ ...vh, domains });
    }
  }
  vhosts.sort((a, b) => compareStrings(a.name ?? '', b.name ?? ''));
  return sidecarRouteConfig(name, [...vhosts, catchAll]);
}

/**
 * Proxyless gRPC route configs, one per HTTP service port, named like the api_listener
 * (`<fqdn>:<port>`). Clients dial `xds:///<fqdn>:<port>`, so the only domains are the FQDN forms
 * `<fqdn>` and `<fqdn>:<port>` (as istiod's grpcgen): the config does not depend on the client
 * namespace and is shared by every proxyless client. Services whose routes match on
 * sourceNamespace are left out here: `buildProxylessNamespaceRoutes` builds them per namespace.
 */
export function buildProxylessRoutes(ctx: CompileContext): Map<string, RouteConfiguration> {
  return proxylessRoutes(ctx, undefined);
}

/** The proxyless route configs that depend on the client namespace (sourceNamespace matches); usually none. */
export function buildProxylessNamespaceRoutes(
  ctx: CompileContext,
  clientNamespace: string,
): Map<string, RouteConfiguration> {
  return proxylessRoutes(ctx, clientNamespace);
}

/** Routable services whose routes depend on the client namespace, in model order (usually none); once per compile. */
const servicesRoutedPerNamespace = perCompile((ctx): readonly MeshService[] =>
  ctx.model.services.filter((s) => routable(s) && routesPerNamespace(ctx, s)),
);

function proxylessRoutes(ctx: CompileContext, clientNamespace: string | undefined): Map<string, RouteConfiguration> {
  const out = new Map<string, RouteConfiguration>();
  // Per namespace only the few services routed per namespace: a pass over every service per
  // namespace would be services × namespaces.
  const services = clientNamespace === undefined ? ctx.model.services : servicesRoutedPerNamespace(ctx);
  for (const s of services) {
    if (!routable(s)) continue;
    if (routesPerNamespace(ctx, s) !== (clientNamespace !== undefined)) continue;
    for (const p of proxylessPorts(ctx, s)) {
      const name = p.name;
      if (out.has(name)) continue;
      const vhost: VirtualHost = {
        // virtualHostName gives the listener's name (`host:port`): the same string, not a copy.
        name,
        domains: [s.hostname, name],
        routes: serviceRoutes(ctx, s, p.port, clientNamespace ?? NO_NAMESPACE, true),
        include_request_attempt_count: true,
      };
      out.set(name, { name, virtual_hosts: [vhost] });
    }
  }
  return sortedByName(out);
}
