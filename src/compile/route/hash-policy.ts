/**
 * Consistent-hash load balancing needs a route hash policy. Which ConsistentHashLB applies to a
 * destination follows istiod (HashForHTTPDestination): subset port-level, then subset, then
 * port-level, then the rule's top-level setting.
 */
import type { ConsistentHashLB, Destination, PortTrafficPolicy, TrafficPolicy } from '../../model/istio.js';
import { durationMs, type envoy } from '../../xds/proto.js';
import type { ResolvedDestinationRule } from '../context.js';

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

export function toHashPolicy(hash: ConsistentHashLB | undefined): HashPolicy | undefined {
  if (!hash) return undefined;
  if (hash.httpHeaderName !== undefined) return { header: { header_name: hash.httpHeaderName } };
  if (hash.httpCookie) {
    const c = hash.httpCookie;
    return {
      cookie: {
        name: c.name,
        ...(c.ttlMs !== undefined ? { ttl: durationMs(c.ttlMs) } : {}),
        ...(c.path ? { path: c.path } : {}),
      },
    };
  }
  if (hash.useSourceIp) return { connection_properties: { source_ip: true } };
  if (hash.httpQueryParameterName !== undefined) return { query_parameter: { name: hash.httpQueryParameterName } };
  return undefined;
}
