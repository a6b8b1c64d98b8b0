/**
 * The EnvoyFilter patch engine (shared design, part 3): applies the patches of one proxy, in
 * istiod's order, to the resources of one patch context, as istiod's
 * pilot/pkg/networking/core/envoyfilter does. Pure: never mutates its inputs (frozen, shared),
 * returns the very same object for a resource no patch touched.
 *
 * `proxy` matches are the caller's: every patch given is taken to select the proxy.
 */
import type { Cluster, Listener, RouteConfiguration } from '../../xds/proto.js';
import { applyClusterMerge, insertedClusters } from './cluster-patch.js';
import { patchInlineRouteConfigs, patchListenerList, type ListenerPatchMemo } from './listener-patch.js';
import { patchRouteConfiguration, routePatches, type GatewayPortMap } from './route-patch.js';
import type { PatchContext, PatchPanicHandler, ResolvedPatch } from './types.js';
import { patchesFor, PatchPanic } from './util.js';

export type { GatewayPortMap } from './route-patch.js';
export { ListenerPatchMemo } from './listener-patch.js';
export type { PatchContext, PatchPanicHandler, ResolvedPatch } from './types.js';

export interface ClusterPatchOptions {
  /**
   * The hostnames of the services an inbound cluster (`inbound|<port>||`) serves: istiod matches a
   * CLUSTER patch's `service` against them (the name holds no host). Absent: the name's host.
   */
  readonly inboundHosts?: (clusterName: string) => readonly string[] | undefined;
  /** istiod's panic, recovered (see PatchPanicHandler). */
  readonly onPanic?: PatchPanicHandler;
}

export interface ListenerPatchOptions {
  /** istiod's skipAdds (its virtual and HTTP proxy listeners are patched without the listener ADDs). */
  readonly skipAdds?: boolean;
  /** istiod's panic, recovered (see PatchPanicHandler). */
  readonly onPanic?: PatchPanicHandler;
  /** Results shared with other calls of the same compile (ListenerPatchMemo). */
  readonly memo?: ListenerPatchMemo;
}

export interface RoutePatchOptions {
  /** A gateway's target port → Gateway server ports (istiod's MergedGateway.PortMap), for `portNumber`. */
  readonly gatewayPortMap?: GatewayPortMap;
}

/**
 * istiod's ApplyClusterMerge for each cluster (a REMOVE drops it), then InsertedClusters appended.
 * A MERGE of typed configs of different types (istiod's recovered panic) leaves that cluster as
 * the earlier patches made it.
 */
export function patchClusters(
  ctx: PatchContext,
  clusters: readonly Cluster[],
  patches: readonly ResolvedPatch[],
  options: ClusterPatchOptions = {},
): Cluster[] {
  const P = patchesFor(ctx, patches, 'CLUSTER');
  if (P.length === 0) return [...clusters];
  const out: Cluster[] = [];
  for (const c of clusters) {
    const patched = applyClusterMerge(P, c, options.inboundHosts?.(c.name ?? ''), options.onPanic);
    if (patched) out.push(patched);
  }
  out.push(...insertedClusters(ctx, P));
  return out;
}

/**
 * istiod's ApplyListenerPatches. With SIDECAR_INBOUND, the route-side patches are first applied to
 * the route configs inline in the inbound HCMs (istiod applies them as it builds those). A MERGE
 * of typed configs of different types makes istiod panic and recover, "the patches did not take
 * effect": the listeners are returned as given (after the inline route patches); istiod keeps
 * what it had changed in place before the panic.
 */
export function patchListeners(
  ctx: PatchContext,
  listeners: readonly Listener[],
  patches: readonly ResolvedPatch[],
  options: ListenerPatchOptions = {},
): Listener[] {
  const given = ctx === 'SIDECAR_INBOUND' ? patchInlineRouteConfigs(listeners, patches, options.memo) : [...listeners];
  try {
    return patchListenerList(ctx, given, patches, options.skipAdds ?? false, options.memo);
  } catch (e) {
    if (!(e instanceof PatchPanic)) throw e;
    options.onPanic?.(e.patch, e.message);
    return given;
  }
}

/** istiod's ApplyRouteConfigurationPatches for each route configuration. */
export function patchRouteConfigurations(
  ctx: PatchContext,
  routes: readonly RouteConfiguration[],
  patches: readonly ResolvedPatch[],
  options: RoutePatchOptions = {},
): RouteConfiguration[] {
  const P = routePatches(ctx, patches, options.gatewayPortMap);
  if (!P) return [...routes];
  return routes.map((rc) => patchRouteConfiguration(P, rc));
}
