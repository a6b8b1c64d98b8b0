/**
 * A Sidecar's `ingress` listeners as the workload's inbound ports (istiod: buildInboundChainConfigs
 * for a SidecarScope with ingress listeners, buildInboundClustersFromSidecar). They replace the
 * ports of the Services selecting the workload (istiod's default, without
 * ENABLE_SIDECAR_SERVICE_INBOUND_LISTENER_MERGE). Each port `P` is served on `inbound|P||`:
 * - no `defaultEndpoint`: ORIGINAL_DST towards the address the client dialled, as for Services;
 * - `127.0.0.1:Q` / `[::1]:Q`: a STATIC cluster to that address (no passthrough bind address);
 * - `0.0.0.0:Q` / `[::]:Q` (the pod's IP) when Q is P: the same as ORIGINAL_DST. Another Q, a unix
 *   socket are reported (`unsupported-sidecar-field`) and served as without them.
 * - `tls`: terminated with the listener's own certificates where the port's mTLS mode is DISABLE
 *   (istiod with ENABLE_TLS_ON_SIDECAR_INGRESS; see inbound-chains.ts), ignored otherwise.
 * The port's telemetry service is the selecting Service whose target port is P, else istiod's
 * stand-in `<sidecar>.<namespace>`.
 */
import type { Diagnostics } from '../../model/diagnostics.js';
import type { MeshService } from '../../model/service-model.js';
import { sidecarPortProtocol, type Sidecar, type SidecarIngressListener } from '../../model/sidecar.js';
import type { InboundPort } from './inbound-ports.js';

const reported = new WeakMap<Diagnostics, Set<string>>();

function report(diags: Diagnostics, sidecar: Sidecar, field: string, message: string): void {
  let seen = reported.get(diags);
  if (!seen) reported.set(diags, (seen = new Set()));
  const id = `${sidecar.meta.namespace}/${sidecar.meta.name}/${field}`;
  if (seen.has(id)) return;
  seen.add(id);
  diags.warn({
    kind: 'Sidecar',
    namespace: sidecar.meta.namespace,
    name: sidecar.meta.name,
    field,
    code: 'unsupported-sidecar-field',
    message,
    ...(sidecar.origin.file !== undefined ? { file: sidecar.origin.file } : {}),
    ...(sidecar.origin.index !== undefined ? { index: sidecar.origin.index } : {}),
  });
}

/** Where a listener's traffic goes, when not to the original destination. */
function staticEndpoint(
  diags: Diagnostics,
  sidecar: Sidecar,
  l: SidecarIngressListener,
  i: number,
): { address: string; port: number } | undefined {
  const target = l.defaultEndpoint;
  if (target === undefined) return undefined;
  const field = `spec.ingress[${i}].defaultEndpoint`;
  if (target.startsWith('unix://')) {
    report(diags, sidecar, field, 'unix socket endpoints are not built: traffic goes to the original destination');
    return undefined;
  }
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d+)$/.exec(target);
  const host = m?.[1] ?? m?.[2] ?? '';
  const port = Number(m?.[3]);
  if (host === '127.0.0.1' || host === '::1') return { address: host, port };
  if (port !== l.port.number)
    report(
      diags,
      sidecar,
      field,
      `the pod's address on another port (${port}) is not built: traffic goes to the original destination`,
    );
  return undefined;
}

export function sidecarIngressPorts(
  diags: Diagnostics,
  sidecar: Sidecar,
  namespace: string,
  servicePorts: readonly InboundPort[],
): InboundPort[] {
  return (sidecar.spec.ingress ?? [])
    .map((l, i): InboundPort => {
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
      const endpoint = staticEndpoint(diags, sidecar, l, i);
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
