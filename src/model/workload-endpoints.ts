/**
 * Endpoints from workloads outside EndpointSlices, as istiod's registries make them:
 * WorkloadEntries (pilot/pkg/serviceregistry/serviceentry convertWorkloadEntryToWorkloadInstance,
 * convertWorkloadInstanceToServiceInstance) and Pods selected by a ServiceEntry, and WorkloadEntries
 * selected by a Kubernetes Service (kube/controller serviceInstanceFromWorkloadInstance). Pure.
 */
import type { Pod, Service } from './k8s.js';
import type { WorkloadEntry, WorkloadEntrySpec } from './service-entry.js';
import type { Locality, MeshEndpoint, MeshServicePort } from './service-model.js';

const TLS_MODE_LABEL = 'security.istio.io/tlsMode';
const LOCALITY_LABEL = 'istio-locality';

/** Whether every selector label is on the workload (an empty selector selects all, as a label selector does). */
export function selectsWorkload(
  selector: Readonly<Record<string, string>>,
  labels: Readonly<Record<string, string>>,
): boolean {
  for (const k in selector) if (labels[k] !== selector[k]) return false;
  return true;
}

/** `region/zone/subzone` (the WorkloadEntry field), else the `istio-locality` label (`region.zone.subzone`). */
export function entryLocality(spec: WorkloadEntrySpec): Locality {
  const label = spec.labels?.[LOCALITY_LABEL];
  const text = spec.locality ?? (label ? label.replace(/\./g, '/') : '');
  const [region = '', zone = '', subzone = ''] = text.split('/');
  return { region, zone, subzone };
}

/** istiod's getTLSModeFromWorkloadEntry: the tlsMode label, else `istio` when a service account is set. */
function entryTlsMode(spec: WorkloadEntrySpec): MeshEndpoint['tlsMode'] {
  const label = spec.labels?.[TLS_MODE_LABEL];
  if (label !== undefined) return label === 'istio' ? 'istio' : 'disabled';
  return spec.serviceAccount ? 'istio' : 'disabled';
}

/** An endpoint of a WorkloadEntry (or inline ServiceEntry endpoint) on one port; `workloadName` for telemetry. */
export function entryEndpoint(spec: WorkloadEntrySpec, port: number, workloadName: string): MeshEndpoint | undefined {
  if (spec.address === undefined) return undefined; // reached through a network gateway: not modelled
  return {
    address: spec.address,
    port,
    labels: spec.labels ?? {},
    locality: entryLocality(spec),
    health: 'HEALTHY',
    tlsMode: entryTlsMode(spec),
    ...(spec.serviceAccount !== undefined ? { serviceAccount: spec.serviceAccount } : {}),
    ...(spec.weight !== undefined ? { weight: spec.weight } : {}),
    ...(spec.network !== undefined ? { network: spec.network } : {}),
    workloadName,
  };
}

/** A ServiceEntry port's endpoint port for a workload: its named port, else targetPort, else the number. */
export function entryPort(
  portMap: Readonly<Record<string, number>> | undefined,
  port: { readonly name?: string; readonly port: number; readonly targetPort: number | string },
): number {
  const named = port.name !== undefined ? portMap?.[port.name] : undefined;
  if (named !== undefined && named > 0) return named;
  return typeof port.targetPort === 'number' && port.targetPort > 0 ? port.targetPort : port.port;
}

/** A Pod selected by a ServiceEntry's workloadSelector, on one service port. */
export function podEndpoint(pod: Pod, port: MeshServicePort, locality: Locality): MeshEndpoint | undefined {
  const address = pod.ips[0];
  if (address === undefined) return undefined;
  const portMap: Record<string, number> = {};
  for (const p of pod.containerPorts) if (p.name !== undefined) portMap[p.name] = p.containerPort;
  const labels = pod.meta.labels;
  return {
    address,
    port: entryPort(portMap, port),
    labels,
    locality,
    health: pod.ready ? 'HEALTHY' : 'UNHEALTHY',
    tlsMode: labels[TLS_MODE_LABEL] === 'istio' ? 'istio' : 'disabled',
    podName: pod.meta.name,
    serviceAccount: pod.serviceAccount,
  };
}

/** Whether an address is an IP (not a DNS name). */
export const isIp = (s: string): boolean => /^[0-9.]+$/.test(s) || s.includes(':');

/**
 * The endpoints a Kubernetes Service with a selector gets from the healthy WorkloadEntries of its
 * namespace it selects, per service port (istiod: only services with a cluster IP, only entries
 * with an IP address). A numeric targetPort is used unless the entry names the service port; a
 * named targetPort must be among the entry's ports, else the entry is left out of that port.
 */
export function workloadEntryEndpoints(
  svc: Service,
  ports: readonly MeshServicePort[],
  entries: readonly WorkloadEntry[],
): Map<number, MeshEndpoint[]> {
  const out = new Map<number, MeshEndpoint[]>();
  const selector = svc.selector;
  if (!selector || Object.keys(selector).length === 0 || svc.type === 'ExternalName' || svc.clusterIP === 'None')
    return out;
  for (const we of entries) {
    const labels = we.spec.labels ?? {};
    if (!we.healthy || we.spec.address === undefined || !isIp(we.spec.address) || !selectsWorkload(selector, labels))
      continue;
    for (const sp of ports) {
      let port: number | undefined;
      if (typeof sp.targetPort === 'string') port = we.spec.ports?.[sp.targetPort];
      else port = (sp.name !== undefined ? we.spec.ports?.[sp.name] : undefined) || sp.targetPort || sp.port;
      if (port === undefined || port === 0) continue;
      const ep = entryEndpoint(we.spec, port, we.meta.name);
      if (!ep) continue;
      const list = out.get(sp.port);
      if (list) list.push(ep);
      else out.set(sp.port, [ep]);
    }
  }
  return out;
}
