/**
 * Outbound listeners of a Sidecar whose egress listeners have a port, a bind or captureMode NONE
 * (istiod's buildSidecarOutboundListeners, walking node.SidecarScope.EgressListeners in order):
 *
 * - a listener with a port builds `<bind or 0.0.0.0>_<port>` from its own services only, with the
 *   listener's protocol: HTTP-like → one HCM whose routes come over RDS `"<port>"`; anything else
 *   → the services' TCP/TLS chains, on the bind or else each service's own address
 *   (`<clusterIP>_<port>`, as without a Sidecar);
 * - the catch-all (no port) then builds every port of its services as without a Sidecar (on its
 *   bind, if it has one), skipping the listeners a port listener already made (istiod's `locked`
 *   entries);
 * - captureMode NONE binds a socket of its own (on `bind`, else 127.0.0.1);
 * - a unix domain socket (`bind: unix:///path`, port 0) is a bound pipe listener
 *   `unix:///path_0`: HTTP-like → one HCM whose route config is named after the bind; anything
 *   else is not built (reported: istiod's TCP chains there name a cluster `outbound|0||<host>`);
 * - HTTP_PROXY → one HCM on `<bind or 0.0.0.0>_<port>` without protocol sniffing, route config
 *   `"<port>"` holding every imported service's HTTP ports (egress-routes.ts).
 *
 * A protocol istiod would sniff (unset) is TCP here, as for Service ports (meshsnap does not sniff).
 */
import { outboundHcmHeaders } from './hcm-headers.js';
import type { CompileContext } from '../context.js';
import type { EgressListenerView } from '../scope/egress-listeners.js';
import { egressListenerContext } from '../scope/view.js';
import { ipListenerName, routeConfigName } from '../names.js';
import { isHttpProtocol, type MeshServicePort } from '../../model/service-model.js';
import type { Listener } from '../../xds/proto.js';
import {
  addCatchAllPorts,
  dynamicDnsHosts,
  addTcpPort,
  assembleOutboundListeners,
  httpChain,
  portBinds,
  WILDCARD,
  type ListenerEntry,
} from './outbound.js';

export function buildEgressListeners(
  ctx: CompileContext,
  egressListeners: readonly EgressListenerView[],
): Map<string, Listener> {
  return assembleOutboundListeners(ctx, egressListenerEntries(ctx, egressListeners));
}

/** The route configs the listeners' HCMs ask for over RDS: ports (`"<port>"`) ascending, then unix sockets' binds. */
export function egressRdsNames(ctx: CompileContext, egressListeners: readonly EgressListenerView[]): string[] {
  const names = new Set<string>();
  for (const e of egressListenerEntries(ctx, egressListeners).values())
    for (const c of e.chains) if (c.rds !== undefined) names.add(c.rds);
  const ports = [...names].filter((n) => /^\d+$/.test(n)).sort((a, b) => Number(a) - Number(b));
  const sockets = [...names].filter((n) => !/^\d+$/.test(n)).sort();
  return [...ports, ...sockets];
}

function egressListenerEntries(
  ctx: CompileContext,
  egressListeners: readonly EgressListenerView[],
): Map<string, ListenerEntry> {
  const entries = new Map<string, ListenerEntry>();
  for (const l of egressListeners) {
    const view = egressListenerContext(ctx, l);
    const bind = l.bind !== undefined ? { address: l.bind, bindToPort: l.bindToPort } : undefined;
    if (l.port) addPortListener(view, entries, l.port, bind);
    else addCatchAllPorts(view, entries, view.model.services, bind);
  }
  return entries;
}

function addPortListener(
  view: CompileContext,
  entries: Map<string, ListenerEntry>,
  port: NonNullable<EgressListenerView['port']>,
  bind: { readonly address: string; readonly bindToPort: boolean } | undefined,
): void {
  // ExternalName services are aliases: istiod builds no listener for them.
  const services = view.model.services.filter((s) => s.externalName === undefined);
  if (services.length === 0 || port.protocol === 'UDP') return;
  const httpProxy = port.protocol === 'HTTP_PROXY';
  if (httpProxy || isHttpProtocol(port.protocol)) {
    const address = bind?.address ?? WILDCARD;
    const name = ipListenerName(address, port.number);
    // A unix socket's route config is named after its bind (istiod's buildSidecarOutboundHTTPListenerOpts).
    const rds = port.number === 0 ? address : routeConfigName(port.number);
    const dfpHosts = httpProxy ? [] : dynamicDnsHosts(services, port.number);
    if (!entries.has(name))
      entries.set(name, {
        address,
        port: port.number,
        chains: [
          httpChain(address, port.number, outboundHcmHeaders(view), {
            rds,
            sniffed: !httpProxy && address === WILDCARD,
            dfpHosts,
          }),
        ],
        ...(bind?.bindToPort ? { bindToPort: true } : {}),
      });
    return;
  }
  // istiod's TCP chains on a unix socket send to `outbound|0||<host>`, a cluster that never exists (diagnostics.ts).
  if (port.number === 0) return;
  for (const service of services) {
    const own = service.ports.find((p) => p.port === port.number);
    if (!own) continue;
    const listenerPort: MeshServicePort = { ...own, protocol: port.protocol === 'Unsupported' ? 'TCP' : port.protocol };
    const binds = bind ? [{ address: bind.address }] : portBinds(view, service, listenerPort);
    addTcpPort(view, entries, service, listenerPort, binds, undefined, bind?.bindToPort);
  }
}
