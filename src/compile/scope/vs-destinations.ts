/**
 * Services a Sidecar imports through the VirtualServices it imports (istiod's
 * collectImportedServices): each destination host of their routes, limited to the ports the
 * routes name (serviceMatchingVirtualServicePorts: a destination without a port takes every port;
 * a service none of whose ports is named is not imported).
 */
import type { Destination, VirtualService } from '../../model/istio.js';
import type { MeshService } from '../../model/service-model.js';
import { resolveHost } from '../names.js';

/** host → the destination ports (0: every port). */
export function destinationPorts(
  vs: VirtualService,
  domainSuffix: string,
  known?: { has(hostname: string): boolean },
): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  const add = (d: Destination): void => {
    // `known`: a service's own two-label host (a ServiceEntry's `httpbin.org`) is not `<name>.<namespace>`.
    const host = resolveHost(d.host, vs.meta.namespace, domainSuffix, known).toLowerCase();
    let ports = out.get(host);
    if (!ports) out.set(host, (ports = new Set()));
    ports.add(d.port?.number ?? 0);
  };
  for (const r of vs.spec.http ?? []) {
    for (const d of r.route ?? []) add(d.destination);
    for (const m of r.mirrors ?? []) add(m.destination);
  }
  for (const r of vs.spec.tcp ?? []) for (const d of r.route) add(d.destination);
  for (const r of vs.spec.tls ?? []) for (const d of r.route) add(d.destination);
  return out;
}

/** The service with only the named ports, itself when all or any port is named, undefined when none is. */
export function withPorts(service: MeshService, ports: ReadonlySet<number>): MeshService | undefined {
  if (ports.size === 0 || ports.has(0)) return service;
  const kept = service.ports.filter((p) => ports.has(p.port));
  if (kept.length === service.ports.length) return service;
  return kept.length > 0 ? { ...service, ports: kept } : undefined;
}
