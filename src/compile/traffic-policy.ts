/**
 * DestinationRule traffic policies → Cluster fields, following istiod
 * (cluster_traffic_policy.go, util.MergeSubsetTrafficPolicy):
 *
 * - Which policy applies: a `portLevelSettings` entry for the port REPLACES the top-level policy
 *   (its unset parts fall back to defaults, not to the top level). A subset's policy is resolved
 *   for the port the same way and then overrides the result part by part (connectionPool,
 *   outlierDetection, loadBalancer, tls); when the subset has a port-level entry, all four parts
 *   come from it.
 * - Each part is translated as istiod does, including its quirks (zero means "unset").
 */
import type {
  ConnectionPoolSettings,
  LoadBalancerSettings,
  OutlierDetection,
  PortTrafficPolicy,
  RetryBudget,
  TcpKeepalive,
  TrafficPolicy,
} from '../model/istio.js';
import type { MeshConfig, MeshDefaultTrafficPolicy } from '../model/mesh-config.js';
import type { Protocol } from '../model/service-model.js';
import type { TrafficDistribution } from '../model/traffic-distribution.js';
import { effectiveLbSetting } from './locality-lb.js';
import { durationMs, envoy, packAny, type Cluster } from '../xds/proto.js';
import { shareClusterParts, sharedPart } from './cluster/shared-parts.js';
import { deepFreeze, InternTable, sharedDurationMs } from './intern.js';
import { TypeName } from '../xds/type-urls.js';

type Thresholds = envoy.config.cluster.v3.CircuitBreakers.Thresholds.$Properties;
type UpstreamHttpOptions = envoy.extensions.upstreams.http.v3.HttpProtocolOptions.$Properties;

const LbPolicy = envoy.config.cluster.v3.Cluster.LbPolicy;
const DiscoveryType = envoy.config.cluster.v3.Cluster.DiscoveryType;
const MAX_UINT32 = 4294967295;

/** The four parts of a policy that apply to one cluster (port-level and subset already resolved). */
export interface EffectivePolicy {
  readonly connectionPool?: ConnectionPoolSettings;
  readonly outlierDetection?: OutlierDetection;
  readonly loadBalancer?: LoadBalancerSettings;
  readonly tls?: TrafficPolicy['tls'];
  /** Only from a rule's or subset's policy: a port-level one has none (istiod drops it there). */
  readonly retryBudget?: RetryBudget;
  /** The same. */
  readonly proxyProtocol?: TrafficPolicy['proxyProtocol'];
}

function portLevel(
  policy: TrafficPolicy | undefined,
  port: number,
): { policy: EffectivePolicy | undefined; portLevel: boolean } {
  if (!policy) return { policy: undefined, portLevel: false };
  const entry: PortTrafficPolicy | undefined = policy.portLevelSettings?.find((p) => p.port?.number === port);
  if (!entry) return { policy, portLevel: false };
  const { port: _ignored, ...rest } = entry;
  return { policy: rest, portLevel: true };
}

/** The policy of the main cluster `outbound|port||host`. */
export function policyForPort(policy: TrafficPolicy | undefined, port: number): EffectivePolicy | undefined {
  return portLevel(policy, port).policy;
}

/**
 * istiod's applyDefaultTrafficPolicy: the mesh config's `defaultTrafficPolicy` blocks where the
 * (port-level resolved) policy leaves them unset, whole blocks; the same policy object without one.
 */
export function withMeshDefaults(
  policy: EffectivePolicy | undefined,
  defaults: MeshDefaultTrafficPolicy | undefined,
): EffectivePolicy | undefined {
  if (!defaults) return policy;
  const pool = policy?.connectionPool === undefined ? defaults.connectionPool : undefined;
  const outlier = policy?.outlierDetection === undefined ? defaults.outlierDetection : undefined;
  if (!pool && !outlier) return policy;
  return {
    ...policy,
    ...(pool ? { connectionPool: pool } : {}),
    ...(outlier ? { outlierDetection: outlier } : {}),
  };
}

/**
 * The policy of a subset cluster: subset (port-level resolved) over the rule's policy for the port
 * (with the mesh's defaults under it when given, as istiod merges over its defaulted policy).
 */
