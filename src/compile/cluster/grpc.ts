/**
 * Clusters for proxyless gRPC (@grpc/grpc-js-xds), after istiod's grpcgen/cds.go, limited to what
 * grpc-js-xds accepts: EDS clusters only (no ORIGINAL_DST / STRICT_DNS / fixed clusters), no
 * transport sockets, lb_policy ROUND_ROBIN (the default, left unset) or RING_HASH, circuit
 * breaking on max_requests only, outlier detection (grpc-js-xds implements it).
 */
import { envoy, type Cluster } from '../../xds/proto.js';
import { sharedOutlierDetection } from '../traffic-policy.js';
import type { PlannedCluster } from './plan.js';
import { shareClusterParts } from './shared-parts.js';
import { deepFreeze } from '../intern.js';

const { DiscoveryType, LbPolicy } = envoy.config.cluster.v3.Cluster;

/** istiod's proxyless EDS source: plain ADS. */
const GRPC_EDS_CONFIG: envoy.config.core.v3.ConfigSource.$Properties = deepFreeze({ ads: {} });

export function grpcCluster(plan: PlannedCluster): Cluster | undefined {
  if (plan.discovery !== 'EDS') return undefined;
  const c: Cluster = {
    name: plan.name,
    alt_stat_name: plan.altStatName,
    type: DiscoveryType.EDS,
    eds_cluster_config: { service_name: plan.name, eds_config: GRPC_EDS_CONFIG },
  };
  const policy = plan.policy;
  const hash = policy?.loadBalancer?.consistentHash;
  if (hash) {
    // grpc-js-xds has no Maglev: a consistent hash is always a ring.
    c.lb_policy = LbPolicy.RING_HASH;
    const min = hash.ringHash?.minimumRingSize || hash.minimumRingSize;
    if (min) c.ring_hash_lb_config = { minimum_ring_size: { value: min } };
  }
  const maxRequests = policy?.connectionPool?.http?.http2MaxRequests;
  if (maxRequests && maxRequests > 0) c.circuit_breakers = { thresholds: [{ max_requests: { value: maxRequests } }] };
  if (policy?.outlierDetection) c.outlier_detection = sharedOutlierDetection(policy.outlierDetection);
  return shareClusterParts(c);
}
