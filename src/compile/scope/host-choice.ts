/**
 * Which namespace's service a namespace sees for a host that ServiceEntries of several namespaces
 * define (model/service-entries.ts keeps a candidate per namespace). istiod's sidecar scope adds
 * the services exported to the namespace (its own with `.`, and those naming it) before the public
 * ones, each list oldest first, and keeps the first of a host (pilot/pkg/model/push_context.go
 * servicesExportedToNamespace, sidecar.go appendSidecarServices; entries of different namespaces
 * never merge: canMergeServices).
 */
import type { HostCandidate, MeshEndpoint, MeshService } from '../../model/service-model.js';
import type { CompileContext } from '../context.js';
import { exportedTo, exportedToAll as listExportedToAll } from '../../model/export-to.js';

/** Whether every namespace sees the service (its exportTo, else the mesh's default, holds `*`). */
export const exportedToAll = (ctx: CompileContext, s: MeshService): boolean =>
  listExportedToAll(s.exportTo, ctx.mesh.defaultServiceExportTo);

/**
 * The candidate `ns` sees among a host's, undefined when it sees none; `from`: only candidates of
 * these namespaces (a Sidecar importing named namespaces).
 */
export function hostChoice(
  ctx: CompileContext,
  candidates: readonly HostCandidate[],
  ns: string,
  from?: ReadonlySet<string>,
): HostCandidate | undefined {
  let firstPublic: HostCandidate | undefined;
  for (const c of candidates) {
    const s = c.service;
    if (from && !from.has(s.namespace)) continue;
    if (!exportedTo(s.exportTo, ctx.mesh.defaultServiceExportTo, s.namespace, ns)) continue;
    if (!exportedToAll(ctx, s)) return c;
    firstPublic ??= c;
  }
  return firstPublic;
}

/**
 * `visible` (services `ns` may see, in hostname order, one per host: the model's) with each shared
 * host's service replaced by the one `ns` sees, or left out when it sees none.
 */
export function withHostChoices(
  ctx: CompileContext,
  visible: readonly MeshService[],
  ns: string,
  from?: ReadonlySet<string>,
): MeshService[] {
  const shared = ctx.model.hostCandidates;
  if (!shared) return visible as MeshService[];
  const out = visible.filter((s) => !shared.has(s.hostname));
  for (const candidates of shared.values()) {
    const chosen = hostChoice(ctx, candidates, ns, from);
    if (chosen) out.push(chosen.service);
  }
  return out.sort((a, b) => (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0));
}

/** Whether `ns` sees the model's service for every shared host (then the shared view may serve it). */
export function seesModelHosts(ctx: CompileContext, ns: string): boolean {
  const shared = ctx.model.hostCandidates;
  if (!shared) return true;
  for (const [host, candidates] of shared)
    if (hostChoice(ctx, candidates, ns)?.service !== ctx.model.byHostname.get(host)) return false;
  return true;
}

/** The endpoints of the services a view sees: the model's, with those of other namespaces' candidates it chose. */
export function endpointsSeen(
  ctx: CompileContext,
  services: readonly MeshService[],
): CompileContext['model']['endpoints'] {
  const shared = ctx.model.hostCandidates;
  if (!shared) return ctx.model.endpoints;
  let out: Map<string, ReadonlyMap<number, readonly MeshEndpoint[]>> | undefined;
  for (const s of services) {
    if (ctx.model.byHostname.get(s.hostname) === s) continue;
    const chosen = shared.get(s.hostname)?.find((c) => c.service === s);
    if (!chosen) continue;
    out ??= new Map(ctx.model.endpoints);
    out.set(s.hostname, chosen.endpoints);
  }
  return out ?? ctx.model.endpoints;
}
