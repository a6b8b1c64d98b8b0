/**
 * The VirtualService index: which VirtualService routes each service hostname, as seen by sidecars.
 *
 * Semantics (istiod's sidecar behaviour, pilot/pkg/networking/core/route + model/virtualservice.go):
 * - Only VirtualServices bound to the `mesh` gateway apply (no `gateways`, or `mesh` listed).
 * - Hosts are resolved relative to the VirtualService's namespace; a wildcard host applies to the
 *   services it matches. An exact host beats a wildcard; among wildcards the most specific wins.
 * - Several VirtualServices for one host are NOT merged for sidecars: istiod builds one virtual host
 *   per hostname and drops later duplicates, so the first in the sidecar's order wins. That order is
 *   SelectVirtualServices' for the sidecar's namespace (`sidecarOrder`): the VirtualServices exported
 *   to that namespace alone as their own (`.` or their namespace's name, also as the mesh default:
 *   istiod's privateByNamespaceAndGateway), then those of other namespaces naming it
 *   (exportedToNamespaceByGateway), then the public ones (`*`, publicByGateway); within each, the
 *   namespace's own Gateway API routes first, then oldest first (creationTimestamp, then name, then
 *   namespace: configCompareByCreationTime). The shared index (no client namespace, for the
 *   namespaces whose choice it is: scope/visibility.ts) takes the oldest first. A VirtualService that loses to one of
 *   its own tier somewhere is reported (`conflicting-virtual-service`), naming the namespaces that
 *   use it. The choice is made per route kind (http/tcp/tls), since a VirtualService without HTTP
 *   routes builds no virtual host in istiod.
 * - Gateway API mesh routes (`gatewaySemantics`, GAMMA) depend on the client's namespace, as in
 *   istiod: SelectVirtualServices takes those of the sidecar's own namespace first (the "consumer
 *   override"), and buildSidecarVirtualHostsForVirtualService builds HTTP virtual hosts from one only
 *   for a service of its namespace (a producer route) or for a sidecar of its namespace (a consumer
 *   route). tcp/tls routes are not filtered (istiod: "Do not filter namespace for now"). The index
 *   is built for one client namespace; without one (the shared index) consumer HTTP routes apply to
 *   no one, which is what every namespace holding none of them gets.
 * - `delegate` routes are replaced by the delegate VirtualService's routes merged under the parent
 *   route's matches (istiod's MergeHTTPRoutes); a delegate's destinations are resolved in its own
 *   namespace. Delegates are one level deep, as in istiod.
 */
import { type Diagnostics, objectAt } from '../model/diagnostics.js';
import type {
  Destination,
  HTTPMatchRequest,
  HTTPRoute,
  StringMatch,
  TCPRoute,
  TLSRoute,
  VirtualService,
} from '../model/istio.js';
import type { MeshConfig } from '../model/mesh-config.js';
import type { ServiceModel } from '../model/service-model.js';
import type { SourcedHttpRoute, SourcedTcpRoute, SourcedTlsRoute, VirtualServiceIndex } from './context.js';
import { hostMatches, resolveHost } from './names.js';

/** Where a (possibly merged) HTTP route was written: the object and the field path of its `http[i]`. */
export interface RouteOrigin {
  readonly source: VirtualService;
  readonly path: string;
}

const origins = new WeakMap<HTTPRoute, RouteOrigin>();

/** How hosts are qualified: the mesh's domain suffix, and the services whose two-label hosts stay as they are. */
export interface HostQualifier {
  readonly domainSuffix: string;
  readonly known: ReadonlyMap<string, unknown>;
}

/** The object and path that wrote this route (for delegates: the delegate VirtualService). */
export function routeOrigin(route: HTTPRoute): RouteOrigin | undefined {
  return origins.get(route);
}

const l4Indexes = new WeakMap<TCPRoute | TLSRoute, number>();