export function policyForSubset(
  top: TrafficPolicy | undefined,
  subset: TrafficPolicy | undefined,
  port: number,
  defaults?: MeshDefaultTrafficPolicy,
): EffectivePolicy | undefined {
  const base = withMeshDefaults(portLevel(top, port).policy, defaults);
  if (!subset) return base;
  const { policy: sub, portLevel: hasPortLevel } = portLevel(subset, port);
  if (!base) return sub;
  const s = sub ?? {};
  const pick = <K extends keyof EffectivePolicy>(k: K): EffectivePolicy[K] =>
    s[k] !== undefined || hasPortLevel ? s[k] : base[k];
  return {
    connectionPool: pick('connectionPool'),
    outlierDetection: pick('outlierDetection'),
    loadBalancer: pick('loadBalancer'),
    tls: pick('tls'),
    // istiod's MergeTrafficPolicy: the subset's when it has one, port level or not.
    retryBudget: s.retryBudget ?? base.retryBudget,
    proxyProtocol: s.proxyProtocol ?? base.proxyProtocol,
  };
}

/** istiod's default thresholds: effectively no circuit breaking. Shared, never mutated. */
export const DEFAULT_THRESHOLDS: Thresholds = deepFreeze({
  max_connections: { value: MAX_UINT32 },
  max_pending_requests: { value: MAX_UINT32 },
  max_requests: { value: MAX_UINT32 },
  max_retries: { value: MAX_UINT32 },
  track_remaining: true,
});
export const DEFAULT_CIRCUIT_BREAKERS: Cluster['circuit_breakers'] = deepFreeze({
  thresholds: [DEFAULT_THRESHOLDS],
});

/**
 * A cluster under construction: the Cluster itself plus the upstream HttpProtocolOptions, which
 * are packed into `typed_extension_protocol_options` at the end (istiod's clusterWrapper).
 */
export interface ClusterDraft {
  cluster: Cluster;
  http?: UpstreamHttpOptions;
}

function setUpstreamProtocol(http: UpstreamHttpOptions, kind: 'h2' | 'downstream'): void {
  delete http.explicit_http_config;
  delete http.use_downstream_protocol_config;
  if (kind === 'h2') http.explicit_http_config = { http2_protocol_options: {} };
  else http.use_downstream_protocol_config = { http_protocol_options: {}, http2_protocol_options: {} };
}

const hasUpstreamProtocol = (http: UpstreamHttpOptions): boolean =>
  !!(http.explicit_http_config || http.use_downstream_protocol_config);

/** HTTP/2 for istiod's IsHTTP2 ports (HTTP2, gRPC, gRPC-Web); the client's protocol for ports whose protocol is sniffed. */
export function applyPortProtocol(draft: ClusterDraft, protocol: Protocol): void {
  if (protocol === 'HTTP2' || protocol === 'GRPC' || protocol === 'GRPC-Web')
    setUpstreamProtocol((draft.http ??= {}), 'h2');
  else if (protocol === 'Unsupported') setUpstreamProtocol((draft.http ??= {}), 'downstream');
}

/**
 * istiod's shouldH2Upgrade: a rule's `useClientProtocol` never upgrades, its `UPGRADE` always (the
 * user says the port is HTTP), its `DO_NOT_UPGRADE` never; otherwise the mesh's `h2UpgradePolicy`
 * upgrades HTTP ports only (so sniffed ports keep the client's protocol).
 */
export function applyH2Upgrade(
  draft: ClusterDraft,
  pool: ConnectionPoolSettings | undefined,
  protocol: Protocol,
  meshUpgrade: boolean,
): void {
  const http = pool?.http;
  if (http?.useClientProtocol || http?.h2UpgradePolicy === 'DO_NOT_UPGRADE') return;
  const upgrade = http?.h2UpgradePolicy === 'UPGRADE' || (meshUpgrade && isHttpPort(protocol));
  if (!upgrade) return;
  const opts = (draft.http ??= {});
  if (!hasUpstreamProtocol(opts)) setUpstreamProtocol(opts, 'h2');
}

/** istiod's Instance.IsHTTP. */
const isHttpPort = (p: Protocol): boolean => p === 'HTTP' || p === 'HTTP2' || p === 'GRPC' || p === 'GRPC-Web';

/** What the mesh config gives every cluster's connection pool. */
export interface MeshPoolDefaults {
  readonly connectTimeoutMs: number;
  readonly tcpKeepalive?: TcpKeepalive;
}

export function applyConnectionPool(
  draft: ClusterDraft,
  pool: ConnectionPoolSettings | undefined,
  mesh: MeshPoolDefaults,
  retryBudget?: RetryBudget,
): void {
  const c = draft.cluster;
  c.connect_timeout = sharedDurationMs(mesh.connectTimeoutMs);
  applyPool(draft, pool);
  applyTcpKeepalive(c, mesh.tcpKeepalive, pool?.tcp?.tcpKeepalive);
  if (retryBudget) {
    // istiod's applyRetryBudget: 20 % and 3 unless set, on the pool's thresholds.
    const thresholds = c.circuit_breakers?.thresholds?.[0] ?? DEFAULT_THRESHOLDS;
    c.circuit_breakers = {
      thresholds: [
        {
          ...thresholds,
          retry_budget: {
            budget_percent: { value: retryBudget.percent ?? 20 },
            min_retry_concurrency: { value: retryBudget.minRetryConcurrency || 3 },
          },
        },
      ],
    };
  }
}

