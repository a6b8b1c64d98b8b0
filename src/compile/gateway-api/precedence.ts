/**
 * The Gateway API's route precedence (istiod's sortHTTPRoutes): exact path before prefix before
 * regex, a longer path first, then a route with a method match, then more header matches, then
 * more query parameter matches; routes without a match go last. The sort is stable, so ties keep
 * the order they come in: oldest route first, then namespace/name, then rule order.
 */
import type { HTTPMatchRequest, HTTPRoute } from '../../model/istio.js';

function uriRank(m: HTTPMatchRequest): number {
  if (m.uri?.exact !== undefined) return 3;
  if (m.uri?.prefix !== undefined) return 2;
  if (m.uri?.regex !== undefined) return 1;
  return -1;
}

const uriLength = (m: HTTPMatchRequest): number => (m.uri?.exact ?? m.uri?.prefix ?? m.uri?.regex ?? '').length;
const count = (o: Readonly<Record<string, unknown>> | undefined): number => (o ? Object.keys(o).length : 0);

function before(a: HTTPRoute, b: HTTPRoute): boolean {
  const m1 = a.match?.[0];
  const m2 = b.match?.[0];
  if (!m1) return false;
  if (!m2) return true;
  const r1 = uriRank(m1);
  const r2 = uriRank(m2);
  if (r1 !== r2) return r1 > r2;
  const l1 = uriLength(m1);
  const l2 = uriLength(m2);
  if (l1 !== l2) return l1 > l2;
  if ((m1.method === undefined) !== (m2.method === undefined)) return m1.method !== undefined;
  if (count(m1.headers) !== count(m2.headers)) return count(m1.headers) > count(m2.headers);
  return count(m1.queryParams) > count(m2.queryParams);
}

export function sortByPrecedence(routes: readonly HTTPRoute[]): HTTPRoute[] {
  return [...routes].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
}

/** Older first (an absent timestamp counts as oldest), then namespace/name: the spec's tie-breaks between routes. */
export function compareAge(
  a: { readonly meta: { readonly namespace: string; readonly name: string; readonly creationTimestamp?: string } },
  b: { readonly meta: { readonly namespace: string; readonly name: string; readonly creationTimestamp?: string } },
): number {
  const ta = a.meta.creationTimestamp ?? '';
  const tb = b.meta.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = `${a.meta.namespace}/${a.meta.name}`;
  const kb = `${b.meta.namespace}/${b.meta.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
