/**
 * Gateway server hosts and how they select VirtualService hosts, as istiod matches them
 * (pilot/pkg/model/gateway.go sanitizeServerHostNamespace, pkg/config/host Names.Intersection,
 * NamesForNamespace, core/gateway.go pickMatchingGatewayHosts).
 */

/** `./h` → `<gateway ns>/h`; `*\/h` → `h`; `*\/*` → `*` (the whole list). */
export function sanitizeServerHosts(hosts: readonly string[], gatewayNamespace: string): string[] {
  const out: string[] = [];
  for (const h of hosts) {
    const slash = h.indexOf('/');
    if (slash < 0) {
      out.push(h);
      continue;
    }
    const ns = h.slice(0, slash);
    const name = h.slice(slash + 1);
    if (ns === '.') out.push(`${gatewayNamespace}/${name}`);
    else if (ns === '*') {
      if (name === '*') return ['*'];
      out.push(name);
    } else out.push(h);
  }
  return out;
}

/** SNI names of a TLS server: its hosts without namespaces, sorted, distinct. */
export function sniHostsOf(hosts: readonly string[]): string[] {
  return [...new Set(hosts.map((h) => (h.includes('/') ? h.slice(h.indexOf('/') + 1) : h)))].sort();
}

const isWildcard = (h: string): boolean => h.startsWith('*');

/** istiod's host.Name.SubsetOf: every name `a` matches is also matched by `b`. */
export function hostSubsetOf(a: string, b: string): boolean {
  if (isWildcard(a)) return isWildcard(b) && a.length >= b.length && a.slice(1).endsWith(b.slice(1));
  if (isWildcard(b)) return a.endsWith(b.slice(1));
  return a === b;
}

/** istiod's host.Name.Matches: the two names have some name in common. */
export function hostsOverlap(a: string, b: string): boolean {
  if (isWildcard(a)) {
    if (isWildcard(b)) return a.length < b.length ? b.slice(1).endsWith(a.slice(1)) : a.slice(1).endsWith(b.slice(1));
    return b.endsWith(a.slice(1));
  }
  if (isWildcard(b)) return a.endsWith(b.slice(1));
  return a === b;
}

/** The server's hosts visible to a VirtualService of `namespace` (istiod's NamesForNamespace). */
export function serverHostsFor(hosts: readonly string[], namespace: string): string[] {
  const out: string[] = [];
  for (const h of hosts) {
    const slash = h.indexOf('/');
    if (slash < 0) out.push(h);
    else if (h.slice(0, slash) === namespace || h.slice(0, slash) === '*') out.push(h.slice(slash + 1));
  }
  return out;
}

/**
 * The hosts a server serves of a VirtualService (istiod's Names.Intersection): for each pair, the
 * narrower of the two, in server-host order, distinct.
 */
export function intersectHosts(serverHosts: readonly string[], vsHosts: readonly string[]): string[] {
  const out: string[] = [];
  for (const s of serverHosts)
    for (const v of vsHosts) {
      const pick = hostSubsetOf(s, v) ? s : hostSubsetOf(v, s) ? v : undefined;
      if (pick !== undefined && !out.includes(pick)) out.push(pick);
    }
  return out;
}

/** Whether any VirtualService host is served by the server (istiod's pickMatchingGatewayHosts, for L4). */
export function anyHostMatches(
  serverHosts: readonly string[],
  vsHosts: readonly string[],
  vsNamespace: string,
): boolean {
  for (const g of serverHosts) {
    let name = g;
    const slash = g.indexOf('/');
    if (slash >= 0) {
      if (g.slice(0, slash) !== vsNamespace) continue;
      name = g.slice(slash + 1);
    }
    if (vsHosts.some((v) => hostsOverlap(name, v))) return true;
  }
  return false;
}