function applyPool(draft: ClusterDraft, pool: ConnectionPoolSettings | undefined): void {
  const c = draft.cluster;
  if (!pool) {
    c.circuit_breakers = DEFAULT_CIRCUIT_BREAKERS;
    return;
  }
  const { http, tcp } = pool;
  let idleTimeoutMs: number | undefined;
  let maxRequestsPerConnection = 0;
  let maxConcurrentStreams = 0;
  let maxConnectionDurationMs: number | undefined;
  const keepAlive = http?.http2KeepAlive;
  if (http) {
    idleTimeoutMs = http.idleTimeoutMs;
    maxRequestsPerConnection = http.maxRequestsPerConnection ?? 0;
    maxConcurrentStreams = http.maxConcurrentStreams ?? 0;
  }
  if (tcp) {
    if (tcp.connectTimeoutMs !== undefined) c.connect_timeout = sharedDurationMs(tcp.connectTimeoutMs);
    maxConnectionDurationMs = tcp.maxConnectionDurationMs;
    idleTimeoutMs ??= tcp.idleTimeoutMs;
  }
  c.circuit_breakers = circuitBreakersOf(pool);

  if (
    maxConnectionDurationMs !== undefined ||
    idleTimeoutMs !== undefined ||
    maxRequestsPerConnection > 0 ||
    maxConcurrentStreams > 0 ||
    keepAlive !== undefined
  ) {
    const opts = (draft.http ??= {});
    const common: envoy.config.core.v3.HttpProtocolOptions.$Properties = {
      ...(opts.common_http_protocol_options ?? {}),
    };
    if (idleTimeoutMs !== undefined) common.idle_timeout = durationMs(idleTimeoutMs);
    if (maxRequestsPerConnection > 0) common.max_requests_per_connection = { value: maxRequestsPerConnection };
    if (maxConnectionDurationMs !== undefined) common.max_connection_duration = durationMs(maxConnectionDurationMs);
    opts.common_http_protocol_options = common;
    const h2 = opts.explicit_http_config?.http2_protocol_options;
    if (h2 && maxConcurrentStreams > 0) h2.max_concurrent_streams = { value: maxConcurrentStreams };
    // HTTP/2 PINGs only where the upstream speaks HTTP/2, as istiod.
    if (h2 && keepAlive)
      h2.connection_keepalive = {
        interval: durationMs(keepAlive.intervalMs),
        timeout: durationMs(keepAlive.timeoutMs),
      };
  }
  if (http?.useClientProtocol) setUpstreamProtocol((draft.http ??= {}), 'downstream');
}

/**
 * istiod's applyTCPKeepalive: the mesh's keepalive, then each attribute the rule's pool sets over
 * it; an empty one still turns SO_KEEPALIVE on with the OS defaults.
 */
function applyTcpKeepalive(c: Cluster, mesh: TcpKeepalive | undefined, rule: TcpKeepalive | undefined): void {
  if (!mesh && !rule) return;
  const keepalive: envoy.config.core.v3.TcpKeepalive.$Properties = {};
  for (const ka of [mesh, rule]) {
    if (!ka) continue;
    if (ka.probes && ka.probes > 0) keepalive.keepalive_probes = { value: ka.probes };
    // Envoy takes whole seconds.
    if (ka.timeMs !== undefined) keepalive.keepalive_time = { value: Math.floor(ka.timeMs / 1000) };
    if (ka.intervalMs !== undefined) keepalive.keepalive_interval = { value: Math.floor(ka.intervalMs / 1000) };
  }
  c.upstream_connection_options = { tcp_keepalive: keepalive };
}

/**
 * The shared circuit breakers of a pool (`thresholds` made from it): found once per pool object,
 * not keyed by their JSON per cluster (every cluster of a rule's port and subsets has the same pool).
 */
const breakersOf = new WeakMap<ConnectionPoolSettings, NonNullable<Cluster['circuit_breakers']>>();

function circuitBreakersOf(pool: ConnectionPoolSettings): NonNullable<Cluster['circuit_breakers']> {
  let breakers = breakersOf.get(pool);
  if (!breakers)
    breakersOf.set(pool, (breakers = sharedPart('circuit_breakers', { thresholds: [thresholdsOf(pool)] })));
  return breakers;
}

