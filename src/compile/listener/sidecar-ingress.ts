/**
 * A Sidecar's `ingress` listeners as the workload's inbound ports (istiod: buildInboundChainConfigs
 * for a SidecarScope with ingress listeners, buildInboundClustersFromSidecar). They replace the
 * ports of the Services selecting the workload (istiod's default, without
 * ENABLE_SIDECAR_SERVICE_INBOUND_LISTENER_MERGE). Each port `P` is served on `inbound|P||`:
 * - no `defaultEndpoint`: ORIGINAL_DST towards the address the client dialled, as for Services;
 * - `127.0.0.1:Q` / `[::1]:Q`: a STATIC cluster to that address (no passthrough bind address);
 * - `unix:///path` (or `unix://@name`): a STATIC cluster to that socket;
 * - `0.0.0.0:Q` / `[::]:Q` (the pod's IP): the same as ORIGINAL_DST when Q is P, else ORIGINAL_DST
 *   with Q as the upstream port (istiod: STATIC at the proxy's own IP and Q; see inbound-ports.ts).
 * - `tls`: terminated with the listener's own certificates where the port's mTLS mode is DISABLE
 *   (istiod with ENABLE_TLS_ON_SIDECAR_INGRESS; see inbound-chains.ts), ignored otherwise.
 * The port's telemetry service is the selecting Service whose target port is P, else istiod's
 * stand-in `<sidecar>.<namespace>`.
 */
import type { MeshService } from '../../model/service-model.js';
import {
  sidecarPortProtocol,
  UNIX_BIND_PREFIX,
  type Sidecar,
  type SidecarIngressListener,
} from '../../model/sidecar.js';
import type { InboundEndpoint, InboundPort } from './inbound-ports.js';

/** Where a listener's traffic goes, when not to the original destination as the client dialled it. */
function inboundEndpoint(l: SidecarIngressListener): InboundEndpoint | undefined {
  const target = l.defaultEndpoint;
  if (target === undefined) return undefined;
  if (target.startsWith(UNIX_BIND_PREFIX)) return { kind: 'pipe', path: target.slice(UNIX_BIND_PREFIX.length) };
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d+)$/.exec(target);
  const host = m?.[1] ?? m?.[2] ?? '';
  const port = Number(m?.[3]);
  if (host === '127.0.0.1' || host === '::1') return { kind: 'loopback', address: host, port };
  // The pod's own address (validation allows 0.0.0.0 and [::] besides loopback and unix sockets).
  return port === l.port.number ? undefined : { kind: 'pod-port', port };
}

export function sidecarIngressPorts(
  sidecar: Sidecar,
  namespace: string,
  servicePorts: readonly InboundPort[],
): InboundPort[] {
  return (sidecar.spec.ingress ?? [])
    .map((l): InboundPort => {
      const number = l.port.number;
      const protocol = sidecarPortProtocol(l.port);
      const port = { ...(l.port.name ? { name: l.port.name } : {}), port: number, targetPort: number, protocol };
      const real = servicePorts.find((p) => p.targetPort === number);
      const service: MeshService = real?.service ?? {
        hostname: `${sidecar.meta.name}.${namespace}`,
        name: sidecar.meta.name,
        namespace,
        labels: {},
        headless: false,
        ports: [port],
        origin: sidecar.origin,
      };
      const endpoint = inboundEndpoint(l);
      return {
        targetPort: number,
        service,
        port,
        services: real?.services ?? [service],
        ...(endpoint ? { endpoint } : {}),
        ...(l.tls ? { tls: l.tls } : {}),
      };
    })
    .sort((a, b) => a.targetPort - b.targetPort);
}
