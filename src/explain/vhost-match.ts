/**
 * Envoy's virtual host selection (RouteConfiguration.virtual_hosts[].domains), from Envoy's docs:
 * the request's authority is matched, case-insensitively, against
 *   1. exact domain names (`www.foo.com`),
 *   2. suffix wildcards (`*.foo.com`, `*-bar.foo.com`), longest first,
 *   3. prefix wildcards (`foo.*`, `foo-*`), longest first,
 *   4. the special wildcard `*`.
 * A wildcard never matches the empty string (`*-bar.foo.com` does not match `-bar.foo.com`).
 * Pure.
 */
import { objects, strings, type JsonObject } from './json.js';

export type DomainKind = 'exact' | 'suffix wildcard' | 'prefix wildcard' | 'any';

export interface VirtualHostMatch {
  readonly virtualHost: JsonObject;
  readonly domain: string;
  readonly kind: DomainKind;
}

export function domainKind(domain: string): DomainKind {
  if (domain === '*') return 'any';
  if (domain.startsWith('*')) return 'suffix wildcard';
  if (domain.endsWith('*')) return 'prefix wildcard';
  return 'exact';
}

/** Whether `domain` matches `host` (both already lower case). */
export function domainMatches(domain: string, host: string): boolean {
  switch (domainKind(domain)) {
    case 'any':
      return true;
    case 'exact':
      return domain === host;
    case 'suffix wildcard': {
      const suffix = domain.slice(1);
      return host.length > suffix.length && host.endsWith(suffix);
    }
    case 'prefix wildcard': {
      const prefix = domain.slice(0, -1);
      return host.length > prefix.length && host.startsWith(prefix);
    }
  }
}

const RANK: Readonly<Record<DomainKind, number>> = {
  exact: 0,
  'suffix wildcard': 1,
  'prefix wildcard': 2,
  any: 3,
};

/** The authority the route table sees: lower case, and without `:port` when the config ignores ports. */
export function hostForMatching(authority: string, ignorePort: boolean): string {
  const host = authority.toLowerCase();
  if (!ignorePort) return host;
  const bracketed = /^(\[[^\]]*\])(:[0-9]+)?$/.exec(host);
  if (bracketed) return bracketed[1] as string;
  const colon = host.lastIndexOf(':');
  return colon > 0 && host.indexOf(':') === colon && /^[0-9]+$/.test(host.slice(colon + 1))
    ? host.slice(0, colon)
    : host;
}

/** The virtual host Envoy picks for `host` (already prepared by hostForMatching), or undefined. */
export function matchVirtualHost(virtualHosts: readonly JsonObject[], host: string): VirtualHostMatch | undefined {
  let best: VirtualHostMatch | undefined;
  for (const vh of virtualHosts) {
    for (const raw of strings(vh.domains)) {
      const domain = raw.toLowerCase();
      if (!domainMatches(domain, host)) continue;
      const kind = domainKind(domain);
      if (
        !best ||
        RANK[kind] < RANK[best.kind] ||
        (RANK[kind] === RANK[best.kind] && domain.length > best.domain.length)
      )
        best = { virtualHost: vh, domain: raw, kind };
    }
  }
  return best;
}

export const virtualHostsOf = (routeConfig: JsonObject): JsonObject[] => objects(routeConfig.virtual_hosts);
