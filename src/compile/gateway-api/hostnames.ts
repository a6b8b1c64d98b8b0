/**
 * Hostname comparisons as istiod's host.Name does them (pkg/config/host/name.go): `*` is every
 * host, `*.example.com` every name ending in `.example.com` (any number of labels), anything else
 * itself.
 */

/** Whether every name `a` stands for is one `b` stands for (host.Name.SubsetOf). */
export function hostSubsetOf(a: string, b: string): boolean {
  if (b === '*') return true;
  if (b.startsWith('*.')) return a.endsWith(b.slice(1));
  return a === b;
}

/** Whether the two overlap: one covers the other (host.Name.Matches, both ways). */
export const hostsOverlap = (a: string, b: string): boolean => hostSubsetOf(a, b) || hostSubsetOf(b, a);

/** The more specific of two overlapping names (their intersection), or undefined when they do not overlap. */
export function hostIntersection(a: string, b: string): string | undefined {
  if (hostSubsetOf(a, b)) return a;
  if (hostSubsetOf(b, a)) return b;
  return undefined;
}
