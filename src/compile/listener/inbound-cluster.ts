/**
 * `inbound|<targetPort>||`: the cluster through which the sidecar hands inbound traffic to the
 * application (istiod: buildInboundCluster). With the default PASSTHROUGH inbound policy it is an
 * ORIGINAL_DST cluster, so Envoy connects to the address the client dialled, from 127.0.0.6 so
 * that iptables does not capture the connection back into the sidecar; a `loopback` endpoint
 * (MeshConfig `inboundTrafficPolicy: LOCALHOST`, a Sidecar ingress `defaultEndpoint`) makes it STATIC.
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
import type { Sidecar } from '../../model/sidecar.js';
import { envoy, type Cluster, type Metadata } from '../../xds/proto.js';
import { NO_LB_CONFIG } from '../cluster/shared-parts.js';
import { deepFreeze } from '../intern.js';
import {
  applyConnectionPool,
  applyPortProtocol,
  finishDraft,
  policyForPort,
  type ClusterDraft,
} from '../traffic-policy.js';
import type { InboundEndpoint, InboundPort } from './inbound-ports.js';

const ClusterMsg = envoy.config.cluster.v3.Cluster;
/** istiod disables cleanup of inbound original-dst hosts with the largest Duration Go can hold. */
const NEVER_CLEAN_UP = deepFreeze({ seconds: 9223372035 });
/** iptables lets connections from this source through to the application. */
const PASSTHROUGH_BIND = deepFreeze({ source_address: { address: '127.0.0.6', port_value: 0 } });

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

/**
 * The connection pool of an inbound cluster (istiod's buildInboundCluster): a Sidecar's, for the
 * ingress port or else for every port, over the DestinationRule's for the service port.
 */
function inboundPool(
  sidecar: Sidecar | undefined,
  clusterPort: number,
  fromRule: ConnectionPoolSettings | undefined,
): ConnectionPoolSettings | undefined {
  const spec = sidecar?.spec;
  const ingress = spec?.ingress?.find((l) => l.port.number === clusterPort && l.connectionPool);
  return ingress?.connectionPool ?? spec?.inboundConnectionPool ?? fromRule;
}

export function buildInboundCluster(ctx: CompileContext, p: InboundPort, sidecar?: Sidecar): Cluster {
  const rule = ctx.destinationRules.lookup(p.service.hostname);
  const policy = rule?.spec.trafficPolicy;
  const portPolicy = policyForPort(policy, p.port.port);
  // istiod's applyDefaultTrafficPolicy under the rule's, the Sidecar's over both.
  const pool = inboundPool(
    sidecar,
    p.targetPort,
    portPolicy?.connectionPool ?? ctx.mesh.defaultTrafficPolicy?.connectionPool,
  );
  const source = rule?.sources[0];

  const name = inboundClusterName(p.targetPort);
  const metadata = inboundMetadata(p, policy ? source : undefined);
  // Field order as istiod's clusters list them (and as before): the JSON forms show it. Built by
  // assignment rather than spreads, so no intermediate objects are made.
  const endpoint = p.endpoint;
  // connect_timeout is set by applyConnectionPool below; named here to keep its place in the order.
  const cluster: Cluster = { name, connect_timeout: undefined };
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
  // istiod's setUpstreamProtocol (IsHTTP2: HTTP2, gRPC and gRPC-Web talk HTTP/2 to the application;
  // a port whose protocol is sniffed takes the client's), then its inbound applyConnectionPool:
  // server-side limits too, so the receiver has the capacity the clients are allowed to use.
  const draft: ClusterDraft = { cluster };
  applyPortProtocol(draft, sniffedInbound(p) ? 'Unsupported' : p.port.protocol);
  applyConnectionPool(draft, pool, ctx.mesh, portPolicy?.retryBudget);
  cluster.metadata = metadata;
  // istiod skips the passthrough bind address for loopback endpoints only.
  if (!isStatic || endpoint.kind === 'pipe') cluster.upstream_bind_config = PASSTHROUGH_BIND;
  return finishDraft(draft);
}

/** A port the inbound chains sniff (inbound-chains.ts optionsFor): named for no protocol. */
const sniffedInbound = (p: InboundPort): boolean =>
  p.port.protocol === 'Unsupported' || p.port.protocolDefaulted === true;
