/**
 * Virtual host domains of a service as istiod generates them for a proxy in `clientNamespace`
 * (generateVirtualHostDomains / GenerateAltVirtualHosts, Kubernetes case): the FQDN, the short
 * forms a client can resolve through its DNS search path (`name` only from the service's own
 * namespace; `name.ns` and `name.ns.svc` from anywhere), then the cluster IP (or a ServiceEntry's
 * addresses). Headless services also get `*.`-prefixed forms (pod hostnames). A ServiceEntry host
 * outside the cluster domain has no short forms; a wildcard host is its own domain (`*.example.com`).
 *
 * Sidecars ignore the port in host matching, so they get no `:port` forms; proxyless gRPC matches
 * `host:port` (its target), so each name is followed by its `:port` form.
 */
import type { MeshService } from '../../model/service-model.js';
import { exactList } from '../exact.js';

/** IPv6 addresses are bracketed in Host headers. */
const hostForm = (h: string): string => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h);

function withPort(out: string[], name: string, port: number | undefined): void {
  out.push(hostForm(name));
  if (port !== undefined) out.push(`${hostForm(name)}:${port}`);
}

function kubeShortNames(hostname: string, clientNamespace: string): string[] {
  const svcAt = hostname.indexOf('.svc.');
  const firstDot = hostname.indexOf('.');
  if (svcAt <= 0 || firstDot + 1 > svcAt) return [];
  const name = hostname.slice(0, firstDot);
  const nameNs = hostname.slice(0, svcAt);
  const namespace = hostname.slice(firstDot + 1, svcAt);
  return namespace === clientNamespace ? [name, `${nameNs}.svc`, nameNs] : [nameNs, `${nameNs}.svc`];
}

/** `port` undefined: sidecar (no port forms); a number: proxyless gRPC. */
export function serviceDomains(
  service: MeshService,
  clientNamespace: string,
  domainSuffix: string,
  port: number | undefined,
): string[] {
  const out: string[] = [];
  withPort(out, service.hostname, port);
  if (service.hostname.endsWith(`.svc.${domainSuffix}`))
    for (const alt of kubeShortNames(service.hostname, clientNamespace)) withPort(out, alt, port);
  if (service.headless) for (const d of [...out]) out.push(`*.${d}`);
  else if (service.clusterIP && service.clusterIP !== '0.0.0.0' && service.clusterIP !== 'None')
    withPort(out, service.clusterIP, port);
  // A ServiceEntry's IP addresses (a CIDR is no Host header).
  for (const a of service.serviceEntry?.addresses ?? []) if (!a.includes('/')) withPort(out, a, port);
  return out;
}

/** Drops domains an earlier virtual host already claimed (Envoy rejects duplicates). */
export class DomainDeduper {
  private readonly seen = new Set<string>();

  keep(domains: readonly string[]): string[] {
    const out: string[] = [];
    for (const d of domains) {
      const k = d.toLowerCase();
      if (this.seen.has(k)) continue;
      this.seen.add(k);
      out.push(d);
    }
    // Kept in a virtual host of the output (../exact.ts).
    return exactList(out);
  }

  /**
   * `keep`, giving the list itself when every domain in it is new: a list shared by several
   * virtual hosts (a service's on each of its ports) stays one array. The list must not change after.
   */
  keepShared(domains: readonly string[]): readonly string[] {
    let i = 0;
    for (; i < domains.length; i++) {
      const k = (domains[i] as string).toLowerCase();
      if (this.seen.has(k)) break;
      this.seen.add(k);
    }
    if (i === domains.length) return domains;
    // domains[i] was claimed before: the ones before it are kept (and seen now), the rest as `keep` does.
    const out = domains.slice(0, i);
    for (const d of this.keep(domains.slice(i + 1))) out.push(d);
    return exactList(out);
  }
}