/** The index `i` of a resolved tcp/tls route in its VirtualService's `spec.tcp[i]`/`spec.tls[i]`. */
export function l4RouteIndex(route: TCPRoute | TLSRoute): number | undefined {
  return l4Indexes.get(route);
}

export const appliesToSidecars = (vs: VirtualService): boolean =>
  !vs.spec.gateways?.length || vs.spec.gateways.includes('mesh');

const key = (vs: VirtualService): string => `${vs.meta.namespace}/${vs.meta.name}`;
const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/** istiod's configCompareByCreationTime: oldest first (none: the oldest), then name, then namespace. */
const byAge = (a: VirtualService, b: VirtualService): number =>
  compareStrings(a.creationTimestamp ?? '', b.creationTimestamp ?? '') ||
  compareStrings(a.meta.name, b.meta.name) ||
  compareStrings(a.meta.namespace, b.meta.namespace);

const where = (vs: VirtualService) => objectAt(vs.kind, vs);

function resolveDestination(d: Destination, namespace: string, suffix: HostQualifier): Destination {
  return { ...d, host: resolveHost(d.host, namespace, suffix.domainSuffix, suffix.known).toLowerCase() };
}

/** A copy of the route with destination hosts fully qualified relative to `namespace`. */
function resolveHttpRoute(route: HTTPRoute, namespace: string, suffix: HostQualifier): HTTPRoute {
  return {
    ...route,
    ...(route.route
      ? { route: route.route.map((r) => ({ ...r, destination: resolveDestination(r.destination, namespace, suffix) })) }
      : {}),
    ...(route.mirrors
      ? {
          mirrors: route.mirrors.map((m) => ({
            ...m,
            destination: resolveDestination(m.destination, namespace, suffix),
          })),
        }
      : {}),
  };
}

function resolveL4<R extends TCPRoute | TLSRoute>(
  route: R,
  index: number,
  namespace: string,
  suffix: HostQualifier,
): R {
  const resolved = {
    ...route,
    route: route.route.map((r) => ({ ...r, destination: resolveDestination(r.destination, namespace, suffix) })),
  };
  l4Indexes.set(resolved, index);
  return resolved;
}

/** Whether a Gateway API mesh route's HTTP routes build a virtual host for `service` in a sidecar of `clientNamespace`. */
export const gatewayRouteApplies = (
  vs: VirtualService,
  serviceNamespace: string,
  clientNamespace: string | undefined,
): boolean =>
  vs.gatewaySemantics !== true || vs.meta.namespace === serviceNamespace || vs.meta.namespace === clientNamespace;

/**
 * Where a VirtualService stands in the order of a sidecar of `clientNamespace` (istiod's
 * initVirtualServices lists, SelectVirtualServices' loops): 0 exported to that namespace alone as its
 * own (`.`, its namespace's name, also from the mesh default), 2 exported to it by name from another
 * namespace, 4 public (`*` among others, or no exportTo and no mesh default); one less for the
 * namespace's own Gateway API routes (first within each list); undefined when not exported to it.
 */
export function sidecarTier(
  vs: VirtualService,
  clientNamespace: string,
  defaultExportTo: readonly string[] | undefined,
): number | undefined {
  const list = vs.spec.exportTo?.length ? vs.spec.exportTo : defaultExportTo?.length ? defaultExportTo : ['*'];
  const own = vs.meta.namespace === clientNamespace;
  const first = vs.gatewaySemantics === true && own ? 0 : 1;
  if (list.includes('*')) return 4 + first;
  if (!list.some((e) => e === clientNamespace || (e === '.' && own))) return undefined;
  return (own ? 0 : 2) + first;
}

/**
 * istiod's order for a sidecar of `clientNamespace` (sidecarTier, then oldest first); those not
 * exported to it last. Without a client namespace (the shared index): oldest first.
 */
