/**
 * The groups of a visibility scope, built on first use: what every sidecar shared before scopes
 * existed keeps its ids (`outbound`, `endpoints`, `outbound-listeners`, `routes/<ns>`,
 * `grpc-clusters`, `grpc`), a restricted scope's live under `scope/<name>/`. Route configs differ
 * per client namespace (short-name domains), the rest is shared by every namespace of the scope.
 */
import { Diagnostics } from '../../model/diagnostics.js';
import { diagnosticId } from '../route/report-once.js';
import { listenerClientKey, type ListenerClient, type RouteSource } from '../route/source-labels.js';
import type { CompileContext } from '../context.js';
import { buildClusters, buildServiceClusters } from '../clusters.js';
import { buildEndpoints, buildServiceEndpoints } from '../endpoints.js';
import { buildOutboundListeners, buildProxylessListeners } from '../listeners.js';
import { buildOutboundRoutes, buildProxylessRoutes } from '../routes.js';
import { VIRTUAL_OUTBOUND } from '../names.js';
import type { ResourceTable } from '../types.js';
import type { Cluster } from '../../xds/proto.js';
import { buildEgressRoutes } from './egress-routes.js';
import { serviceResources } from './reuse.js';
import type { Scope } from './scopes.js';

type SharedKind = 'outbound' | 'endpoints' | 'outbound-listeners' | 'grpc-clusters' | 'grpc';

export interface ScopeGroups {
  /** The id of a scope's group of this kind, built now if it is not yet (not counted as used). */
  build(scope: Scope, kind: SharedKind): string;
  /** The same, for a class that receives the group. */
  shared(scope: Scope, kind: SharedKind): string;
  /**
   * The id of a scope's route configs as seen from `ns` (by a workload with `source`'s labels,
   * when they select some `sourceLabels`), built now if they are not yet.
   */
  routes(scope: Scope, ns: string, source?: RouteSource): string;
  /**
   * The id of a scope's outbound listeners for a class: the shared ones, or where `tcp`/`tls`
   * matches name its namespace or labels (`client`), ones built for it (an endpoint reader too).
   */
  listeners(scope: Scope, client: ListenerClient | undefined): string;
  /** Ids some class received. */
  readonly used: ReadonlySet<string>;
  /** The restricted scopes' views and the groups of theirs that read endpoints (the incremental compiler patches them). */
  readonly endpointReaders: readonly EndpointReadingGroups[];
}

export interface EndpointReadingGroups {
  readonly view: CompileContext;
  outbound?: string;
  endpoints?: string;
  /** Headless services' per-pod listeners are named by their endpoints' IPs. */
  'outbound-listeners'?: string;
}

