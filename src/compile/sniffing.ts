/**
 * Outbound protocol sniffing (istiod's ListenerProtocolAuto in buildSidecarOutboundListener): a
 * service port that names no protocol listens on the service's own addresses (its cluster IP, its
 * entry's IPs, its pods' IPs) with two chains — the TCP one, and an HTTP one that the HTTP inspector
 * picks for plaintext HTTP/1.x and h2c, whose HCM asks for the route config `<host>:<port>`
 * (one virtual host, that service's, with the domain `*`). So HTTP to such a port is routed by the
 * host's VirtualService http routes, and anything else is proxied as TCP.
 *
 * Where it has no address of its own (a ServiceEntry without addresses and not `NONE`, a CIDR) it
 * shares `0.0.0.0_<port>`: that listener's HTTP chain, asking for the port's route config `"<port>"`
 * (which holds the virtual hosts of sniffed services as well as HTTP ones), is added in front of its
 * TCP chain (istiod's AutoOverHTTP and HTTPOverTCP merges).
 */
import type { MeshService, MeshServicePort, ServiceModel } from '../model/service-model.js';

/** The route config a sniffed port's HTTP chain asks for (istiod: `<hostname>:<port>`). */
export const sniffedRouteName = (service: MeshService, port: number): string => `${service.hostname}:${port}`;

/**
 * Whether `port` of `service` is sniffed outbound: it names no protocol and listens on addresses of
 * its own. Decided from the service and its entry alone where endpoints change between config
 * rounds (a headless Service, an entry picking pods), so a route config never lags its listeners.
 */
export function sniffedOutbound(model: ServiceModel, service: MeshService, port: MeshServicePort): boolean {
  if (!port.protocolDefaulted || service.externalName !== undefined) return false;
  const se = service.serviceEntry;
  if (!se || service.clusterIP !== undefined) return true;
  if (se.addresses.length > 0) return se.addresses.some((a) => !a.includes('/'));
  if (se.resolution !== 'NONE') return false;
  if (se.workloadSelector) return true;
  // A NONE entry's written endpoints: listened on per IP (a DNS name cannot be).
  return (model.endpoints.get(service.hostname)?.get(port.port) ?? []).some((ep) => isIpAddress(ep.address));
}

/** Whether `port` of `service` is sniffed on the wildcard address (it has no address of its own there). */
export function sniffedOnWildcard(model: ServiceModel, service: MeshService, port: MeshServicePort): boolean {
  const se = service.serviceEntry;
  if (!port.protocolDefaulted || service.externalName !== undefined || !se || service.clusterIP !== undefined)
    return false;
  if (se.addresses.length > 0) return se.addresses.some((a) => a.includes('/'));
  if (se.resolution !== 'NONE') return true;
  if (se.workloadSelector) return false;
  return !(model.endpoints.get(service.hostname)?.get(port.port) ?? []).some((ep) => isIpAddress(ep.address));
}

export const isIpAddress = (s: string): boolean => /^[0-9.]+$/.test(s) || s.includes(':');
