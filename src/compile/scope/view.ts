/**
 * A restricted view of the compile context: the services, VirtualServices and DestinationRules
 * one visibility scope sees, with its own indexes and outbound traffic policy. The translators
 * read only the context, so run on a view they build exactly what that scope's sidecars get.
 * Indexes report into a scratch Diagnostics: the full context already reported every object.
 */
import { Diagnostics } from '../../model/diagnostics.js';
import type { DestinationRule, VirtualService } from '../../model/istio.js';
import type { MeshConfig } from '../../model/mesh-config.js';
import type { MeshService } from '../../model/service-model.js';
import type { CompileContext } from '../context.js';
import { indexDestinationRules, type WorkloadRules } from '../destination-rules.js';
import { indexVirtualServices } from '../virtual-services.js';
import type { EgressListenerView } from './egress-listeners.js';
import { endpointsSeen } from './host-choice.js';

export interface ViewContents {
  readonly clientNamespace: string;
  /** In hostname order. */
  readonly services: readonly MeshService[];
  readonly virtualServices: readonly VirtualService[];
  /** Those without a workloadSelector; the client namespace's with one are `workloadRules`. */
  readonly destinationRules: readonly DestinationRule[];
  /** When the client namespace has DestinationRules with a workloadSelector: them, and which select the workload. */
  readonly workloadRules?: WorkloadRules;
  readonly outboundTrafficPolicy: MeshConfig['outboundTrafficPolicy'];
  /** Under ALLOW_ANY, the Sidecar's egress proxy cluster (scopes.ts sets it on the view: egress-proxy.ts). */
  readonly egressProxyCluster?: string;
  /** The Sidecar's egress listeners, when they shape listeners (egress-listeners.ts). */
  readonly egressListeners?: readonly EgressListenerView[];
}

export function viewContext(ctx: CompileContext, contents: ViewContents): CompileContext {
  const scratch = new Diagnostics();
  const model = {
    ...ctx.model,
    services: contents.services,
    byHostname: new Map(contents.services.map((s) => [s.hostname, s])),
    endpoints: endpointsSeen(ctx, contents.services),
    virtualServices: contents.virtualServices,
    destinationRules: contents.destinationRules,
  };
  const mesh = { ...ctx.mesh, outboundTrafficPolicy: contents.outboundTrafficPolicy };
  return {
    ...ctx,
    model,
    mesh,
    diags: scratch,
    destinationRules: indexDestinationRules(model, mesh, scratch, contents.clientNamespace, contents.workloadRules),
    virtualServices: indexVirtualServices(model, mesh, scratch, contents.clientNamespace),
    ...(contents.egressListeners ? { egressListeners: contents.egressListeners } : {}),
  };
}

const listenerViews = new WeakMap<CompileContext, WeakMap<EgressListenerView, CompileContext>>();

/**
 * What one egress listener of a scope sees: its own services and VirtualServices (istiod builds its
 * listeners and virtual hosts from these alone), the scope's services as destinations, its
 * DestinationRules and outbound policy.
 */
export function egressListenerContext(ctx: CompileContext, listener: EgressListenerView): CompileContext {
  let views = listenerViews.get(ctx);
  if (!views) listenerViews.set(ctx, (views = new WeakMap()));
  const known = views.get(listener);
  if (known) return known;
  const model = {
    ...ctx.model,
    services: listener.services,
    // Routes and TCP chains may send to any service of the scope (a VirtualService's destination).
    byHostname: ctx.model.byHostname,
    virtualServices: listener.virtualServices,
  };
  const view: CompileContext = {
    ...ctx,
    model,
    virtualServices: indexVirtualServices(model, ctx.mesh, new Diagnostics(), ctx.virtualServices.clientNamespace),
  };
  views.set(listener, view);
  return view;
}
