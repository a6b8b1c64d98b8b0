/**
 * The clusters every sidecar has whatever the mesh holds, with istiod's settings
 * (cluster_builder.go buildBlackHoleCluster / buildDefaultPassthroughCluster / buildInboundPassthroughCluster).
 */
import type { MeshConfig } from '../../model/mesh-config.js';
import { durationMs, envoy, packAny, type Cluster } from '../../xds/proto.js';
import { TypeName } from '../../xds/type-urls.js';
import { BLACKHOLE_CLUSTER, INBOUND_PASSTHROUGH_CLUSTER, PASSTHROUGH_CLUSTER } from '../names.js';
import { DEFAULT_CIRCUIT_BREAKERS } from '../traffic-policy.js';

const { DiscoveryType, LbPolicy } = envoy.config.cluster.v3.Cluster;

/** Source address of inbound passthrough connections; iptables recognises it and does not loop them back. */
export const INBOUND_PASSTHROUGH_BIND_IPV4 = '127.0.0.6';

/** Passthrough speaks whatever the app spoke, and drops idle upstream connections after 5 minutes. */
const PASSTHROUGH_HTTP_OPTIONS = packAny(TypeName.HttpProtocolOptions, {
  common_http_protocol_options: { idle_timeout: durationMs(300_000) },
  use_downstream_protocol_config: { http_protocol_options: {}, http2_protocol_options: {} },
});

/** Traffic routed nowhere (unknown destination under REGISTRY_ONLY, missing route targets). */
export function blackHoleCluster(mesh: MeshConfig): Cluster {
  return {
    name: BLACKHOLE_CLUSTER,
    type: DiscoveryType.STATIC,
    connect_timeout: durationMs(mesh.connectTimeoutMs),
    lb_policy: LbPolicy.ROUND_ROBIN,
    alt_stat_name: `${BLACKHOLE_CLUSTER};`,
  };
}

/** Outbound traffic to destinations outside the registry (ALLOW_ANY): connect to the original destination. */
export function passthroughCluster(mesh: MeshConfig): Cluster {
  return {
    name: PASSTHROUGH_CLUSTER,
    type: DiscoveryType.ORIGINAL_DST,
    connect_timeout: durationMs(mesh.connectTimeoutMs),
    lb_policy: LbPolicy.CLUSTER_PROVIDED,
    circuit_breakers: DEFAULT_CIRCUIT_BREAKERS,
    typed_extension_protocol_options: { [TypeName.HttpProtocolOptions]: PASSTHROUGH_HTTP_OPTIONS },
    alt_stat_name: `${PASSTHROUGH_CLUSTER};`,
  };
}

/** Inbound traffic to ports no service declares. istiod derives it from the passthrough cluster, alt_stat_name included. */
export function inboundPassthroughCluster(mesh: MeshConfig): Cluster {
  return {
    ...passthroughCluster(mesh),
    name: INBOUND_PASSTHROUGH_CLUSTER,
    upstream_bind_config: { source_address: { address: INBOUND_PASSTHROUGH_BIND_IPV4, port_value: 0 } },
  };
}
