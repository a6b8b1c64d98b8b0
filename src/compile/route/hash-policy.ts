/**
 * Consistent-hash load balancing needs a route hash policy. Which ConsistentHashLB applies to a
 * destination follows istiod (HashForHTTPDestination): subset port-level, then subset, then
 * port-level, then the rule's top-level setting.
 */
import type { ConsistentHashLB, Destination, PortTrafficPolicy, TrafficPolicy } from '../../model/istio.js';
import { durationMs, type envoy } from '../../xds/proto.js';
import type { ResolvedDestinationRule } from '../context.js';
import { deepFreeze } from '../intern.js';

export type HashPolicy = envoy.config.route.v3.RouteAction.HashPolicy.$Properties;

function portLevelHash(
  port: number | undefined,
  settings: readonly PortTrafficPolicy[] | undefined,
): ConsistentHashLB | undefined {
  if (port === undefined) return undefined;
  return settings?.find((s) => s.port?.number === port)?.loadBalancer?.consistentHash;
}

/** For a VirtualService destination (its host already resolved). */
export function destinationHash(
  rule: ResolvedDestinationRule | undefined,
  dest: Destination,
): ConsistentHashLB | undefined {
  if (!rule) return undefined;
  const top: TrafficPolicy | undefined = rule.spec.trafficPolicy;
  const subset = dest.subset !== undefined ? rule.spec.subsets?.find((s) => s.name === dest.subset) : undefined;
  return (
    portLevelHash(dest.port?.number, subset?.trafficPolicy?.portLevelSettings) ??
    subset?.trafficPolicy?.loadBalancer?.consistentHash ??
    portLevelHash(dest.port?.number, top?.portLevelSettings) ??
    top?.loadBalancer?.consistentHash
  );
}

/** For a service port without a VirtualService (istiod's hashForService). */
export function serviceHash(rule: ResolvedDestinationRule | undefined, port: number): ConsistentHashLB | undefined {
  if (!rule) return undefined;
  const top = rule.spec.trafficPolicy;
  const setting = top?.portLevelSettings?.find((s) => s.port?.number === port);
  return setting?.loadBalancer?.consistentHash ?? top?.loadBalancer?.consistentHash;
}

/** A DestinationRule's consistent hash as a route hash policy: one per setting, frozen, shared by every route it applies to. */
export function toHashPolicy(hash: ConsistentHashLB | undefined): HashPolicy | undefined {
  if (!hash) return undefined;
  let known = policies.get(hash);
  if (!known) {
    const policy = hashPolicy(hash);
    policies.set(hash, (known = { policy: policy && deepFreeze(policy) }));
  }
  return known.policy;
}

/** `[toHashPolicy(hash)]` (a default route's list), one per setting, frozen; undefined without a policy. */
export function hashPolicyList(hash: ConsistentHashLB | undefined): HashPolicy[] | undefined {
  const policy = toHashPolicy(hash);
  if (!policy || !hash) return undefined;
  const known = policies.get(hash) as { list?: HashPolicy[] };
  return (known.list ??= deepFreeze([policy]));
}

const policies = new WeakMap<ConsistentHashLB, { readonly policy: HashPolicy | undefined; list?: HashPolicy[] }>();

function hashPolicy(hash: ConsistentHashLB): HashPolicy | undefined {
  if (hash.httpHeaderName !== undefined) return { header: { header_name: hash.httpHeaderName } };
  if (hash.httpCookie) {
    const c = hash.httpCookie;
    return {
      cookie: {
        name: c.name,
        ...(c.ttlMs !== undefined ? { ttl: durationMs(c.ttlMs) } : {}),
        ...(c.path ? { path: c.path } : {}),
        ...(c.attributes?.length
          ? { attributes: c.attributes.map((a) => ({ name: a.name, ...(a.value ? { value: a.value } : {}) })) }
          : {}),
      },
    };
  }
  if (hash.useSourceIp) return { connection_properties: { source_ip: true } };
  if (hash.httpQueryParameterName !== undefined) return { query_parameter: { name: hash.httpQueryParameterName } };
  return undefined;
}