export function scopeGroups(
  ctx: CompileContext,
  group: (id: string) => ResourceTable,
  has: (id: string) => boolean,
  jwks: ReadonlyMap<string, Cluster>,
  fullScope: Scope,
): ScopeGroups {
  const used = new Set<string>();
  const readers = new Map<string, EndpointReadingGroups>();
  const idOf = (scope: Scope, suffix: string) => (scope.full ? suffix : `scope/${scope.name}/${suffix}`);
  const fill = (scope: Scope, kind: SharedKind, t: ResourceTable): void => {
    const c = scope.ctx;
    if (!scope.full && (kind === 'outbound' || kind === 'grpc-clusters')) {
      const full = group(build(fullScope, kind)).clusters;
      const generator = kind === 'outbound' ? 'sidecar' : 'grpc';
      for (const [name, cluster] of serviceResources(full, ctx, c, (s) => buildServiceClusters(c, s, generator)))
        t.clusters.set(name, cluster);
      // Mesh-wide clusters (BlackHoleCluster, PassthroughCluster, …) and JWKS clusters are the full view's.
      if (kind === 'outbound')
        for (const [name, cluster] of full) if (!name.startsWith('outbound|')) t.clusters.set(name, cluster);
      if (kind === 'outbound')
        for (const [name, cluster] of jwks) if (!t.clusters.has(name)) t.clusters.set(name, cluster);
    } else if (!scope.full && kind === 'endpoints') {
      const full = group(build(fullScope, 'endpoints')).endpoints;
      for (const [name, cla] of serviceResources(full, ctx, c, (s) => buildServiceEndpoints(c, s)))
        t.endpoints.set(name, cla);
    } else if (!scope.full && kind === 'outbound-listeners') {
      // virtualOutbound reads only the outbound policy: the full view's when it is the same. (Port
      // listeners also hold the SNI and CIDR chains of the services on the port: built per view.)
      const full = group(build(fullScope, 'outbound-listeners')).listeners;
      const samePolicy =
        c.mesh.outboundTrafficPolicy === ctx.mesh.outboundTrafficPolicy &&
        c.egressProxyCluster === ctx.egressProxyCluster;
      for (const [name, l] of buildOutboundListeners(c)) {
        const shared = samePolicy && name === VIRTUAL_OUTBOUND ? full.get(name) : undefined;
        t.listeners.set(name, shared ?? l);
      }
    } else if (kind === 'outbound') {
      // The group is new (empty): the built tables become its own, not copied entry by entry.
      t.clusters = buildClusters(c, 'sidecar');
      for (const [name, cluster] of jwks) if (!t.clusters.has(name)) t.clusters.set(name, cluster);
    } else if (kind === 'endpoints') t.endpoints = buildEndpoints(c);
    else if (kind === 'outbound-listeners') t.listeners = buildOutboundListeners(c);
    else if (kind === 'grpc-clusters') t.clusters = buildClusters(c, 'grpc');
    else {
      t.listeners = buildProxylessListeners(c);
      t.routes = buildProxylessRoutes(c);
    }
  };
  function build(scope: Scope, kind: SharedKind): string {
    const id = idOf(scope, kind);
    if (has(id)) return id;
    fill(scope, kind, group(id));
    if (!scope.full && (kind === 'outbound' || kind === 'endpoints' || kind === 'outbound-listeners')) {
      const entry = readers.get(scope.name) ?? { view: scope.ctx };
      entry[kind] = id;
      readers.set(scope.name, entry);
    }
    return id;
  }
  return {
    used,
    get endpointReaders() {
      return [...readers.values()];
    },
    build,
    shared(scope, kind) {
      const id = build(scope, kind);
      used.add(id);
      return id;
    },
    listeners(scope, client) {
      if (!client) {
        const shared = build(scope, 'outbound-listeners');
        used.add(shared);
        return shared;
      }
      const id = idOf(scope, `outbound-listeners/${listenerClientKey(client)}`);
      if (!has(id)) {
        const base = scope.full ? ctx : scope.ctx;
        const view: CompileContext = {
          ...base,
          // What the shared listeners report is the compile's already.
          diags: onlyNew(ctx.diags),
          ...(client.source ? { routeSource: client.source } : {}),
          ...(client.namespace !== undefined ? { listenerNamespace: client.namespace } : {}),
          ...(client.telemetry?.length ? { listenerTelemetry: client.telemetry } : {}),
        };
        group(id).listeners = buildOutboundListeners(view);
        // Headless services' per-pod listeners follow the endpoints: the incremental compiler rebuilds it.
        readers.set(`${scope.name}#${id}`, { view: { ...view, diags: new Diagnostics() }, 'outbound-listeners': id });
      }
      used.add(id);
      return id;
    },
    routes(scope, ns, source) {
      const id = idOf(scope, source ? `routes/${ns}/${source.keys.join(',')}` : `routes/${ns}`);
      if (!has(id)) {
        // A restricted view reports route problems too, saying from where: its indexes stay quiet.
        const viewCtx = scope.full ? ctx : { ...scope.ctx, diags: seenFrom(ctx.diags, ns) };
        // Built for the labels: a context of its own (its per-compile tables too), reporting only
        // what the configs without the labels do not (those are built for the namespace's other workloads).
        const routeCtx = source ? { ...viewCtx, routeSource: source, diags: onlyNew(viewCtx.diags) } : viewCtx;
        const t = group(id);
        const egress = routeCtx.egressListeners;
        const configs = egress ? buildEgressRoutes(routeCtx, egress, ns) : buildOutboundRoutes(routeCtx, ns);
        for (const [name, r] of configs) t.routes.set(name, r);
      }
      used.add(id);
      return id;
    },
  };
}

/** Diagnostics that go on to `diags` unless it already holds the same one. */
function onlyNew(diags: Diagnostics): Diagnostics {
  const out = new Diagnostics();
  let known: Set<string> | undefined;
  out.add = (d) => {
    known ??= new Set(diags.all.map(diagnosticId));
    const id = diagnosticId(d);
    if (known.has(id)) return;
    known.add(id);
    diags.add(d);
  };
  return out;
}

/** Diagnostics of a restricted view's route configs: into the compile's, naming the client namespace. */
function seenFrom(diags: Diagnostics, ns: string): Diagnostics {
  const out = new Diagnostics();
  out.add = (d) =>
    diags.add({
      ...d,
      message: `${d.message} (as seen from namespace ${ns}, whose view exportTo, a Sidecar or the DestinationRule lookup order narrows)`,
    });
  return out;
}

/**
 * What a build in a restricted view of namespace `ns` reports (a gateway's): what the compile has
 * not reported already (the namespace's sidecars' route configs report the same), saying from where.
 */
export const restrictedViewDiagnostics = (diags: Diagnostics, ns: string): Diagnostics => seenFrom(onlyNew(diags), ns);
