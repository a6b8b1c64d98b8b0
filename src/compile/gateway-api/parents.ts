/**
 * Route attachment (istiod's extractParentReferenceInfo + referenceAllowed): each parentRef of a
 * route is matched against the listeners of the Gateway it names (every listener, narrowed by
 * `sectionName` and `port`), or against the mesh for a Service (GAMMA). A listener refuses a route
 * whose namespace it does not allow, whose hostnames do not meet its own, or whose kind it does not
 * carry; the reasons are the spec's.
 */
import { GATEWAY_API_GROUP, type GatewayApiRoute, type ParentReference } from '../../model/gateway-api.js';
import type { Service } from '../../model/k8s.js';
import { hostsOverlap } from './hostnames.js';
import type { ListenerParent } from './listeners.js';
import type { ConfigError } from './status.js';

export type Parent = { readonly mesh: true; readonly service: Service } | ({ readonly mesh: false } & ListenerParent);

/** One (parentRef, listener or mesh) pair of a route. */
export interface RouteParent {
  readonly ref: ParentReference;
  readonly parent: Parent;
  /** Why the parent refuses the route (Accepted False), when it does. */
  readonly denied?: ConfigError;
  /** Hostnames of the other listeners on the same port and protocol (listener isolation). */
  readonly banned: readonly string[];
}

export interface ParentLookup {
  /** The listeners of an owned Gateway, by `<ns>/<name>`; absent for Gateways meshsnap does not own. */
  readonly listeners: ReadonlyMap<string, readonly ListenerParent[]>;
  readonly services: ReadonlyMap<string, Service>;
}

export const isGatewayRef = (ref: ParentReference): boolean =>
  ref.group === GATEWAY_API_GROUP && ref.kind === 'Gateway';
export const isServiceRef = (ref: ParentReference): boolean => ref.group === '' && ref.kind === 'Service';

/** Every parent a route's parentRefs reach, sorted by parentRef (istiod's parentRefString order). */
export function routeParents(route: GatewayApiRoute, lookup: ParentLookup): RouteParent[] {
  const ns = route.meta.namespace;
  const hostnames = 'hostnames' in route.spec ? route.spec.hostnames : [];
  const out: RouteParent[] = [];
  for (const ref of route.spec.parentRefs) {
    const refNs = ref.namespace ?? ns;
    if (isServiceRef(ref)) {
      const service = lookup.services.get(`${refNs}/${ref.name}`);
      if (service) out.push({ ref, parent: { mesh: true, service }, banned: [] });
      else
        out.push({
          ref,
          parent: { mesh: true, service: missingService(refNs, ref.name) },
          denied: { reason: 'NoMatchingParent', message: `parent service: "${ref.name}" not found` },
          banned: [],
        });
      continue;
    }
    if (!isGatewayRef(ref)) continue; // not a parent kind meshsnap knows: maybe another controller's
    const listeners = lookup.listeners.get(`${refNs}/${ref.name}`);
    if (!listeners) continue; // a Gateway of another controller, or none at all: not ours to report
    for (const l of listeners) {
      const banned = listeners
        .filter((o) => o !== l && o.listener.port === l.listener.port && o.listener.protocol === l.listener.protocol)
        .map((o) => o.listener.hostname ?? '')
        .filter((h) => h !== (l.listener.hostname ?? ''));
      const denied = refusal(route, ref, l, hostnames, ns);
      out.push({ ref, parent: { mesh: false, ...l }, ...(denied ? { denied } : {}), banned });
    }
  }
  return out.sort((a, b) => cmp(parentRefKey(a.ref, ns), parentRefKey(b.ref, ns)));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** istiod's parentRefString. */
export function parentRefKey(ref: ParentReference, routeNamespace: string): string {
  return `${ref.group}/${ref.kind}/${ref.name}/${ref.sectionName ?? ''}/${ref.port ?? 0}.${ref.namespace ?? routeNamespace}`;
}

function missingService(namespace: string, name: string): Service {
  return {
    kind: 'Service',
    meta: { name, namespace, labels: {}, annotations: {} },
    origin: {},
    type: 'ClusterIP',
    clusterIPs: [],
    ports: [],
  };
}

function refusal(
  route: GatewayApiRoute,
  ref: ParentReference,
  parent: ListenerParent,
  routeHostnames: readonly string[],
  routeNamespace: string,
): ConfigError | undefined {
  const l = parent.listener;
  if (ref.port !== undefined && ref.port !== l.port)
    return { reason: 'NoMatchingParent', message: `port ${ref.port} not found` };
  if (ref.sectionName !== undefined && ref.sectionName !== l.name)
    return { reason: 'NoMatchingParent', message: `sectionName "${ref.sectionName}" not found` };
  const hosts = routeHostnames.length ? routeHostnames : ['*'];
  let hostMatched = false;
  let matched = false;
  for (const h of hosts) {
    for (const entry of parent.hostnames) {
      const slash = entry.indexOf('/');
      const allowedNs = slash < 0 ? '*' : entry.slice(0, slash);
      const listenerHost = slash < 0 ? entry : entry.slice(slash + 1);
      const hostOk = hostsOverlap(listenerHost, h);
      hostMatched ||= hostOk;
      if (hostOk && (allowedNs === '*' || allowedNs === routeNamespace)) matched = true;
    }
  }
  const original = l.hostname ?? '';
  if (!matched) {
    return hostMatched
      ? {
          reason: 'NotAllowedByListeners',
          message: `hostnames matched parent hostname "${original}", but namespace "${routeNamespace}" is not allowed by the parent`,
        }
      : { reason: 'NoMatchingListenerHostname', message: `no hostnames matched parent hostname "${original}"` };
  }
  if (!parent.supportedKinds.some((k) => k.group === GATEWAY_API_GROUP && k.kind === route.kind))
    return {
      reason: 'NotAllowedByListeners',
      message: `kind ${GATEWAY_API_GROUP}/v1, Kind=${route.kind} is not allowed`,
    };
  return undefined;
}
