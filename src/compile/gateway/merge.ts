/**
 * The servers of the Gateways that select one router proxy, merged per listener port as istiod
 * merges them (pilot/pkg/model/gateway.go mergeGateways):
 *
 * - A server's port binds to the targetPort of the proxy's Service port with the same number, else
 *   to the number itself (`resolvePorts`, legacy selector semantics).
 * - Plain-text servers (HTTP family, TCP): the first server on a port decides; a later HTTP server
 *   joins its route `http.<port>`; a later server whose protocol cannot merge (TCP after HTTP, two
 *   TCP servers, …) is dropped and reported (`gateway-conflict`).
 * - TLS servers (HTTPS, TLS): several may share a port, one filter chain each, matched by SNI; a
 *   server repeating a host already served with TLS on that port is dropped; two terminated HTTPS
 *   servers with the same route name (same port name) keep only the first.
 * - A TLS server on a port a plain-text server holds, or a plain-text server on a TLS port, is
 *   dropped (one listener cannot mix them; istiod would replace the TLS servers).
 *
 * Gateways are taken in namespace/name order, servers in their order: istiod takes the Gateways in
 * creation order, which a stateless compile cannot see.
 */
import { type Diagnostics, objectAt } from '../../model/diagnostics.js';
import {
  gatewayKey,
  isHttpGatewayProtocol,
  isHttpServer,
  isTlsServer,
  type Gateway,
  type GatewayProtocol,
  type GatewayServer,
} from '../../model/gateway.js';
import type { MeshService } from '../../model/service-model.js';
import { reportOnce } from '../route/report-once.js';
import { gatewayRouteName } from './names.js';
import { sanitizeServerHosts, sniHostsOf } from './server-hosts.js';

/** A server as merged: its hosts with `./` resolved, the gateway it came from, where it was written. */
export interface MergedServer {
  readonly server: GatewayServer;
  /** `ns/host` or `host`, `./` made `<gateway ns>/`, `*\/host` made `host`. */
  readonly hosts: readonly string[];
  readonly gateway: Gateway;
  /** `<ns>/<name>`. */
  readonly gatewayKey: string;
  /** `spec.servers[i]`. */
  readonly field: string;
  /** RDS name for HTTP servers and terminated HTTPS servers, else ''. */
  readonly routeName: string;
  /** SNI names of a TLS server (hosts without their namespace). */
  readonly sniHosts: readonly string[];
}

/** One listener: a (resolved) port with its bind address and the servers it serves. */
export interface MergedPort {
  readonly number: number;
  readonly bind: string;
  /** The first server's protocol: HTTP family → one HCM chain, else one chain per server. */
  readonly protocol: GatewayProtocol;
  readonly servers: MergedServer[];
  /** For plain-text HTTP ports: `http.<port>`. */
  readonly routeName: string;
}

export interface MergedGateway {
  /** In the order istiod creates them. */
  readonly ports: readonly MergedPort[];
  /** Route name → servers whose virtual hosts it holds. */
  readonly serversByRoute: ReadonlyMap<string, readonly MergedServer[]>;
}

/** The proxy's Service ports (the services selecting it), for port binding. */
export interface ServiceTargetPort {
  readonly port: number;
  readonly targetPort: number;
}

const canMergeProtocols = (current: GatewayProtocol, p: GatewayProtocol): boolean =>
  (isHttpGatewayProtocol(current) || current === p) && isHttpGatewayProtocol(p);

/** istiod's resolvePorts (legacy selector semantics): the targetPort of the proxy's Service port of that number. */
export function resolvePorts(number: number, targets: readonly ServiceTargetPort[]): number {
  for (const t of targets) if (t.port === number) return t.targetPort;
  return number;
}

