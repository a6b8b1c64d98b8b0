/**
 * A Sidecar egress listener's `hosts` (`namespace/dnsName`) as istiod's SidecarScope reads them
 * (pilot/pkg/model/sidecar.go, hostClassification): per namespace (`.` is the Sidecar's
 * namespace, `*` any), the imported hosts and the `~`-prefixed exclusions (`~/*` excludes every
 * host of every namespace).
 */
import { hostMatches } from '../names.js';

export interface NamespaceHosts {
  readonly hosts: string[];
  readonly excluded: string[];
}

/** namespace (or `*`) → its imported and excluded hosts. */
export type EgressImports = ReadonlyMap<string, NamespaceHosts>;

export function egressImports(hosts: readonly string[], configNamespace: string): EgressImports {
  const out = new Map<string, NamespaceHosts>();
  for (const h of hosts) {
    const slash = h.indexOf('/');
    if (slash < 0 || h.indexOf('/', slash + 1) >= 0) continue;
    let ns = h.slice(0, slash);
    const name = h.slice(slash + 1).toLowerCase();
    const excluded = ns.startsWith('~');
    if (excluded) ns = ns.slice(1) || '*';
    if (ns === '.') ns = configNamespace;
    let entry = out.get(ns);
    if (!entry) out.set(ns, (entry = { hosts: [], excluded: [] }));
    (excluded ? entry.excluded : entry.hosts).push(name);
  }
  return out;
}

/** `h.SubsetOf(pattern)`: every name `h` matches, `pattern` matches too. */
function subsetOf(h: string, pattern: string): boolean {
  if (pattern === '*') return true;
  if (h.startsWith('*')) {
    if (!pattern.startsWith('*')) return false;
    return h.slice(1).endsWith(pattern.slice(1));
  }
  return hostMatches(pattern, h);
}

/** istiod's host.Name.Matches: either side may be a wildcard covering the other. */
function matchesEither(a: string, b: string): boolean {
  return subsetOf(a, b) || subsetOf(b, a);
}

const excludedBy = (entry: NamespaceHosts | undefined, h: string): boolean =>
  entry !== undefined && entry.excluded.some((x) => subsetOf(h, x));

/** selectServices: a service of `namespace` named `hostname` is imported (and not excluded). */
export function importsService(imports: EgressImports, namespace: string, hostname: string): boolean {
  const own = imports.get(namespace);
  const any = imports.get('*');
  if (excludedBy(own, hostname) || excludedBy(any, hostname)) return false;
  return (
    (own?.hosts.some((p) => subsetOf(hostname, p)) ?? false) || (any?.hosts.some((p) => subsetOf(hostname, p)) ?? false)
  );
}

/**
 * SelectVirtualServices (non-Gateway-API semantics): a VirtualService of `namespace` is imported
 * when one of its hosts (fully qualified) matches an imported host of its namespace or of `*`,
 * either way round, and is not excluded.
 */
export function importsVirtualService(imports: EgressImports, namespace: string, hosts: readonly string[]): boolean {
  const own = imports.get(namespace);
  const any = imports.get('*');
  return hosts.some(
    (h) =>
      !excludedBy(own, h) &&
      !excludedBy(any, h) &&
      ((own?.hosts.some((p) => matchesEither(h, p)) ?? false) ||
        (any?.hosts.some((p) => matchesEither(h, p)) ?? false)),
  );
}