/** istiod's thresholds for a pool: its defaults, with the limits the pool sets (0 means "unset" there). */
function thresholdsOf({ http, tcp }: ConnectionPoolSettings): Thresholds {
  const t: Thresholds = { ...DEFAULT_THRESHOLDS };
  if (http?.http2MaxRequests && http.http2MaxRequests > 0) t.max_requests = { value: http.http2MaxRequests };
  if (http?.http1MaxPendingRequests && http.http1MaxPendingRequests > 0)
    t.max_pending_requests = { value: http.http1MaxPendingRequests };
  if (http?.maxRetries && http.maxRetries > 0) t.max_retries = { value: http.maxRetries };
  if (tcp?.maxConnections && tcp.maxConnections > 0) t.max_connections = { value: tcp.maxConnections };
  return t;
}

/** `outlierDetection(od)`, shared: found once per settings object (see circuitBreakersOf). */
const outliersOf = new WeakMap<OutlierDetection, envoy.config.cluster.v3.OutlierDetection.$Properties>();

export function sharedOutlierDetection(od: OutlierDetection): envoy.config.cluster.v3.OutlierDetection.$Properties {
  let shared = outliersOf.get(od);
  if (!shared) outliersOf.set(od, (shared = sharedPart('outlier_detection', outlierDetection(od))));
  return shared;
}

/** Outlier detection as istiod maps it: success-rate ejection off, enforcing 100% when a threshold is > 0. */
export function outlierDetection(od: OutlierDetection): envoy.config.cluster.v3.OutlierDetection.$Properties {
  const out: envoy.config.cluster.v3.OutlierDetection.$Properties = { enforcing_success_rate: { value: 0 } };
  if (od.consecutive5xxErrors !== undefined) {
    out.consecutive_5xx = { value: od.consecutive5xxErrors };
    out.enforcing_consecutive_5xx = { value: od.consecutive5xxErrors > 0 ? 100 : 0 };
  }
  if (od.consecutiveGatewayErrors !== undefined) {
    out.consecutive_gateway_failure = { value: od.consecutiveGatewayErrors };
    out.enforcing_consecutive_gateway_failure = { value: od.consecutiveGatewayErrors > 0 ? 100 : 0 };
  }
  if (od.intervalMs !== undefined) out.interval = durationMs(od.intervalMs);
  if (od.baseEjectionTimeMs !== undefined) out.base_ejection_time = durationMs(od.baseEjectionTimeMs);
  if (od.maxEjectionPercent && od.maxEjectionPercent > 0) out.max_ejection_percent = { value: od.maxEjectionPercent };
  if (od.splitExternalLocalOriginErrors) {
    out.split_external_local_origin_errors = true;
    if (od.consecutiveLocalOriginFailures && od.consecutiveLocalOriginFailures > 0) {
      out.consecutive_local_origin_failure = { value: od.consecutiveLocalOriginFailures };
      out.enforcing_consecutive_local_origin_failure = { value: 100 };
    }
    out.enforcing_local_origin_success_rate = { value: 0 };
  }
  return out;
}

export function applyOutlierDetection(c: Cluster, od: OutlierDetection | undefined): void {
  if (!od) return;
  c.outlier_detection = sharedOutlierDetection(od);
  // istiod always sets the panic threshold here (default 0: never send to ejected hosts in panic).
  c.common_lb_config = { ...(c.common_lb_config ?? {}), healthy_panic_threshold: { value: od.minHealthPercent ?? 0 } };
}

/** Turns an EDS draft into an ORIGINAL_DST one (headless services, `simple: PASSTHROUGH`). */
export function makeOriginalDst(c: Cluster): void {
  c.type = DiscoveryType.ORIGINAL_DST;
  c.lb_policy = LbPolicy.CLUSTER_PROVIDED;
  delete c.eds_cluster_config;
  delete c.load_assignment;
}

/** istiod's setWarmup (aggression 1 and 10 % unless set; the runtime key is its placeholder), else setSlowStartConfig. */
function slowStart(
  lb: LoadBalancerSettings | undefined,
): envoy.config.cluster.v3.Cluster.SlowStartConfig.$Properties | undefined {
  const warmup = lb?.warmup;
  if (warmup)
    return {
      slow_start_window: durationMs(warmup.durationMs),
      aggression: { default_value: warmup.aggression ?? 1, runtime_key: '(' },
      min_weight_percent: { value: warmup.minimumPercent ?? 10 },
    };
  return lb?.warmupDurationSecsMs !== undefined
    ? { slow_start_window: durationMs(lb.warmupDurationSecsMs) }
    : undefined;
}

