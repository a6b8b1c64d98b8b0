/**
 * Outbound protocol sniffing (istiod's ListenerProtocolAuto in buildSidecarOutboundListener): a
 * service port that names no protocol listens on the service's own addresses (its cluster IP, its
 * entry's IPs, its pods' IPs) with two chains — the TCP one, and an HTTP one that the HTTP inspector
 * picks for plaintext HTTP/1.x and h2c, whose HCM asks for the route config `<host>:<port>`
 * (one virtual host, that service's, with the domain `*`). So HTTP to such a port is routed by the
 * host's VirtualService http routes, and anything else is proxied as TCP.
 *
 * Where istiod would listen on the wildcard for such a port (an entry without addresses and not
 * `NONE`, a CIDR), meshsnap keeps the TCP chain only (istiod's sniffed chain there shares the port's
 * route config with HTTP services; README, deviations).
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

export const isIpAddress = (s: string): boolean => /^[0-9.]+$/.test(s) || s.includes(':');
