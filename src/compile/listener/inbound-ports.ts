/**
 * The ports a workload shape receives traffic on: the target ports of the services selecting it,
 * one entry per distinct target port (istiod: getFilterChainsByServicePort). When two services
 * target the same port the first in hostname order decides the protocol, as istiod keeps the
 * oldest Service; the others still appear in the cluster's telemetry metadata.
 */
import type { CompileContext } from '../context.js';
import type { Diagnostics } from '../../model/diagnostics.js';
import {
  hasWorkloadSelector,
  type MeshEndpoint,
  type MeshService,
  type MeshServicePort,
} from '../../model/service-model.js';
import type { SidecarIngressTls } from '../../model/sidecar.js';

/**
 * A Sidecar ingress listener's `defaultEndpoint` (istiod's buildInboundClustersFromSidecar):
 * `loopback` 127.0.0.1 / ::1 and `pipe` (a unix socket) are STATIC clusters; `pod-port` is the pod's
 * own address on another port, which istiod writes as a STATIC endpoint at the proxy's IP: here
 * ORIGINAL_DST with that port as `upstream_port_override`, the same destination without a per-pod
 * address in a class every pod shares.
 */
export type InboundEndpoint =
  | { readonly kind: 'loopback'; readonly address: string; readonly port: number }
  | { readonly kind: 'pipe'; readonly path: string }
  | { readonly kind: 'pod-port'; readonly port: number };

export interface InboundPort {
  readonly targetPort: number;
  /** The service and port that decide protocol and naming. */
  readonly service: MeshService;
  readonly port: MeshServicePort;
  /** Every service reaching this target port through the same service port number, for metadata. */
  readonly services: readonly MeshService[];
  /** Where a Sidecar ingress listener's `defaultEndpoint` sends traffic, when not to the original destination. */
  readonly endpoint?: InboundEndpoint;
  /** A Sidecar ingress listener's own TLS, terminated instead of Istio mTLS where mTLS is DISABLE. */
  readonly tls?: SidecarIngressTls;
}

/**
 * The inbound ports of a workload selected by `services`. A named targetPort resolves through the
 * endpoint at one of `podIps` when given (a proxyless server's listeners are per pod: istiod resolves
 * per pod), else through the service's first endpoint (a sidecar class serves many pods:
 * reportNamedTargetPorts says when they differ).
 */
export function inboundPorts(
  ctx: CompileContext,
  services: readonly MeshService[],
  podIps?: readonly string[],
): InboundPort[] {
  const byTarget = new Map<number, { service: MeshService; port: MeshServicePort; services: MeshService[] }>();
  const ordered =
    services.length < 2
      ? services
      : [...services].sort((a, b) => (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0));
  for (const service of ordered) {
    for (const port of service.ports) {
      if (port.protocol === 'UDP') continue;
      const targetPort = resolveTargetPort(ctx, service, port, podIps);
      if (targetPort === undefined) continue;
      const entry = byTarget.get(targetPort);
      if (!entry) byTarget.set(targetPort, { service, port, services: [service] });
      else if (entry.port.port === port.port && !entry.services.includes(service)) entry.services.push(service);
    }
  }
  const out: InboundPort[] = [];
  for (const [targetPort, e] of byTarget) out.push({ targetPort, ...e });
  // Usually in order already (Array#sort allocates a work array per call: one per inbound shape).
  for (let i = 1; i < out.length; i++)
    if ((out[i - 1] as InboundPort).targetPort > (out[i] as InboundPort).targetPort)
      return out.sort((a, b) => a.targetPort - b.targetPort);
  return out;
}

/** The codes of the warnings below: properties of the model, reported once per compile, not by the inbound builds. */
export const UNRESOLVED_TARGET_PORT = 'unresolved-target-port';
export const TARGET_PORT_DIFFERS = 'target-port-differs';

/**
 * A numeric targetPort as is; a named one through the endpoints (the container port it resolved
 * to: the pod's own when `podIps` are given and it is an endpoint, else the first endpoint's), else
 * undefined: no inbound listener or cluster for the port (reportNamedTargetPorts).
 */
function resolveTargetPort(
  ctx: CompileContext,
  service: MeshService,
  port: MeshServicePort,
  podIps?: readonly string[],
): number | undefined {
  if (typeof port.targetPort === 'number') return port.targetPort;
  const endpoints = portEndpoints(ctx, service, port);
  const own = podIps ? endpoints.find((e) => podIps.includes(e.address)) : undefined;
  return (own ?? endpoints[0])?.port;
}

/** The endpoints of a service port, by address (a named targetPort resolves through them). */
const portEndpoints = (ctx: CompileContext, service: MeshService, port: MeshServicePort): readonly MeshEndpoint[] =>
  ctx.model.endpoints.get(service.hostname)?.get(port.port) ?? [];

/**
 * Warns about each port of a service whose named targetPort names no container port of its
 * endpoints (the inbound builds leave the port out), or different ones: the inbound builds use
 * the first endpoint's for every workload, where istiod resolves it per pod. Every service with a
 * workload selector has an inbound shape of its own (compile/index.ts workloadShapes), so this is
 * reported once per service port, whichever inbound groups read it or are built: the full compile
 * calls this for every service, the incremental compiler for the services whose endpoints changed.
 */
export function reportNamedTargetPorts(ctx: CompileContext, service: MeshService, diags: Diagnostics): void {
  if (!service.ports.some((p) => typeof p.targetPort === 'string')) return;
  if (!hasWorkloadSelector(service)) return; // no inbound build reads it
  // Two entries with one port number (TCP and SCTP) resolve alike: the first is reported.
  let reported: Set<number> | undefined;
  for (const [index, port] of service.ports.entries()) {
    if (port.protocol === 'UDP' || typeof port.targetPort === 'number' || reported?.has(port.port)) continue;
    const endpoints = portEndpoints(ctx, service, port);
    const first = endpoints[0];
    const other = endpoints.find((e) => e.port !== first?.port);
    if (first && !other) continue;
    (reported ??= new Set()).add(port.port);
    const where = {
      kind: 'Service',
      namespace: service.namespace,
      name: service.name,
      field: `spec.ports[${index}].targetPort`,
      file: service.origin.file,
      index: service.origin.index,
    };
    if (!first)
      diags.warn({
        code: UNRESOLVED_TARGET_PORT,
        message: `targetPort "${port.targetPort}" names no container port of any endpoint; no inbound listener or cluster is built for service port ${port.port}`,
        ...where,
      });
    else
      diags.warn({
        code: TARGET_PORT_DIFFERS,
        message: `targetPort "${port.targetPort}" names container port ${first.port} on ${endpointName(first)} but ${(other as MeshEndpoint).port} on ${endpointName(other as MeshEndpoint)}; every workload behind the service gets its inbound listener chain and cluster for port ${first.port} (istiod resolves the name per pod): traffic to another port reaches the application through the inbound passthrough chains`,
        ...where,
      });
  }
}

const endpointName = (e: MeshEndpoint): string => (e.podName ? `pod ${e.podName} (${e.address})` : e.address);
