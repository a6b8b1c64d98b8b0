/**
 * `inbound|<targetPort>||`: the cluster through which the sidecar hands inbound traffic to the
 * application (istiod: buildInboundCluster with the default PASSTHROUGH inbound policy). It is an
 * ORIGINAL_DST cluster, so Envoy connects to the address the client dialled, from 127.0.0.6 so
 * that iptables does not capture the connection back into the sidecar.
 */
import type { CompileContext } from '../context.js';
import {
  istioConfigMetadata,
  istioMetadata,
  ruleClusterMetadata,
  serviceMetadata,
  serviceTelemetry,
} from '../metadata.js';
import { inboundClusterName } from '../names.js';
import type { ConnectionPoolSettings, IstioObject } from '../../model/istio.js';
import { envoy, packAny, type Cluster, type Metadata } from '../../xds/proto.js';
import { TypeName } from '../../xds/type-urls.js';
import { NO_LB_CONFIG, shareClusterParts } from '../cluster/shared-parts.js';
import { deepFreeze, sharedDurationMs } from '../intern.js';
import { u32 } from './filters.js';
import { isGrpcFamily } from './inbound-chains.js';
import type { InboundEndpoint, InboundPort } from './inbound-ports.js';

const ClusterMsg = envoy.config.cluster.v3.Cluster;
const MAX_U32 = 4294967295;
/** istiod disables cleanup of inbound original-dst hosts with the largest Duration Go can hold. */
const NEVER_CLEAN_UP = deepFreeze({ seconds: 9223372035 });
/** iptables lets connections from this source through to the application. */
const PASSTHROUGH_BIND = deepFreeze({ source_address: { address: '127.0.0.6', port_value: 0 } });
/** Circuit breakers without a DestinationRule connection pool: istiod's maximums. */
const NO_LIMITS = deepFreeze({ thresholds: [thresholds(undefined)] });
/** HTTP/2 towards the application: one packed copy for every such cluster. */
const HTTP2_OPTIONS = {
  [TypeName.HttpProtocolOptions]: packAny(TypeName.HttpProtocolOptions, {
    explicit_http_config: { http2_protocol_options: {} },
  }),
};

const endpointAddress = (
  e: Exclude<InboundEndpoint, { kind: 'pod-port' }>,
): envoy.config.core.v3.Address.$Properties =>
  e.kind === 'pipe' ? { pipe: { path: e.path } } : { socket_address: { address: e.address, port_value: e.port } };

const staticAssignment = (
  name: string,
  e: Exclude<InboundEndpoint, { kind: 'pod-port' }>,
): NonNullable<Cluster['load_assignment']> => ({
  cluster_name: name,
  endpoints: [{ lb_endpoints: [{ endpoint: { address: endpointAddress(e) } }] }],
});

/** The inbound cluster's `istio` metadata: its services, and the DestinationRule whose settings it takes (`source`). */
function inboundMetadata(p: InboundPort, source: IstioObject | undefined): Metadata {
  if (p.services.length === 1)
    return source ? ruleClusterMetadata(p.service, source, '', false) : serviceMetadata(p.service);
  const services = { services: p.services.map(serviceTelemetry) };
  return source ? istioConfigMetadata(source, services) : istioMetadata(services);
}

export function buildInboundCluster(ctx: CompileContext, p: InboundPort): Cluster {
  const rule = ctx.destinationRules.lookup(p.service.hostname);
  const policy = rule?.spec.trafficPolicy;
  const pool =
    policy?.portLevelSettings?.find((s) => s.port?.number === p.port.port)?.connectionPool ?? policy?.connectionPool;
  const source = rule?.sources[0];

  const name = inboundClusterName(p.targetPort);
  const connectTimeout = sharedDurationMs(pool?.tcp?.connectTimeoutMs ?? ctx.mesh.connectTimeoutMs);
  const circuitBreakers = pool ? { thresholds: [thresholds(pool)] } : NO_LIMITS;
  const metadata = inboundMetadata(p, policy ? source : undefined);
  // Field order as istiod's clusters list them (and as before): the JSON forms show it. Built by
  // assignment rather than spreads, so no intermediate objects are made.
  const endpoint = p.endpoint;
  const cluster: Cluster = { name, connect_timeout: connectTimeout };
  const isStatic = endpoint !== undefined && endpoint.kind !== 'pod-port';
  if (isStatic) {
    cluster.type = ClusterMsg.DiscoveryType.STATIC;
    cluster.load_assignment = staticAssignment(name, endpoint);
  } else {
    cluster.type = ClusterMsg.DiscoveryType.ORIGINAL_DST;
    cluster.lb_policy = ClusterMsg.LbPolicy.CLUSTER_PROVIDED;
    if (endpoint?.kind === 'pod-port')
      cluster.original_dst_lb_config = { upstream_port_override: { value: endpoint.port } };
    cluster.cleanup_interval = NEVER_CLEAN_UP;
  }
  cluster.common_lb_config = NO_LB_CONFIG;
  // Server-side limits too, so the receiver has the capacity the clients are allowed to use.
  cluster.circuit_breakers = circuitBreakers;
  cluster.metadata = metadata;
  // istiod skips the passthrough bind address for loopback endpoints only.
  if (!isStatic || endpoint.kind === 'pipe') cluster.upstream_bind_config = PASSTHROUGH_BIND;
  // istiod's IsHTTP2: HTTP2, gRPC and gRPC-Web ports talk HTTP/2 to the application.
  if (p.port.protocol === 'HTTP2' || isGrpcFamily(p.port.protocol)) {
    cluster.typed_extension_protocol_options = HTTP2_OPTIONS;
  }
  return shareClusterParts(cluster);
}

function thresholds(
  pool: ConnectionPoolSettings | undefined,
): envoy.config.cluster.v3.CircuitBreakers.Thresholds.$Properties {
  const positive = (n: number | undefined): number | undefined => (n !== undefined && n > 0 ? n : undefined);
  return {
    max_connections: u32(positive(pool?.tcp?.maxConnections) ?? MAX_U32),
    max_pending_requests: u32(positive(pool?.http?.http1MaxPendingRequests) ?? MAX_U32),
    max_requests: u32(positive(pool?.http?.http2MaxRequests) ?? MAX_U32),
    max_retries: u32(positive(pool?.http?.maxRetries) ?? MAX_U32),
    track_remaining: true,
  };
}
