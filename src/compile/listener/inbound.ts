/**
 * The inbound side of one workload shape (istiod: buildInboundListeners + buildInboundClusters):
 * `virtualInbound` on 0.0.0.0:15006 (MeshConfig `proxyInboundListenPort`), where iptables redirects
 * incoming connections, and one `inbound|<targetPort>||` cluster per target port of the services
 * selecting the workload.
 */
import type { ProxyHeaders } from './proxy-headers.js';
import { inboundMtlsSockets } from './tls-context.js';
import type { CompileContext } from '../context.js';
import { BLACKHOLE_CLUSTER, VIRTUAL_INBOUND, virtualInboundPort } from '../names.js';
import type { MeshService } from '../../model/service-model.js';
import type { Sidecar } from '../../model/sidecar.js';
import type { WorkloadSecurity } from '../security/workload-security.js';
import { envoy, type Cluster, type FilterChain, type Listener } from '../../xds/proto.js';
import {
  HTTP_INSPECTOR_FILTER,
  ORIGINAL_DST_FILTER,
  socketAddress,
  TLS_INSPECTOR_FILTER,
  TLS_TRANSPORT,
  type ListenerFilter,
} from './filters.js';
import { exactList } from '../exact.js';
import { detectionTimeout } from './detection-timeout.js';
import { deepFreeze, InternTable } from '../intern.js';
import { blackholeChain, passthroughChains, portChains } from './inbound-chains.js';
import { buildInboundCluster } from './inbound-cluster.js';
import { inboundPorts, type InboundPort } from './inbound-ports.js';
import { sidecarIngressPorts } from './sidecar-ingress.js';

type Predicate = envoy.config.listener.v3.ListenerFilterChainMatchPredicate.$Properties;

/** What decides a workload's inbound side: its namespace, the services selecting it, its security policies, its Sidecar. */
export interface InboundShape {
  readonly namespace: string;
  readonly services: readonly MeshService[];
  readonly security: WorkloadSecurity;
  /** The Sidecar resource that applies: its ingress listeners, when it has some, replace the services' ports. */
  readonly sidecar?: Sidecar | undefined;
  /** The keys of the workload-selected Telemetries with access logging or tracing that select it (listener/telemetry-logs.ts). */
  readonly telemetry?: readonly string[];
  /**
   * The services its proxies' outbound scope sees (their clusters are in its CDS), where that
   * matters: Telemetry tracing sends to a collector's cluster. Absent: every service.
   */
  readonly scopeServices?: ReadonlyMap<string, MeshService>;
}

/** `headers`: its HCMs' (./hcm-headers.ts: the inbound class's, with the shape's proxies' tracing). */
export function buildInbound(
  ctx: CompileContext,
  shape: InboundShape,
  headers: ProxyHeaders,
): { listeners: Map<string, Listener>; clusters: Map<string, Cluster> } {
  const servicePorts = inboundPorts(ctx, shape.services);
  const ports = shape.sidecar?.spec.ingress?.length
    ? sidecarIngressPorts(shape.sidecar, shape.namespace, servicePorts)
    : ctx.mesh.inboundTrafficPolicy === 'LOCALHOST'
      ? servicePorts.map(toLocalhost)
      : servicePorts;
  const clusters = new Map<string, Cluster>();
  for (const p of ports) {
    const c = buildInboundCluster(ctx, p, shape.sidecar);
    clusters.set(c.name as string, c);
  }
  const mtls = inboundMtlsSockets(ctx.mesh);
  // istiod's order: blackhole, passthrough, then service ports by target port (a list the listener keeps: ../exact.ts).
  // MeshConfig proxyInboundListenPort: the listener's port and its blackhole chain's (istiod).
  const listenPort = virtualInboundPort(ctx.mesh);
  const chains = exactList([
    blackholeChain(listenPort, BLACKHOLE_CLUSTER),
    ...passthroughChains(shape.security, new Set(ports.map((p) => p.targetPort)), headers, mtls),
    ...ports.flatMap((p) => portChains(p, shape.security, headers, mtls, ctx.mesh.tlsDefaults)),
  ]);
  const needs = inspectorNeeds(chains);
  const listener: Listener = {
    name: VIRTUAL_INBOUND,
    address: inboundAddress(listenPort),
    traffic_direction: envoy.config.core.v3.TrafficDirection.INBOUND,
    continue_on_listener_filters_timeout: true,
    listener_filters: listenerFilters.get(needsKey(needs), () => [ORIGINAL_DST_FILTER, ...inspectors(needs)]),
    // MeshConfig.protocolDetectionTimeout, on every inbound listener (istiod's buildInboundListener).
    listener_filters_timeout: detectionTimeout(ctx),
    filter_chains: chains,
  };
  return { listeners: new Map([[VIRTUAL_INBOUND, listener]]), clusters };
}

