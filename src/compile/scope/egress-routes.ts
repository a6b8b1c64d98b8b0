/**
 * Route configs of a Sidecar whose egress listeners have ports or binds (istiod's
 * buildSidecarOutboundHTTPRouteConfig): route config `"<port>"` is built from the egress listener
 * GetEgressListenerForRDS picks — the first one with that port, else the catch-all — from its
 * own services on that port and its own VirtualServices. A unix socket's route config is named
 * after its bind and picks the listener with that bind. When the picked listener is a unix socket
 * or HTTP_PROXY, the config holds every HTTP port of its services (allPortsRouteConfig). A sniffed
 * port's `<host>:<port>` (../sniffing.ts) comes from the catch-all listener, with or without a bind.
 * Only the route configs some listener asks for.
 */
import { Diagnostics } from '../../model/diagnostics.js';
import type { RouteConfiguration } from '../../xds/proto.js';
import type { CompileContext } from '../context.js';
import { UNIX_BIND_PREFIX } from '../../model/sidecar.js';
import { egressRdsNames } from '../listener/egress-listeners.js';
import { allPortsRouteConfig, catchAllRouteConfig, portRouteConfigs, sniffedRouteConfigs } from '../routes.js';
import type { EgressListenerView } from './egress-listeners.js';
import { egressListenerContext } from './view.js';

export function buildEgressRoutes(
  ctx: CompileContext,
  egressListeners: readonly EgressListenerView[],
  clientNamespace: string,
): Map<string, RouteConfiguration> {
  // Listener problems were reported when the listeners were built.
  const names = egressRdsNames({ ...ctx, diags: new Diagnostics() }, egressListeners);
  const built = new Map<EgressListenerView, Map<string, RouteConfiguration>>();
  const out = new Map<string, RouteConfiguration>();
  for (const name of names) {
    const socket = name.startsWith(UNIX_BIND_PREFIX);
    const port = socket ? 0 : Number(name);
    const owner = egressListeners.find(
      (l) => l.port === undefined || (l.port.number === port && (!socket || l.bind === name)),
    );
    if (!owner) continue;
    const view = egressListenerContext(ctx, owner);
    if (owner.port && (socket || owner.port.protocol === 'HTTP_PROXY')) {
      out.set(name, allPortsRouteConfig(view, name, clientNamespace));
      continue;
    }
    let configs = built.get(owner);
    if (!configs) {
      configs = portRouteConfigs(view, clientNamespace, true);
      for (const [n, c] of sniffedRouteConfigs(view, clientNamespace, true)) configs.set(n, c);
      built.set(owner, configs);
    }
    // A sniffed port's `<host>:<port>` (only the catch-all listener sniffs) is always built.
    const config = configs.get(name) ?? (Number.isInteger(port) ? catchAllRouteConfig(view, port) : undefined);
    if (config) out.set(name, config);
  }
  return out;
}
