/**
 * A Sidecar's egress listeners one by one, as istiod's SidecarScope keeps them
 * (IstioEgressListenerWrapper, pilot/pkg/model/sidecar.go): each listener's own imported services
 * and VirtualServices, and where its listeners bind (listener.go buildSidecarOutboundListeners).
 * A listener with a port imports only the services exposing that port, with that port alone
 * (serviceMatchingListenerPort), also among its VirtualServices' destinations. The scope holds the
 * union (collectImportedServices: a host imported twice gets the union of its ports).
 *
 * A unix domain socket listener (`bind: unix://…`, port 0) and an HTTP_PROXY listener import their
 * services with all their ports (istiod's needsPortMatch).
 *
 * Every Sidecar's contents come from here (scopes.ts); the listeners shape the outbound listeners
 * only when a listener has a port, a bind or captureMode NONE, or when a VirtualService imports a
 * destination no listener's hosts import (that service gets clusters, not listeners or virtual
 * hosts); otherwise one set of listeners for every port from all the services is the same thing.
 */
import type { VirtualService } from '../../model/istio.js';
import type { MeshService, Protocol } from '../../model/service-model.js';
import { sidecarPortProtocol, UNIX_BIND_PREFIX, type SidecarEgressListener } from '../../model/sidecar.js';
import { resolveHost } from '../names.js';
import { egressImports, importsService, importsVirtualService } from './egress-hosts.js';
import { destinationPorts, withPorts } from './vs-destinations.js';

/** A Sidecar egress port's protocol: a service protocol, or HTTP_PROXY (a forward proxy for every imported service). */
export type EgressPortProtocol = Protocol | 'HTTP_PROXY';

export interface EgressListenerView {
  /** Undefined: the catch-all listener, which builds every port no listener with a port took. Number 0: a unix domain socket. */
  readonly port?: { readonly number: number; readonly protocol: EgressPortProtocol };
  /** The address its listeners use instead of the wildcard or the services' own addresses. */
  readonly bind?: string;
  /** A socket of its own the application connects to (captureMode NONE), not reached through virtualOutbound. */
  readonly bindToPort: boolean;
  /** In hostname order. */
  readonly services: readonly MeshService[];
  readonly virtualServices: readonly VirtualService[];
}

const isHttpProxy = (port: SidecarEgressListener['port']): boolean => port?.protocol?.toUpperCase() === 'HTTP_PROXY';

/** istiod's needsPortMatch: a listener with a port imports services on that port only, but for a unix socket or HTTP_PROXY. */
const matchedPort = (e: SidecarEgressListener): number | undefined =>
  e.port && e.port.number !== 0 && !isHttpProxy(e.port) ? e.port.number : undefined;

const portProtocol = (port: NonNullable<SidecarEgressListener['port']>): EgressPortProtocol =>
  isHttpProxy(port) ? 'HTTP_PROXY' : sidecarPortProtocol(port);

/** Whether the egress listeners shape outbound listeners (not only what is imported). */
export const shapesListeners = (egress: readonly SidecarEgressListener[]): boolean =>
  egress.some((e) => e.port !== undefined || e.bind !== undefined || e.captureMode === 'NONE');

/**
 * istiod's listenerBinding: captureMode NONE or a unix socket binds a real socket, on `bind` or
 * else 127.0.0.1 (getWildcardsAndLocalHost); otherwise `bind`, if any, only names the address
 * original-dst hands connections to.
 */
function binding(e: SidecarEgressListener): { bind?: string; bindToPort: boolean } {
  const bindToPort = e.captureMode === 'NONE' || (e.bind ?? '').startsWith(UNIX_BIND_PREFIX);
  const bind = e.bind ?? (bindToPort ? '127.0.0.1' : undefined);
  return bind !== undefined ? { bind, bindToPort } : { bindToPort };
}

/** serviceMatchingListenerPort: the service with only the listener's port, undefined when it has none such. */
function onPort(s: MeshService, port: number): MeshService | undefined {
  const p = s.ports.find((x) => x.port === port);
  if (!p) return undefined;
  return s.ports.length === 1 ? s : { ...s, ports: [p] };
}

const byHostname = (a: MeshService, b: MeshService): number =>
  a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0;

export interface EgressListenerContents {
  readonly listeners: readonly EgressListenerView[];
  /** The union of the listeners' services and their VirtualServices' destinations, in hostname order. */
  readonly services: readonly MeshService[];
  readonly virtualServices: readonly VirtualService[];
}

/**
 * The listeners' contents from the services and VirtualServices exported to the namespace `ns`;
 * `lookup` finds a destination host's service (visible to `ns`).
 */
export function egressListenerContents(
  egress: readonly SidecarEgressListener[],
  ns: string,
  exported: { readonly services: readonly MeshService[]; readonly virtualServices: readonly VirtualService[] },
  lookup: (host: string) => MeshService | undefined,
  domainSuffix: string,
): EgressListenerContents {
  const merged = new Map<string, MeshService>();
  const add = (s: MeshService | undefined): void => {
    if (!s) return;
    const known = merged.get(s.hostname);
    if (!known) merged.set(s.hostname, s);
    else if (known !== s && known.namespace === s.namespace) merged.set(s.hostname, unionPorts(known, s, lookup));
  };
  const listeners: EgressListenerView[] = [];
  const virtualServices = new Set<VirtualService>();
  const known = { has: (hostname: string) => lookup(hostname) !== undefined };
  for (const e of egress) {
    const imports = egressImports(e.hosts, ns);
    const port = matchedPort(e);
    const services = exported.services
      .filter((s) => importsService(imports, s.namespace, s.hostname))
      .map((s) => (port === undefined ? s : onPort(s, port)))
      .filter((s): s is MeshService => s !== undefined);
    const vss = exported.virtualServices.filter((vs) =>
      importsVirtualService(
        imports,
        vs.meta.namespace,
        vs.spec.hosts.map((h) => resolveHost(h, vs.meta.namespace, domainSuffix, known).toLowerCase()),
      ),
    );
    for (const s of services) add(s);
    for (const vs of vss) {
      virtualServices.add(vs);
      for (const [host, ports] of destinationPorts(vs, domainSuffix, known)) {
        const s = lookup(host);
        if (s) add(port === undefined ? withPorts(s, ports) : onPort(s, port));
      }
    }
    listeners.push({
      ...(e.port ? { port: { number: e.port.number, protocol: portProtocol(e.port) } } : {}),
      ...binding(e),
      services,
      virtualServices: vss,
    });
  }
  return {
    listeners,
    services: [...merged.values()].sort(byHostname),
    virtualServices: exported.virtualServices.filter((v) => virtualServices.has(v)),
  };
}

/** appendSidecarServices' merge: the ports of both, in the service's own order (the service itself when that is all of them). */
function unionPorts(a: MeshService, b: MeshService, lookup: (host: string) => MeshService | undefined): MeshService {
  const whole = lookup(a.hostname) ?? a;
  const numbers = new Set([...a.ports, ...b.ports].map((p) => p.port));
  const ports = whole.ports.filter((p) => numbers.has(p.port));
  return ports.length === whole.ports.length ? whole : { ...whole, ports };
}
