/**
 * The trust domain and its aliases (istiod's pilot/pkg/security/trustdomain): a principal naming
 * one of them (or cluster.local) is matched under every one.
 */
const DEFAULT_CLUSTER_LOCAL = 'cluster.local';

export interface TrustDomainBundle {
  /** The trust domain first, then its aliases; empty when none is configured. */
  readonly trustDomains: readonly string[];
  replaceAliases(principals: readonly string[]): string[];
  expandAliases(trustDomains: readonly string[]): string[];
}

const prefixMatch = (a: string, pattern: string): boolean =>
  pattern.endsWith('*') && a.startsWith(pattern.slice(0, -1));
const suffixMatch = (a: string, pattern: string): boolean => pattern.startsWith('*') && a.endsWith(pattern.slice(1));

function matchesAny(a: string, list: readonly string[]): boolean {
  return list.some(
    (s) => a === s || s === '*' || prefixMatch(a, s) || prefixMatch(s, a) || suffixMatch(a, s) || suffixMatch(s, a),
  );
}

/** `<td>/ns/<ns>/sa/<sa>` split at `/`: exactly five parts, else not a SPIFFE identity we rewrite. */
const spiffeParts = (principal: string): string[] | undefined => {
  const parts = principal.split('/');
  return parts.length === 5 ? parts : undefined;
};

const unique = (xs: readonly string[]): string[] => [...new Set(xs)];

export function trustDomainBundle(trustDomain?: string, aliases: readonly string[] = []): TrustDomainBundle {
  const trustDomains = trustDomain === undefined ? [] : [trustDomain, ...aliases];
  return {
    trustDomains,
    replaceAliases: (principals) =>
      principals.flatMap((principal) => {
        const parts = spiffeParts(principal);
        const fromPrincipal = parts?.[0];
        if (!parts || fromPrincipal === undefined || fromPrincipal === '*') return [principal];
        if (!matchesAny(fromPrincipal, trustDomains) && fromPrincipal !== DEFAULT_CLUSTER_LOCAL) return [principal];
        return unique(
          trustDomains.map((td) => (suffixMatch(td, fromPrincipal) ? principal : [td, ...parts.slice(1)].join('/'))),
        );
      }),
    expandAliases: (values) => unique(values.flatMap((v) => (trustDomains.includes(v) ? trustDomains : [v]))),
  };
}