export function sidecarOrder(
  vss: readonly VirtualService[],
  clientNamespace: string | undefined,
  defaultExportTo: readonly string[] | undefined,
): VirtualService[] {
  const sorted = [...vss].sort(byAge);
  if (clientNamespace === undefined) return sorted;
  const tier = new Map(sorted.map((vs) => [vs, sidecarTier(vs, clientNamespace, defaultExportTo) ?? 6]));
  return sorted.sort((a, b) => (tier.get(a) as number) - (tier.get(b) as number) || byAge(a, b));
}

/**
 * The VirtualServices sidecars of `clientNamespace` use per service hostname (undefined: the shared
 * index, for namespaces holding no Gateway API mesh route that changes the choice).
 */
export function indexVirtualServices(
  model: ServiceModel,
  mesh: MeshConfig,
  diags: Diagnostics,
  clientNamespace?: string,
): VirtualServiceIndex {
  const suffix: HostQualifier = { domainSuffix: mesh.domainSuffix, known: model.byHostname };
  const all = sidecarOrder(model.virtualServices, clientNamespace, mesh.defaultVirtualServiceExportTo);
  const byKey = new Map(all.map((vs) => [key(vs), vs]));

  interface Entry {
    vs: VirtualService;
    hosts: string[];
    http: SourcedHttpRoute[];
    tcp: SourcedTcpRoute[];
    tls: SourcedTlsRoute[];
  }
  const entries: Entry[] = [];
  for (const vs of all) {
    // A VirtualService without hosts can only be used as a delegate.
    if (!vs.spec.hosts.length || !appliesToSidecars(vs)) continue;
    const ns = vs.meta.namespace;
    const http = expandHttp(vs, byKey, suffix, diags).map((route) => ({ route, source: vs }));
    const tcp = (vs.spec.tcp ?? []).map((r, i) => ({ route: resolveL4(r, i, ns, suffix), source: vs }));
    const tls = (vs.spec.tls ?? []).map((r, i) => ({ route: resolveL4(r, i, ns, suffix), source: vs }));
    const hosts = [
      ...new Set(vs.spec.hosts.map((h) => resolveHost(h, ns, suffix.domainSuffix, suffix.known).toLowerCase())),
    ];
    entries.push({ vs, hosts, http, tcp, tls });
  }

  const exact = new Map<string, Entry[]>();
  const wildcards: { pattern: string; entry: Entry }[] = [];
  for (const e of entries) {
    for (const h of e.hosts) {
      if (h.startsWith('*')) wildcards.push({ pattern: h, entry: e });
      else {
        const list = exact.get(h) ?? [];
        if (!list.includes(e)) list.push(e);
        exact.set(h, list);
      }
    }
  }

  const http = new Map<string, readonly SourcedHttpRoute[]>();
  const tcp = new Map<string, readonly SourcedTcpRoute[]>();
  const tls = new Map<string, readonly SourcedTlsRoute[]>();
  const warned = new Set<string>();

  for (const service of model.services) {
    const h = service.hostname;
    let candidates = exact.get(h);
    if (!candidates?.length) {
      let best = -1;
      let found: Entry[] = [];
      for (const w of wildcards) {
        if (!hostMatches(w.pattern, h)) continue;
        if (w.pattern.length > best) {
          best = w.pattern.length;
          found = [w.entry];
        } else if (w.pattern.length === best && !found.includes(w.entry)) found.push(w.entry);
      }
      candidates = found;
    }
    if (!candidates.length) continue;
    const pick = <T>(kind: 'http' | 'tcp' | 'tls', out: Map<string, readonly T[]>, get: (e: Entry) => T[]): void => {
      const withRoutes = candidates.filter((e) => e[kind].length > 0);
      const applying = withRoutes.filter(
        (e) => kind !== 'http' || gatewayRouteApplies(e.vs, service.namespace, clientNamespace),
      );
      const winner = applying[0];
      if (!winner) return;
      out.set(h, get(winner));
      // Reported once, from the shared index (views report into a scratch list).
      if (clientNamespace === undefined && withRoutes.length > 1)
        reportConflicts(
          withRoutes.map((e) => e.vs),
          { hostname: h, namespace: service.namespace, http: kind === 'http' },
          mesh.defaultVirtualServiceExportTo,
          warned,
          diags,
        );
    };
    pick('http', http, (e) => e.http);
    pick('tcp', tcp, (e) => e.tcp);
    pick('tls', tls, (e) => e.tls);
  }

  return {
    ...(clientNamespace !== undefined ? { clientNamespace } : {}),
    httpRoutes: (hostname) => http.get(hostname),
    tcpRoutes: (hostname) => tcp.get(hostname),
    tlsRoutes: (hostname) => tls.get(hostname),
  };
}