/**
 * Load balancing. Locality: istiod's ApplyToCluster sets `locality_weighted_lb_config` for
 * `distribute`, or for failover (with outlier detection or a traffic distribution) with `failover`
 * or `failoverPriority` set, and a zone-aware setting's `zone_aware_lb_config`; the per-proxy
 * priorities and weights are the EDS variants' (endpoints.ts, locality-lb.ts).
 */
export function applyLoadBalancer(
  c: Cluster,
  lb: LoadBalancerSettings | undefined,
  mesh?: Pick<MeshConfig, 'localityLbSetting' | 'zoneAwareLbSetting'>,
  trafficDistribution?: TrafficDistribution,
): void {
  const setting = mesh ? effectiveLbSetting(mesh, lb, trafficDistribution) : undefined;
  if (setting?.kind === 'zoneAware') {
    const zoneAware = setting.setting;
    const size =
      zoneAware.minClusterSize !== undefined ? { min_cluster_size: { value: zoneAware.minClusterSize } } : {};
    c.common_lb_config = {
      ...(c.common_lb_config ?? {}),
      zone_aware_lb_config: zoneAware.enabled === false ? { routing_enabled: { value: 0 }, ...size } : size,
    };
  } else if (setting?.kind === 'locality') {
    const locality = setting.setting;
    const failover = (locality.failover?.length ?? 0) > 0 || (locality.failoverPriority?.length ?? 0) > 0;
    if (locality.distribute?.length || (failover && (c.outlier_detection || setting.force))) {
      c.common_lb_config = { ...(c.common_lb_config ?? {}), locality_weighted_lb_config: {} };
    }
  }
  if (c.type === DiscoveryType.ORIGINAL_DST) {
    c.lb_policy = LbPolicy.CLUSTER_PROVIDED;
    return;
  }
  const warm = slowStart(lb);
  switch (lb?.simple) {
    case 'ROUND_ROBIN':
      c.lb_policy = LbPolicy.ROUND_ROBIN;
      if (warm) c.round_robin_lb_config = { slow_start_config: warm };
      break;
    case 'RANDOM':
      c.lb_policy = LbPolicy.RANDOM;
      break;
    case 'PASSTHROUGH':
      makeOriginalDst(c);
      return;
    default:
      // LEAST_CONN (deprecated alias), LEAST_REQUEST and unset: istiod's default is LEAST_REQUEST.
      c.lb_policy = LbPolicy.LEAST_REQUEST;
      if (warm) c.least_request_lb_config = { slow_start_config: warm };
  }
  applyConsistentHash(c, lb);
}

export function applyConsistentHash(c: Cluster, lb: LoadBalancerSettings | undefined): void {
  const hash = lb?.consistentHash;
  if (!hash) return;
  delete c.round_robin_lb_config;
  delete c.least_request_lb_config;
  if (hash.maglev) {
    c.lb_policy = LbPolicy.MAGLEV;
    if (hash.maglev.tableSize) c.maglev_lb_config = { table_size: { value: hash.maglev.tableSize } };
  } else if (hash.ringHash) {
    c.lb_policy = LbPolicy.RING_HASH;
    if (hash.ringHash.minimumRingSize)
      c.ring_hash_lb_config = { minimum_ring_size: { value: hash.ringHash.minimumRingSize } };
  } else {
    // Deprecated top-level minimumRingSize; 1024 is Envoy's default, which istiod writes out.
    c.lb_policy = LbPolicy.RING_HASH;
    c.ring_hash_lb_config = { minimum_ring_size: { value: hash.minimumRingSize || 1024 } };
  }
}

type ProtocolOptions = NonNullable<Cluster['typed_extension_protocol_options']>;
const packedHttpOptions = new InternTable<ProtocolOptions>();

/** Packs the draft's HttpProtocolOptions (explicit HTTP/1.1 when no protocol was chosen), sharing equal ones. */
export function finishDraft(draft: ClusterDraft): Cluster {
  const c = draft.cluster;
  if (draft.http) {
    const opts = draft.http;
    if (!hasUpstreamProtocol(opts)) opts.explicit_http_config = { http_protocol_options: {} };
    // Field order is fixed by construction, so the JSON is a stable key for sharing the packed bytes.
    c.typed_extension_protocol_options = packedHttpOptions.get(JSON.stringify(opts), () => ({
      [TypeName.HttpProtocolOptions]: packAny(TypeName.HttpProtocolOptions, opts),
    }));
  }
  return shareClusterParts(c);
}
