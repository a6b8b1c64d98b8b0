/**
 * Istio's resource naming conventions. Users' dashboards, alerts and habits depend on these, so
 * they follow istiod exactly (pilot/pkg/model: BuildSubsetKey, BuildInboundSubsetKey, …).
 */
import { serviceHostname } from '../model/build.js';
import { flat } from '../model/flat-string.js';
import type { MeshConfig } from '../model/mesh-config.js';
import type { ServiceModel } from '../model/service-model.js';

export const BLACKHOLE_CLUSTER = 'BlackHoleCluster';
export const PASSTHROUGH_CLUSTER = 'PassthroughCluster';
export const INBOUND_PASSTHROUGH_CLUSTER = 'InboundPassthroughCluster';
export const VIRTUAL_OUTBOUND = 'virtualOutbound';
export const VIRTUAL_INBOUND = 'virtualInbound';
export const VIRTUAL_OUTBOUND_PORT = 15001;
export const VIRTUAL_INBOUND_PORT = 15006;
/** The ports of `virtualOutbound` and `virtualInbound`: MeshConfig `proxyListenPort`, `proxyInboundListenPort`. */
export const virtualOutboundPort = (mesh: MeshConfig): number => mesh.proxyListenPort ?? VIRTUAL_OUTBOUND_PORT;
export const virtualInboundPort = (mesh: MeshConfig): number => mesh.proxyInboundListenPort ?? VIRTUAL_INBOUND_PORT;

/** `outbound|9080|v1|reviews.default.svc.cluster.local` (subset may be empty). */
export const outboundClusterName = (port: number, subset: string, hostname: string): string =>
  flat(`outbound|${port}|${subset}|${hostname}`);

/** `inbound|9080||` (istiod no longer puts the host in inbound names). */
export const inboundClusterName = (targetPort: number): string => flat(`inbound|${targetPort}||`);

/** SNI istiod sets for ISTIO_MUTUAL: `outbound_.9080_.v1_.reviews.default.svc.cluster.local`. */
export const istioMtlsSni = (port: number, subset: string, hostname: string): string =>
  flat(`outbound_.${port}_.${subset}_.${hostname}`);

/** Outbound HTTP listeners are per port: `0.0.0.0_9080`; their RDS route config is `"9080"`. */
export const wildcardListenerName = (port: number): string => flat(`0.0.0.0_${port}`);
export const routeConfigName = (port: number): string => String(port);

/** Outbound TCP listeners are per service IP and port: `10.96.10.3_3306`. */
export const ipListenerName = (ip: string, port: number): string => flat(`${ip}_${port}`);

/** Virtual host name for a service port: `reviews.default.svc.cluster.local:9080`. */
export const virtualHostName = (hostname: string, port: number): string => flat(`${hostname}:${port}`);

/** Proxyless gRPC listener name (what `xds:///host:port` asks for). */
export const proxylessListenerName = (hostname: string, port: number): string => flat(`${hostname}:${port}`);

/** Fully qualified service hostname (the model's: services are named by it). */
export { serviceHostname };

/**
 * Resolves a host as written in an Istio object (`reviews`, `reviews.default`,
 * `reviews.default.svc.cluster.local`, `*.example.com`) relative to the object's namespace.
 * Short names are expanded as istiod does (ResolveShortnameToFQDN); `known` (hostname → service)
 * keeps a two-label host that names a service as it is.
 */
export function resolveHost(
  host: string,
  namespace: string,
  domainSuffix: string,
  known?: { has(hostname: string): boolean },
): string {
  if (host.startsWith('*')) return host;
  if (host.includes('.')) {
    const parts = host.split('.');
    // `name.namespace` → FQDN, unless it is itself a service's host (a ServiceEntry for `httpbin.org`);
    // anything longer is taken as already qualified.
    if (parts.length === 2) return known?.has(host.toLowerCase()) ? host : `${host}.svc.${domainSuffix}`;
    if (parts.length === 3 && parts[2] === 'svc') return `${host}.${domainSuffix}`;
    return host;
  }
  return serviceHostname(host, namespace, domainSuffix);
}

/** Whether a (possibly wildcard) Istio host matches a concrete hostname. */
export function hostMatches(pattern: string, hostname: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return hostname.endsWith(pattern.slice(1));
  return pattern === hostname;
}

export const isKnownHost = (model: ServiceModel, hostname: string): boolean => model.byHostname.has(hostname);