/** A namespace no VirtualService names: stands for every namespace that sees only the public ones. */
const ELSEWHERE = '\u0000elsewhere';
const ORDER =
  "istiod's order: those exported to the sidecar's namespace alone, then those naming it, then public ones; its namespace's Gateway API routes first in each; then oldest (creationTimestamp, name, namespace)";

/**
 * `conflicting-virtual-service` for VirtualServices (all with routes of one kind for `host`) that
 * lose to another of their own tier in some namespace's order: for each namespace one of them is
 * exported to by name (or is a Gateway API route of), and for every other namespace, the first in
 * its order is used there, and one after it in the same tier is shadowed by age. One that loses only
 * to a namespace's own override (a private VirtualService, its own Gateway API route) is not reported.
 */
function reportConflicts(
  vss: readonly VirtualService[],
  host: { readonly hostname: string; readonly namespace: string; readonly http: boolean },
  defaultExportTo: readonly string[] | undefined,
  warned: Set<string>,
  diags: Diagnostics,
): void {
  const namespaces = new Set<string>();
  for (const vs of vss) {
    if (vs.gatewaySemantics === true) namespaces.add(vs.meta.namespace);
    const list = vs.spec.exportTo?.length ? vs.spec.exportTo : (defaultExportTo ?? []);
    if (list.includes('*')) continue;
    for (const e of list) namespaces.add(e === '.' ? vs.meta.namespace : e);
  }
  const users = new Map<VirtualService, string[]>();
  const shadowed = new Map<VirtualService, VirtualService>();
  for (const ns of [...[...namespaces].sort(), ELSEWHERE]) {
    const seen = vss.filter(
      (vs) =>
        sidecarTier(vs, ns, defaultExportTo) !== undefined &&
        (!host.http || gatewayRouteApplies(vs, host.namespace, ns)),
    );
    const [first, ...rest] = sidecarOrder(seen, ns, defaultExportTo);
    if (!first) continue;
    users.set(first, [...(users.get(first) ?? []), ns]);
    const tier = sidecarTier(first, ns, defaultExportTo);
    for (const vs of rest)
      if (sidecarTier(vs, ns, defaultExportTo) === tier && !shadowed.has(vs)) shadowed.set(vs, first);
  }
  const listed = `VirtualServices ${[...vss].sort(byAge).map(key).join(', ')} all route ${host.hostname}`;
  for (const [vs, first] of shadowed) {
    const id = `${host.hostname}|${key(vs)}`;
    if (warned.has(id)) continue;
    warned.add(id);
    const using = (users.get(vs) ?? []).map((ns) => (ns === ELSEWHERE ? 'the other namespaces' : ns));
    const what = vs.gatewaySemantics === true ? 'Gateway API route' : 'one';
    diags.warn({
      ...where(vs),
      code: 'conflicting-virtual-service',
      field: 'spec.hosts',
      message: using.length
        ? `${listed}; sidecars of ${using.join(', ')} use this ${what}, elsewhere ${key(first)} comes first (${ORDER})`
        : `${listed}; sidecars use ${key(first)} (${ORDER}), so this one is ignored for that host`,
    });
  }
}

/** The namespace/name index of a VirtualService list, built once per list (one per compile). */
const keyedCache = new WeakMap<readonly VirtualService[], ReadonlyMap<string, VirtualService>>();