/** 0.0.0.0:<port>, one frozen address per port. */
const inboundAddresses = new Map<number, ReturnType<typeof socketAddress>>();
function inboundAddress(port: number): ReturnType<typeof socketAddress> {
  let address = inboundAddresses.get(port);
  if (!address) inboundAddresses.set(port, (address = deepFreeze(socketAddress('0.0.0.0', port))));
  return address;
}
/** Workloads whose ports need the same inspectors share one list (../intern.ts). */
const listenerFilters = new InternTable<ListenerFilter[]>();

type Needs = Map<number, { tls: boolean; http: boolean }>;

/** `port:tls,http` per entry, in the map's order: equal keys make equal filter lists. */
function needsKey(needs: Needs): string {
  let key = '';
  for (const [port, n] of needs) key += `${port}:${n.tls ? 1 : 0}${n.http ? 1 : 0},`;
  return key;
}

/** Per destination port (0: the passthrough chains), whether some chain needs the TLS or the HTTP inspector. */
function inspectorNeeds(chains: readonly FilterChain[]): Needs {
  const needs: Needs = new Map();
  for (const c of chains) {
    const match = c.filter_chain_match ?? {};
    const port = match.destination_port?.value ?? 0;
    const n = needs.get(port) ?? { tls: false, http: false };
    n.tls ||= match.transport_protocol === TLS_TRANSPORT;
    n.http ||= (match.application_protocols ?? []).some((a) => a === 'http/1.1' || a === 'h2c');
    needs.set(port, n);
  }
  return needs;
}

/**
 * The TLS and HTTP inspectors, switched off on ports where no chain needs them (istiod:
 * populateListenerFilters). Sniffing a server-first protocol would stall it, so a declared TCP
 * port must not wait for the HTTP inspector. Port 0 stands for the passthrough chains.
 */
function inspectors(needs: Needs): ListenerFilter[] {
  const out: ListenerFilter[] = [];
  const portsWhere = (pred: (n: { tls: boolean; http: boolean }) => boolean) =>
    [...needs.entries()]
      .filter(([p, n]) => p !== 0 && pred(n))
      .map(([p]) => p)
      .sort((a, b) => a - b);

  const all = [...needs.values()];
  if (all.some((n) => n.tls)) {
    const byDefault = needs.get(0)?.tls ?? false;
    const ports = portsWhere((n) => n.tls !== byDefault);
    if (ports.length === 0) out.push(TLS_INSPECTOR_FILTER);
    else
      out.push({
        ...TLS_INSPECTOR_FILTER,
        filter_disabled: byDefault ? anyPort(ports) : { not_match: anyPort(ports) },
      });
  }
  if (all.some((n) => n.http)) {
    const ports = [...needs.entries()]
      .filter(([, n]) => !n.http)
      .map(([p]) => p)
      .sort((a, b) => a - b);
    out.push(
      ports.length === 0 ? HTTP_INSPECTOR_FILTER : { ...HTTP_INSPECTOR_FILTER, filter_disabled: anyPort(ports) },
    );
  }
  return out;
}

/** Matches connections to any of the ports (ranges are [start, end)). */
function anyPort(ports: readonly number[]): Predicate {
  const rules: Predicate[] = ports.map((p) => ({ destination_port_range: { start: p, end: p + 1 } }));
  return rules.length === 1 ? (rules[0] as Predicate) : { or_match: { rules } };
}

/**
 * MeshConfig `inboundTrafficPolicy.mode: LOCALHOST`: the services' ports go to the application at
 * 127.0.0.1 (istiod's buildInboundClustersFromServiceInstances binds to the proxy's first local host
 * instead of leaving the original destination), a STATIC cluster without the passthrough bind
 * address. A Sidecar's ingress listeners keep their own `defaultEndpoint` (istiod).
 */
const toLocalhost = (p: InboundPort): InboundPort => ({
  ...p,
  endpoint: { kind: 'loopback', address: '127.0.0.1', port: p.targetPort },
});