export function mergeGateways(
  gateways: readonly Gateway[],
  targets: readonly ServiceTargetPort[],
  diags: Diagnostics,
): MergedGateway {
  const ports: MergedPort[] = [];
  const byKey = new Map<string, MergedPort>();
  const plainText = new Map<number, MergedPort>();
  const gatewayPorts = new Set<number>();
  const serversByRoute = new Map<string, MergedServer[]>();
  const tlsHostsByPort = new Map<number, Map<string, string>>();

  const reject = (m: MergedServer, message: string) =>
    reportOnce(diags, {
      severity: 'warning',
      code: 'gateway-conflict',
      message: `${message}; this server is dropped`,
      ...objectAt('Gateway', m.gateway, m.field),
    });

  const addPort = (m: MergedServer, number: number): MergedPort => {
    const p: MergedPort = {
      number,
      bind: m.server.bind ?? '',
      protocol: m.server.port.protocol,
      servers: [m],
      routeName: m.routeName,
    };
    byKey.set(`${number}|${p.bind}`, p);
    ports.push(p);
    return p;
  };

  for (const gateway of gateways) {
    gateway.spec.servers.forEach((server, i) => {
      const number = resolvePorts(server.port.number, targets);
      const hosts = sanitizeServerHosts(server.hosts, gateway.meta.namespace);
      const m: MergedServer = {
        server,
        hosts,
        gateway,
        gatewayKey: gatewayKey(gateway),
        field: `spec.servers[${i}]`,
        routeName: gatewayRouteName(server, number, gateway),
        sniHosts: server.tls ? sniHostsOf(hosts) : [],
      };
      const bind = server.bind ?? '';
      if (server.tls) {
        const known = tlsHostsByPort.get(number) ?? new Map<string, string>();
        tlsHostsByPort.set(number, known);
        const duplicates = hosts.filter((h) => known.get(h) === bind);
        if (duplicates.length) {
          reject(m, `port ${number} already serves ${duplicates.join(', ')} with TLS`);
          return;
        }
        for (const h of hosts) known.set(h, bind);
      }
      if (gatewayPorts.has(number)) {
        const current = plainText.get(number);
        if (current) {
          if (!canMergeProtocols(current.protocol, server.port.protocol) && current.bind === bind) {
            reject(
              m,
              `port ${number} already serves ${current.protocol} (${current.servers[0]?.gatewayKey}); ${server.port.protocol} cannot be merged with it`,
            );
            return;
          }
          if (m.routeName === '' && current.bind === bind) {
            reject(m, `port ${number} already serves plain-text HTTP; a TLS server cannot share it`);
            return;
          }
          const existing = byKey.get(`${number}|${bind}`);
          if (existing) existing.servers.push(m);
          else addPort(m, number);
          if (isHttpServer(server)) pushRoute(serversByRoute, m.routeName, m);
          return;
        }
        if (!isTlsServer(server)) {
          // istiod would replace the TLS servers already on this port; meshsnap keeps them.
          reject(m, `port ${number} already serves TLS; a plain-text ${server.port.protocol} server cannot share it`);
          return;
        }
        if (isHttpServer(server)) {
          if (serversByRoute.has(m.routeName)) {
            reject(m, `route ${m.routeName} already exists: HTTPS servers on one port need distinct port names`);
            return;
          }
          serversByRoute.set(m.routeName, [m]);
        }
        const existing = byKey.get(`${number}|${bind}`);
        if (existing) existing.servers.push(m);
        else addPort(m, number);
        return;
      }
      gatewayPorts.add(number);
      const p = addPort(m, number);
      if (!isTlsServer(server)) plainText.set(number, p);
      if (isHttpServer(server)) serversByRoute.set(m.routeName, [m]);
    });
  }
  return { ports, serversByRoute };
}

function pushRoute(map: Map<string, MergedServer[]>, name: string, m: MergedServer): void {
  const list = map.get(name);
  if (list) list.push(m);
  else map.set(name, [m]);
}

/** Router classes need the proxy's Service ports; a named targetPort resolves through the endpoints. */
export function serviceTargets(
  services: readonly MeshService[],
  endpointPort: (service: MeshService, port: number) => number | undefined,
): ServiceTargetPort[] {
  const out: ServiceTargetPort[] = [];
  for (const s of services)
    for (const p of s.ports) {
      if (p.protocol === 'UDP') continue;
      const targetPort = typeof p.targetPort === 'number' ? p.targetPort : (endpointPort(s, p.port) ?? p.port);
      out.push({ port: p.port, targetPort });
    }
  return out;
}