/** A VirtualService's routes as a gateway uses them: delegates expanded, destination hosts resolved. */
export function resolvedRoutes(
  vs: VirtualService,
  all: readonly VirtualService[],
  suffix: HostQualifier,
  diags: Diagnostics,
): { http: SourcedHttpRoute[]; tcp: SourcedTcpRoute[]; tls: SourcedTlsRoute[] } {
  const ns = vs.meta.namespace;
  let byKey = keyedCache.get(all);
  if (!byKey) keyedCache.set(all, (byKey = new Map(all.map((v) => [key(v), v]))));
  return {
    http: expandHttp(vs, byKey, suffix, diags).map((route) => ({ route, source: vs })),
    tcp: (vs.spec.tcp ?? []).map((r, i) => ({ route: resolveL4(r, i, ns, suffix), source: vs })),
    tls: (vs.spec.tls ?? []).map((r, i) => ({ route: resolveL4(r, i, ns, suffix), source: vs })),
  };
}

/** The VirtualService's HTTP routes with delegates expanded and destination hosts resolved. */
function expandHttp(
  vs: VirtualService,
  byKey: ReadonlyMap<string, VirtualService>,
  suffix: HostQualifier,
  diags: Diagnostics,
): HTTPRoute[] {
  const out: HTTPRoute[] = [];
  (vs.spec.http ?? []).forEach((route, i) => {
    const path = `spec.http[${i}]`;
    if (!route.delegate) {
      const resolved = resolveHttpRoute(route, vs.meta.namespace, suffix);
      origins.set(resolved, { source: vs, path });
      out.push(resolved);
      return;
    }
    const ref = `${route.delegate.namespace ?? vs.meta.namespace}/${route.delegate.name}`;
    const delegate = byKey.get(ref);
    if (!delegate || delegate.spec.hosts.length > 0) {
      diags.warn({
        ...where(vs),
        code: 'unknown-delegate',
        field: `${path}.delegate`,
        message: delegate
          ? `delegate VirtualService ${ref} has hosts, so it cannot be a delegate; the route is skipped`
          : `delegate VirtualService ${ref} not found; the route is skipped`,
      });
      return;
    }
    (delegate.spec.http ?? []).forEach((child, j) => {
      const childPath = `spec.http[${j}]`;
      if (child.delegate) {
        diags.warn({
          ...where(delegate),
          code: 'unsupported-field',
          field: `${childPath}.delegate`,
          message: 'a delegate VirtualService cannot delegate again; the route is skipped',
        });
        return;
      }
      const merged = mergeDelegateRoute(route, resolveHttpRoute(child, delegate.meta.namespace, suffix));
      if (!merged) {
        diags.warn({
          ...where(delegate),
          code: 'conflicting-match',
          field: `${childPath}.match`,
          message: `its matches conflict with every match of the delegating route ${key(vs)} ${path}; the route is skipped`,
        });
        return;
      }
      origins.set(merged, { source: delegate, path: childPath });
      out.push(merged);
    });
  });
  return out;
}

// ---- Delegate merging (istiod: model.MergeHTTPRoutes) ----

function mergeDelegateRoute(root: HTTPRoute, child: HTTPRoute): HTTPRoute | undefined {
  const match = mergeMatches(root.match ?? [], child.match ?? []);
  if (match === undefined) return undefined;
  const name = !child.name ? root.name : root.name ? `${root.name}-${child.name}` : child.name;
  const merged: HTTPRoute = {
    ...child,
    ...(name !== undefined ? { name } : {}),
    ...(match.length ? { match } : {}),
  };
  const inherit = [
    'rewrite',
    'directResponse',
    'timeoutMs',
    'retries',
    'fault',
    'mirrors',
    'corsPolicy',
    'headers',
  ] as const;
  const out: Record<string, unknown> = { ...merged };
  for (const k of inherit) if (out[k] === undefined && root[k] !== undefined) out[k] = root[k];
  return out as HTTPRoute;
}

