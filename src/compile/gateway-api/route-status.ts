/**
 * A route's status (istiod's createRouteStatus): one `parents[]` entry per parentRef meshsnap
 * owns. A parentRef reaching several listeners reports the best outcome among them (accepted by
 * any is accepted; equal outcomes join their messages). Conversion errors of the route (a backend
 * that does not resolve, a filter meshsnap cannot apply) go to ResolvedRefs.
 */
import type { GatewayApiRoute, ParentReference } from '../../model/gateway-api.js';
import type { RouteParentStatus, RouteStatus } from '../../model/object-status.js';
import { parentRefKey, type RouteParent } from './parents.js';
import { conditions, type ConfigError } from './status.js';

/** Lower is better (istiod's rankParentError). */
const RANK: Readonly<Record<string, number>> = {
  NotAllowedByListeners: 1,
  NoMatchingListenerHostname: 2,
  ParentRefConflict: 3,
  NoMatchingParent: 4,
};
const rank = (p: RouteParent): number => (p.denied ? (RANK[p.denied.reason] ?? 0) : 0);

export function routeStatus(
  route: GatewayApiRoute,
  parents: readonly RouteParent[],
  errors: { readonly mesh?: ConfigError; readonly gateway?: ConfigError },
  controllerOf: (p: RouteParent) => string,
): RouteStatus {
  const ns = route.meta.namespace;
  const byRef = new Map<string, RouteParent[]>();
  for (const p of parents) {
    const k = parentRefKey(p.ref, ns);
    const list = byRef.get(k);
    if (list) list.push(p);
    else byRef.set(k, [p]);
  }
  const out: RouteParentStatus[] = [];
  for (const list of byRef.values()) {
    const first = list[0] as RouteParent;
    let best = first;
    let denied = first.denied;
    for (const p of list.slice(1)) {
      if (rank(p) < rank(best)) {
        best = p;
        denied = p.denied;
      } else if (rank(p) === rank(best) && denied && p.denied) {
        denied = { reason: denied.reason, message: `${denied.message}; ${p.denied.message}` };
      }
    }
    const successes = list.filter((p) => !p.denied).length;
    const routeError = best.parent.mesh ? errors.mesh : errors.gateway;
    out.push({
      parentRef: reportedRef(best.ref),
      controllerName: controllerOf(best),
      conditions: conditions(
        [
          {
            type: 'Accepted',
            reason: 'Accepted',
            message: successes > 1 ? `Route was valid, bound to ${successes} parents` : 'Route was valid',
            ...(denied ? { error: denied } : {}),
          },
          {
            type: 'ResolvedRefs',
            reason: 'ResolvedRefs',
            message: 'All references resolved',
            ...(routeError ? { error: routeError } : {}),
          },
        ],
        route.meta.generation,
      ),
    });
  }
  // Deterministic, as istiod orders the entries it appends: by parentRef, descending.
  out.sort((a, b) => {
    const x = parentRefKey(a.parentRef as ParentReference, ns);
    const y = parentRefKey(b.parentRef as ParentReference, ns);
    return x < y ? 1 : x > y ? -1 : 0;
  });
  return { parents: out };
}

function reportedRef(ref: ParentReference): RouteParentStatus['parentRef'] {
  return {
    group: ref.group,
    kind: ref.kind,
    ...(ref.namespace !== undefined ? { namespace: ref.namespace } : {}),
    name: ref.name,
    ...(ref.sectionName !== undefined ? { sectionName: ref.sectionName } : {}),
    ...(ref.port !== undefined ? { port: ref.port } : {}),
  };
}
