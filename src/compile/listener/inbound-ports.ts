/**
 * The ports a workload shape receives traffic on: the target ports of the services selecting it,
 * one entry per distinct target port (istiod: getFilterChainsByServicePort). When two services
 * target the same port the first in hostname order decides the protocol, as istiod keeps the
 * oldest Service; the others still appear in the cluster's telemetry metadata.
 */
import type { CompileContext } from '../context.js';
import { perCompile } from '../per-compile.js';
import type { MeshService, MeshServicePort } from '../../model/service-model.js';
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

export function inboundPorts(ctx: CompileContext, services: readonly MeshService[]): InboundPort[] {
  const byTarget = new Map<number, { service: MeshService; port: MeshServicePort; services: MeshService[] }>();
  const ordered =
    services.length < 2
      ? services
      : [...services].sort((a, b) => (a.hostname < b.hostname ? -1 : a.hostname > b.hostname ? 1 : 0));
  for (const service of ordered) {
    for (const [i, port] of service.ports.entries()) {
      if (port.protocol === 'UDP') continue;
      const targetPort = resolveTargetPort(ctx, service, port, i);
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

/** Service ports whose unresolved targetPort this compile reported. */
const reportedPorts = perCompile(() => new Set<string>());

/**
 * The one diagnostic an inbound build reports once per compile rather than once per build (a service
 * belongs to several shapes): which build carries it depends on the builds before it.
 */
export const UNRESOLVED_TARGET_PORT = 'unresolved-target-port';

/** A numeric targetPort as is; a named one through the endpoints (the container port it resolved to). */
function resolveTargetPort(
  ctx: CompileContext,
  service: MeshService,
  port: MeshServicePort,
  index: number,
): number | undefined {
  if (typeof port.targetPort === 'number') return port.targetPort;
  const resolved = ctx.model.endpoints.get(service.hostname)?.get(port.port)?.[0]?.port;
  if (resolved !== undefined) return resolved;
  // A service belongs to several shapes; say it once per compile.
  const reported = reportedPorts(ctx);
  const key = `${service.hostname}:${port.port}`;
  if (reported.has(key)) return undefined;
  reported.add(key);
  ctx.diags.warn({
    code: UNRESOLVED_TARGET_PORT,
    message: `targetPort "${port.targetPort}" names no container port of any endpoint; no inbound listener or cluster is built for service port ${port.port}`,
    kind: 'Service',
    namespace: service.namespace,
    name: service.name,
    field: `spec.ports[${index}].targetPort`,
    file: service.origin.file,
    index: service.origin.index,
  });
  return undefined;
}