/** undefined = conflict (no child match fits any root match). */
function mergeMatches(
  root: readonly HTTPMatchRequest[],
  child: readonly HTTPMatchRequest[],
): HTTPMatchRequest[] | undefined {
  if (!root.length) return [...child];
  if (!child.length) return [...root];
  const out: HTTPMatchRequest[] = [];
  for (const c of child) {
    let found = false;
    for (const r of root) {
      if (matchesConflict(r, c)) continue;
      out.push(mergeMatch(r, c));
      found = true;
    }
    if (!found) return undefined;
  }
  return out.length ? out : undefined;
}

function mergeMatch(root: HTTPMatchRequest, child: HTTPMatchRequest): HTTPMatchRequest {
  const name = !child.name ? root.name : root.name ? `${root.name}-${child.name}` : child.name;
  const mergeMap = <V>(a?: Readonly<Record<string, V>>, b?: Readonly<Record<string, V>>) =>
    a || b ? { ...a, ...b } : undefined;
  const out: Record<string, unknown> = {
    ...child,
    name,
    uri: child.uri ?? root.uri,
    scheme: child.scheme ?? root.scheme,
    method: child.method ?? root.method,
    authority: child.authority ?? root.authority,
    headers: mergeMap(root.headers, child.headers),
    withoutHeaders: mergeMap(root.withoutHeaders, child.withoutHeaders),
    queryParams: mergeMap(root.queryParams, child.queryParams),
    sourceLabels: mergeMap(root.sourceLabels, child.sourceLabels),
    port: child.port || root.port,
    sourceNamespace: child.sourceNamespace || root.sourceNamespace,
    gateways: child.gateways?.length ? child.gateways : root.gateways,
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out as HTTPMatchRequest;
}

function matchesConflict(root: HTTPMatchRequest, leaf: HTTPMatchRequest): boolean {
  const pairs: [StringMatch | undefined, StringMatch | undefined][] = [
    [root.uri, leaf.uri],
    [root.scheme, leaf.scheme],
    [root.method, leaf.method],
    [root.authority, leaf.authority],
  ];
  for (const [k, v] of Object.entries(leaf.headers ?? {})) pairs.push([root.headers?.[k], v]);
  for (const [k, v] of Object.entries(leaf.withoutHeaders ?? {})) pairs.push([root.withoutHeaders?.[k], v]);
  for (const [k, v] of Object.entries(leaf.queryParams ?? {})) pairs.push([root.queryParams?.[k], v]);
  if (pairs.some(([r, l]) => stringMatchConflict(r, l))) return true;
  if (Boolean(root.ignoreUriCase) !== Boolean(leaf.ignoreUriCase)) return true;
  if (root.port && leaf.port && root.port !== leaf.port) return true;
  if (root.sourceNamespace && leaf.sourceNamespace !== root.sourceNamespace) return true;
  for (const [k, v] of Object.entries(leaf.sourceLabels ?? {}))
    if (root.sourceLabels?.[k] !== undefined && root.sourceLabels[k] !== v) return true;
  if (root.gateways?.length && leaf.gateways?.length) {
    if (root.gateways.length < leaf.gateways.length || leaf.gateways.some((g) => !root.gateways?.includes(g)))
      return true;
  }
  return false;
}

/** A leaf match must narrow its root's: same exact value, or a prefix/exact inside the root's prefix. */
function stringMatchConflict(root: StringMatch | undefined, leaf: StringMatch | undefined): boolean {
  if (!root || !leaf) return false;
  if (root.regex || leaf.regex) return true;
  if (root.exact) return leaf.prefix !== undefined || leaf.exact !== root.exact;
  if (root.prefix) {
    if (leaf.prefix) return !leaf.prefix.startsWith(root.prefix);
    if (leaf.exact) return !leaf.exact.startsWith(root.prefix);
  }
  return true;
}
