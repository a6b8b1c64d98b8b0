/**
 * Route configs of a Sidecar whose egress listeners have ports or binds (istiod's
 * buildSidecarOutboundHTTPRouteConfig): route config `"<port>"` is built from the egress listener
 * GetEgressListenerForRDS picks — the first one with that port, else the catch-all — from its
 * own services on that port and its own VirtualServices. Only the ports some listener asks for.
 */
import { Diagnostics } from '../../model/diagnostics.js';
import type { RouteConfiguration } from '../../xds/proto.js';
import type { CompileContext } from '../context.js';
import { egressRdsPorts } from '../listener/egress-listeners.js';
import { routeConfigName } from '../names.js';
import { buildOutboundRoutes, catchAllRouteConfig } from '../routes.js';
import type { EgressListenerView } from './egress-listeners.js';
import { egressListenerContext } from './view.js';

export function buildEgressRoutes(
  ctx: CompileContext,
  egressListeners: readonly EgressListenerView[],
  clientNamespace: string,
): Map<string, RouteConfiguration> {
  // Listener problems were reported when the listeners were built.
  const ports = egressRdsPorts({ ...ctx, diags: new Diagnostics() }, egressListeners);
  const built = new Map<EgressListenerView, Map<string, RouteConfiguration>>();
  const out = new Map<string, RouteConfiguration>();
  for (const port of ports) {
    const owner = egressListeners.find((l) => l.port === undefined || l.port.number === port);
    if (!owner) continue;
    const view = egressListenerContext(ctx, owner);
    let configs = built.get(owner);
    if (!configs) built.set(owner, (configs = buildOutboundRoutes(view, clientNamespace)));
    const name = routeConfigName(port);
    out.set(name, configs.get(name) ?? catchAllRouteConfig(view, port));
  }
  return out;
}
