/**
 * Outbound listeners shared by every sidecar (istiod: buildSidecarOutboundListeners plus
 * buildVirtualOutboundListener):
 *
 * - `virtualOutbound` (0.0.0.0:15001) receives all captured traffic and hands each connection to the
 *   listener of its original destination; what matches none goes to the egress cluster.
 * - `0.0.0.0_<port>` for every port an HTTP service uses: one HCM whose routes come over RDS (`"<port>"`).
 * - `<clusterIP>_<port>` for every TCP-like service port: a tcp_proxy. Envoy's original-dst lookup
 *   prefers an exact IP listener over the wildcard one, so TCP and HTTP services can share a port.
 *
 * Left out: ExternalName services (aliases: their clients resolve to the target's IP), UDP ports
 * (sidecars do not proxy UDP), and TCP ports of headless services (reported as `info`; istiod would
 * build per-pod listeners for those).
 */
import type { CompileContext } from '../context.js';
import {
  ipListenerName,
  routeConfigName,
  VIRTUAL_OUTBOUND,
  VIRTUAL_OUTBOUND_PORT,
  wildcardListenerName,
  BLACKHOLE_CLUSTER,
} from '../names.js';
import { isHttpProtocol, type MeshService, type MeshServicePort } from '../../model/service-model.js';
import { envoy, type Listener } from '../../xds/proto.js';
import { bool, PLAINTEXT_HTTP_ALPNS, RAW_BUFFER_TRANSPORT, socketAddress, u32 } from './filters.js';
import { buildSidecarHcm, hcmFilter } from './http-connection-manager.js';
import { assembleOutboundListener, egressCluster } from './outbound-listener.js';
import { outboundTcpChains } from './outbound-tcp.js';
import { tcpProxyTo } from './tcp-proxy.js';

const WILDCARD = '0.0.0.0';

export function buildOutboundListeners(ctx: CompileContext): Map<string, Listener> {
  const listeners = new Map<string, Listener>();
  listeners.set(VIRTUAL_OUTBOUND, virtualOutboundListener(ctx));

  const httpPorts = new Set<number>();
  const tcpPorts: { service: MeshService; port: MeshServicePort }[] = [];
  for (const service of ctx.model.services) {
    if (service.externalName !== undefined) continue;
    for (const port of service.ports) {
      if (port.protocol === 'UDP') continue;
      if (isHttpProtocol(port.protocol)) httpPorts.add(port.port);
      else tcpPorts.push({ service, port });
    }
  }

  for (const port of [...httpPorts].sort((a, b) => a - b)) {
    const name = wildcardListenerName(port);
    listeners.set(name, httpListener(ctx, name, port));
  }
  for (const { service, port } of tcpPorts) {
    const l = tcpListener(ctx, service, port, listeners);
    if (l) listeners.set(l.name as string, l);
  }
  return sortedByName(listeners);
}

function virtualOutboundListener(ctx: CompileContext): Listener {
  return {
    name: VIRTUAL_OUTBOUND,
    address: socketAddress(WILDCARD, VIRTUAL_OUTBOUND_PORT),
    use_original_dst: bool(true),
    traffic_direction: envoy.config.core.v3.TrafficDirection.OUTBOUND,
    filter_chains: [
      // Connections addressed to 15001 itself would loop back into this listener forever.
      {
        name: 'virtualOutbound-blackhole',
        filter_chain_match: { destination_port: u32(VIRTUAL_OUTBOUND_PORT) },
        filters: [tcpProxyTo(BLACKHOLE_CLUSTER)],
      },
      { name: 'virtualOutbound-catchall-tcp', filters: [tcpProxyTo(egressCluster(ctx))] },
    ],
  };
}

/** One per port, whatever the number of HTTP services on it: the route config tells them apart by Host. */
function httpListener(ctx: CompileContext, name: string, port: number): Listener {
  const hcm = buildSidecarHcm({ statPrefix: `outbound_${name}`, rds: routeConfigName(port) });
  // The HTTP inspector sends plaintext HTTP to the HCM; anything else (TLS, other TCP) falls
  // through to the passthrough chain, so unknown destinations on this port still work.
  return assembleOutboundListener(ctx, name, WILDCARD, port, [
    { filters: [hcmFilter(hcm)], transportProtocol: RAW_BUFFER_TRANSPORT, applicationProtocols: PLAINTEXT_HTTP_ALPNS },
  ]);
}

function tcpListener(
  ctx: CompileContext,
  service: MeshService,
  port: MeshServicePort,
  existing: ReadonlyMap<string, Listener>,
): Listener | undefined {
  const report = (severity: 'info' | 'warning', code: string, message: string) =>
    ctx.diags.add({
      severity,
      code,
      message,
      kind: 'Service',
      namespace: service.namespace,
      name: service.name,
      field: `spec.ports[${service.ports.indexOf(port)}]`,
      file: service.origin.file,
      index: service.origin.index,
    });
  if (service.clusterIP === undefined) {
    report(
      'info',
      'headless-tcp-port',
      `${port.protocol} port ${port.port} of a service without cluster IP gets no outbound listener; its traffic takes the passthrough path`,
    );
    return undefined;
  }
  const name = ipListenerName(service.clusterIP, port.port);
  if (existing.has(name)) {
    // Two services cannot share an IP:port; the first in hostname order keeps the listener.
    report('warning', 'listener-conflict', `listener ${name} already exists for another service; this port is skipped`);
    return undefined;
  }
  return assembleOutboundListener(ctx, name, service.clusterIP, port.port, outboundTcpChains(ctx, service, port));
}

function sortedByName(listeners: Map<string, Listener>): Map<string, Listener> {
  const sorted = new Map<string, Listener>();
  for (const name of [...listeners.keys()].sort()) sorted.set(name, listeners.get(name) as Listener);
  return sorted;
}
