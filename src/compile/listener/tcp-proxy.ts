/** The `envoy.filters.network.tcp_proxy` network filter. */
import { durationMs, envoy, withPackedMessage } from '../../xds/proto.js';
import { TypeName, typeUrl } from '../../xds/type-urls.js';
import { InternTable } from '../intern.js';
import { FilterName, type NetworkFilter } from './filters.js';

type TcpProxy = envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy.$Properties;

export interface WeightedCluster {
  readonly name: string;
  readonly weight: number;
}

export interface TcpProxyOptions {
  readonly statPrefix: string;
  /** One destination… */
  readonly cluster?: string;
  /** …or several, weighted (ignored when `cluster` is set). */
  readonly weightedClusters?: readonly WeightedCluster[];
  /** From a DestinationRule's `connectionPool.tcp`. */
  readonly idleTimeoutMs?: number;
  readonly maxConnectionDurationMs?: number;
  /** DestinationRule consistentHash.useSourceIp: hash on the client address. */
  readonly hashOnSourceIp?: boolean;
  /** DestinationRule `tunnel`: the connection goes to the cluster inside HTTP CONNECT (or POST) to this `host:port`. */
  readonly tunnel?: { readonly hostname: string; readonly usePost: boolean };
}

export function buildTcpProxy(opts: TcpProxyOptions): TcpProxy {
  const proxy: TcpProxy = { stat_prefix: opts.statPrefix };
  if (opts.cluster !== undefined) proxy.cluster = opts.cluster;
  else
    proxy.weighted_clusters = {
      clusters: (opts.weightedClusters ?? []).map((c) => ({ name: c.name, weight: c.weight })),
    };
  if (opts.idleTimeoutMs !== undefined) proxy.idle_timeout = durationMs(opts.idleTimeoutMs);
  if (opts.maxConnectionDurationMs !== undefined)
    proxy.max_downstream_connection_duration = durationMs(opts.maxConnectionDurationMs);
  if (opts.hashOnSourceIp) proxy.hash_policy = [{ source_ip: {} }];
  if (opts.tunnel)
    proxy.tunneling_config = { hostname: opts.tunnel.hostname, ...(opts.tunnel.usePost ? { use_post: true } : {}) };
  return proxy;
}

// There is one tcp_proxy per TCP service port (10k services, 10k of them): encode with the codec
// directly rather than looking it up by name each time.
const TcpProxyCodec = envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
const TCP_PROXY_URL = typeUrl(TypeName.TcpProxy);

export function tcpProxyFilter(opts: TcpProxyOptions): NetworkFilter {
  const proxy = buildTcpProxy(opts);
  return {
    name: FilterName.TcpProxy,
    typed_config: withPackedMessage({ type_url: TCP_PROXY_URL, value: TcpProxyCodec.encode(proxy).finish() }, proxy),
  };
}

const toCluster = new InternTable<NetworkFilter>();

/**
 * A plain tcp_proxy to one cluster whose stat prefix is the cluster name (passthrough, blackhole,
 * inbound): one shared filter per cluster (every workload's `inbound|<port>||` chains hold the same).
 */
export const tcpProxyTo = (cluster: string): NetworkFilter =>
  toCluster.get(cluster, () => tcpProxyFilter({ statPrefix: cluster, cluster }));
