/**
 * Envoy's "a domain must be unique across all virtual hosts" of a RouteConfiguration, checked
 * without re-reading the virtual hosts it shares with a config already found clean.
 *
 * A sidecar's outbound config exists once per client namespace (`routes/<ns>`), and almost all of
 * its virtual hosts are the same objects in every namespace (src/compile/routes.ts): at 10k
 * services, 100 namespaces × 10k virtual hosts × ~4 domains. So per config name the last config
 * found clean (of at least MIN_HOSTS hosts) is kept as a basis: the hosts of a new config that are
 * in the basis are unique among themselves (a subset of a clean config), and only the other hosts'
 * domains are compared, with each other and with the basis's owners that the new config also has.
 * Anything that looks like a clash goes through the full check, which alone reports (same
 * violations, same order, as a check without the basis). A host is found in the basis by its
 * position (an identity comparison: the namespaces' configs list their hosts in the same order),
 * else by a lookup.
 *
 * Messages are immutable once built (the compiler never changes one it handed out), so a basis
 * stays true for as long as its objects live.
 */
import { LRUCache } from 'lru-cache';

/** A VirtualHost, as built or as decoded. */
type Host = object;

/** A domain given twice: virtual host `host`'s domain `domain` is also one of virtual host `first`. */
export interface DomainClash {
  readonly host: number;
  readonly domain: number;
  readonly first: number;
}

/** Configs with fewer hosts are checked in full (cheap, and nothing is shared). */
const MIN_HOSTS = 64;
/** Config names kept (a mesh has one sidecar config per HTTP port, plus gateways'). */
const MAX_BASES = 64;

interface Basis {
  /** The clean config's hosts, in order. */
  readonly hosts: readonly Host[];
  /** Host → its position in `hosts`, for a host the new config holds at another position. */
  readonly position: ReadonlyMap<Host, number>;
  /**
   * Per position, the number of the last check that met its host in its config: "does the config
   * have this host" without a set per check (configs of 10k hosts, checked per namespace).
   */
  readonly met: Float64Array;
  checks: number;
  /** Lower-cased domain → the position of the host that has it. */
  readonly owner: ReadonlyMap<string, number>;
}

const bases = new LRUCache<string, Basis>({ max: MAX_BASES });

/**
 * Forgets every basis. A basis holds its config's virtual hosts (at 10k services ~10k hosts and
 * their ~40k domains, ~15 MB), so a check whose output is not checked again (the one-shot build)
 * lets them go when it ends rather than keep them through the build. Only speed depends on bases.
 */
export function forgetDomainBases(): void {
  bases.clear();
}

const domainsOf = (h: Host | undefined): readonly unknown[] => {
  const domains = (h as { domains?: unknown } | undefined)?.domains;
  return Array.isArray(domains) ? domains : [];
};
const lower = (d: unknown): string => (typeof d === 'string' ? d : '').toLowerCase();

/** Every clash, in host then domain order, each naming the first host with the domain. */
export function domainClashes(name: string, hosts: readonly Host[]): DomainClash[] {
  if (hosts.length >= MIN_HOSTS && clearOfBasis(bases.get(name), hosts)) return [];
  const owner = new Map<string, number>();
  const clashes: DomainClash[] = [];
  for (let i = 0; i < hosts.length; i++) {
    const domains = domainsOf(hosts[i]);
    for (let j = 0; j < domains.length; j++) {
      const d = lower(domains[j]);
      const first = owner.get(d);
      if (first === undefined) owner.set(d, i);
      else clashes.push({ host: i, domain: j, first });
    }
  }
  if (clashes.length === 0 && hosts.length >= MIN_HOSTS) {
    const position = new Map<Host, number>();
    for (let i = 0; i < hosts.length; i++) position.set(hosts[i] as Host, i);
    bases.set(name, { hosts, position, met: new Float64Array(hosts.length), checks: 0, owner });
  }
  return clashes;
}

/**
 * Whether the hosts are surely clash-free given a clean basis; false means "check in full". A host
 * at the same position as in the basis is found by an identity comparison; only the others are
 * looked up.
 */
function clearOfBasis(basis: Basis | undefined, hosts: readonly Host[]): boolean {
  if (!basis) return false;
  const check = ++basis.checks;
  const { met, position } = basis;
  const kept = basis.hosts;
  const fresh: Host[] = [];
  for (let i = 0; i < hosts.length; i++) {
    const h = hosts[i] as Host;
    const at = i < kept.length && kept[i] === h ? i : position.get(h);
    if (at === undefined) fresh.push(h);
    else if (met[at] === check)
      return false; // the same host twice clashes with itself
    else met[at] = check;
  }
  if (fresh.length * 2 > hosts.length) return false;
  const seen = new Set<string>();
  for (const h of fresh) {
    for (const d of domainsOf(h)) {
      const l = lower(d);
      if (seen.has(l)) return false;
      seen.add(l);
      const o = basis.owner.get(l);
      if (o !== undefined && met[o] === check) return false;
    }
  }
  return true;
}
