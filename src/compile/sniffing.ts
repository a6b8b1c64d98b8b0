/**
 * Outbound protocol sniffing (istiod's ListenerProtocolAuto in buildSidecarOutboundListener): a
 * service port that names no protocol listens on the service's own addresses (its cluster IP, its
 * entry's IPs, its pods' IPs) with two chains — the TCP one, and an HTTP one that the HTTP inspector
 * picks for plaintext HTTP/1.1 (listener/filters.ts SNIFFED_HTTP_ALPNS says why not h2c), whose HCM
 * asks for the route config `<host>:<port>` (one virtual host, that service's, with the domain `*`).
 * So HTTP to such a port is routed by the host's VirtualService http routes, and anything else is
 * proxied as TCP.
 *
 * Where it has no address of its own (a ServiceEntry without addresses and not `NONE`, a CIDR) it
 * shares `0.0.0.0_<port>`: that listener's HTTP chain, asking for the port's route config `"<port>"`
 * (which holds the virtual hosts of sniffed services as well as HTTP ones), is added in front of its
 * TCP chain (istiod's AutoOverHTTP and HTTPOverTCP merges).
 */
import type { MeshService, MeshServicePort, ServiceModel } from '../model/service-model.js';
import { isIp } from '../model/workload-endpoints.js';

/** The route config a sniffed port's HTTP chain asks for on the service's own addresses (istiod: `<hostname>:<port>`). */
export const sniffedRouteName = (service: MeshService, port: number): string => `${service.hostname}:${port}`;

/** Where a port is sniffed: on the service's own addresses (`<host>:<port>`), on the wildcard (`"<port>"`). */
export interface SniffedOn {
  readonly own: boolean;
  readonly wildcard: boolean;
}

/**
 * Where a sidecar sniffs `port` of `service`: on addresses of its own, on the wildcard, both (an
 * entry with IPs and CIDRs), or nowhere (it names a protocol). Decided from the service and its entry
 * alone where endpoints change between config rounds (a headless Service, an entry picking pods), so
 * a route config never lags its listeners.
 */
export function sniffedOn(model: ServiceModel, service: MeshService, port: MeshServicePort): SniffedOn {
  if (!port.protocolDefaulted || service.externalName !== undefined) return NOWHERE;
  const se = service.serviceEntry;
  if (!se || service.clusterIP !== undefined) return OWN;
  if (se.addresses.length > 0)
    return { own: se.addresses.some((a) => !a.includes('/')), wildcard: se.addresses.some((a) => a.includes('/')) };
  if (se.resolution !== 'NONE') return WILDCARD;
  if (se.workloadSelector) return OWN;
  // A NONE entry's written endpoints: listened on per IP (a DNS name cannot be), else the wildcard.
  const ips = (model.endpoints.get(service.hostname)?.get(port.port) ?? []).some((ep) => isIp(ep.address));
  return ips ? OWN : WILDCARD;
}

const NOWHERE: SniffedOn = { own: false, wildcard: false };
const OWN: SniffedOn = { own: true, wildcard: false };
const WILDCARD: SniffedOn = { own: false, wildcard: true };

/** Whether a sidecar sniffs `port` of `service` on addresses of its own (with the `<host>:<port>` route config). */
export const sniffedOutbound = (model: ServiceModel, service: MeshService, port: MeshServicePort): boolean =>
  sniffedOn(model, service, port).own;

/** Whether a sidecar sniffs `port` of `service` on the wildcard address (through the `"<port>"` route config). */
export const sniffedOnWildcard = (model: ServiceModel, service: MeshService, port: MeshServicePort): boolean =>
  sniffedOn(model, service, port).wildcard;
