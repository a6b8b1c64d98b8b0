/**
 * Envoy's dynamic forward proxy for ServiceEntries with resolution `DYNAMIC_DNS` (istiod's
 * buildDFPCluster, BuildSidecarOutboundDynamicForwardProxyFilter and buildSNIDFPFilter): the
 * proxy resolves the Host header (HTTP) or the SNI (TLS) of each request itself. The cluster, the
 * HTTP filter and the SNI filter of one host name the same DNS cache, `<host>_dfp_dns_cache`
 * (istiod's BuildDNSCacheName), with the same lookup family: Envoy shares a cache by name, and a
 * filter filling another cache than its cluster's leaves the cluster without the host.
 */
import { envoy, packAny, type Any } from '../xds/proto.js';
import { TypeName } from '../xds/type-urls.js';
import type { MeshService } from '../model/service-model.js';

const { DnsLookupFamily } = envoy.config.cluster.v3.Cluster;

/** Envoy's extension names (istiod's wellknown). */
export const DFP_CLUSTER_TYPE = 'envoy.clusters.dynamic_forward_proxy';
export const DFP_HTTP_FILTER = 'envoy.filters.http.dynamic_forward_proxy';
export const SNI_DFP_FILTER = 'envoy.filters.network.sni_dynamic_forward_proxy';

/** A wildcard ServiceEntry host with resolution DYNAMIC_DNS (istiod: IsWildCarded && DynamicDNS). */
export const isDynamicDns = (service: MeshService): boolean =>
  service.serviceEntry?.resolution === 'DYNAMIC_DNS' && service.hostname.startsWith('*');

/** istiod's BuildDNSCacheName. */
export const dnsCacheName = (host: string): string => `${host}_dfp_dns_cache`;

/** The cache config every part of one host names; IPv4, as istiod's SelectDNSLookupFamily picks for IPv4 proxies. */
function dnsCacheConfig(host: string): envoy.extensions.common.dynamic_forward_proxy.v3.DnsCacheConfig.$Properties {
  return { name: dnsCacheName(host), dns_lookup_family: DnsLookupFamily.V4_ONLY };
}

/** `cluster_type` of a DFP cluster; `allowInsecure`: Envoy's allow_insecure_cluster_options. */
export function dfpClusterType(
  host: string,
  allowInsecure: boolean,
): envoy.config.cluster.v3.Cluster.CustomClusterType.$Properties {
  const config: envoy.extensions.clusters.dynamic_forward_proxy.v3.ClusterConfig.$Properties = {
    dns_cache_config: dnsCacheConfig(host),
  };
  if (allowInsecure) config.allow_insecure_cluster_options = true;
  return { name: DFP_CLUSTER_TYPE, typed_config: packAny(TypeName.DfpClusterConfig, config) };
}

/** The HCM's DFP filter of a host: it resolves the Host header before the router picks the host's DFP cluster. */
export function dfpHttpFilter(host: string): { name: string; typed_config: Any } {
  return {
    name: DFP_HTTP_FILTER,
    typed_config: packAny(TypeName.DfpHttpFilterConfig, { dns_cache_config: dnsCacheConfig(host) }),
  };
}

/** The SNI DFP network filter of a TLS port: resolves the ClientHello's server name, upstream port `port`. */
export function sniDfpFilter(host: string, port: number): { name: string; typed_config: Any } {
  return {
    name: SNI_DFP_FILTER,
    typed_config: packAny(TypeName.SniDfpFilterConfig, { dns_cache_config: dnsCacheConfig(host), port_value: port }),
  };
}
