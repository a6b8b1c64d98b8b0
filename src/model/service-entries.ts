/**
 * ServiceEntries → MeshServices and MeshEndpoints, as istiod's ServiceEntry registry builds them
 * (pilot/pkg/serviceregistry/serviceentry/conversion.go convertServices and
 * convertServiceEntryToInstances, controller.go's workload selection):
 *
 * - one service per host (hostname as written, lower-cased), in the entry's namespace, named by
 *   the host; ports and protocols as written (no protocol: TCP, with `protocol-defaulted`);
 * - endpoints from `spec.endpoints`; else from the healthy WorkloadEntries and the Pods of the
 *   namespace the `workloadSelector` picks (entries with a DNS name only for DNS resolution);
 *   else, for DNS resolutions, the host itself;
 * - an endpoint's port: its named port for the service port, else the port's targetPort, else its number.
 *
 * istiod keeps one service per (namespace, host); meshsnap's model has one per host: the first
 * entry in namespace/name order owns a host (its resolution, location, addresses), later entries
 * of the same namespace add their ports and endpoints (istiod merges them the same way), and a
 * host already owned by a Kubernetes Service or by another namespace's entry is skipped with a
 * `duplicate-host` warning. Pure.
 */
import { trafficDistributionOf } from './traffic-distribution.js';
import type { Diagnostics } from './diagnostics.js';
import type { Pod } from './k8s.js';
import type { ServiceEntry, WorkloadEntry } from './service-entry.js';
import type { Locality, MeshEndpoint, MeshService, MeshServicePort } from './service-model.js';
import { entryEndpoint, entryPort, isIp, podEndpoint, selectsWorkload } from './workload-endpoints.js';

export interface ServiceEntryInputs {
  readonly serviceEntries: readonly ServiceEntry[];
  /** By namespace, in name order. */
  readonly workloadEntries: ReadonlyMap<string, readonly WorkloadEntry[]>;
  /** A namespace's pods, in name order. */
  readonly podsIn: (namespace: string) => readonly Pod[];
  readonly podLocality: (pod: Pod) => Locality;
  /** A namespace's annotations (its traffic distribution). */
  readonly namespaceAnnotations?: (namespace: string) => Readonly<Record<string, string>> | undefined;
}

export interface ServiceEntryServices {
  readonly services: MeshService[];
  readonly endpoints: Map<string, Map<number, MeshEndpoint[]>>;
}

const isDns = (se: ServiceEntry): boolean => se.spec.resolution === 'DNS' || se.spec.resolution === 'DNS_ROUND_ROBIN';

/** `1.2.3.4/32` → `1.2.3.4` (istiod turns full-length prefixes into plain addresses). */
function address(a: string): string {
  const slash = a.indexOf('/');
  if (slash < 0) return a;
  const bits = a.includes(':') ? 128 : 32;
  return Number(a.slice(slash + 1)) === bits ? a.slice(0, slash) : a;
}

/** `taken`: hostnames Kubernetes Services already own. */
export function buildServiceEntryServices(
  inputs: ServiceEntryInputs,
  taken: ReadonlySet<string>,
  diags: Diagnostics,
): ServiceEntryServices {
  // hostname → the entries (of the first entry's namespace) that declare it, in namespace/name order.
  const byHost = new Map<string, { se: ServiceEntry; ports: MeshServicePort[] }[]>();
  for (const se of inputs.serviceEntries) {
    const ports = servicePorts(se, diags);
    for (const [i, rawHost] of se.spec.hosts.entries()) {
      const hostname = rawHost.toLowerCase();
      const owners = byHost.get(hostname);
      const owner = owners?.[0]?.se;
      if (taken.has(hostname) || (owner && owner.meta.namespace !== se.meta.namespace)) {
        diags.warn({
          code: 'duplicate-host',
          message: `host ${hostname} is already defined by ${owner ? `ServiceEntry ${owner.meta.namespace}/${owner.meta.name}` : 'a Kubernetes Service'}; this entry's host is skipped`,
          kind: 'ServiceEntry',
          namespace: se.meta.namespace,
          name: se.meta.name,
          field: `spec.hosts[${i}]`,
          ...se.origin,
        });
        continue;
      }
      if (owners) owners.push({ se, ports });
      else byHost.set(hostname, [{ se, ports }]);
    }
  }
  const services: MeshService[] = [];
  const endpoints = new Map<string, Map<number, MeshEndpoint[]>>();
  for (const [hostname, entries] of byHost) {
    // Entries of one namespace sharing a host merge their ports (the first declaring a number owns it), as istiod's sidecar scope merges them.
    const ports: MeshServicePort[] = [];
    const byPort = new Map<number, MeshEndpoint[]>();
    for (const { se, ports: declared } of entries) {
      for (const port of declared) {
        const owned = ports.find((p) => p.port === port.port);
        if (!owned) ports.push(port);
        const list = byPort.get(port.port) ?? [];
        list.push(...entryEndpoints(inputs, se, hostname, port));
        byPort.set(port.port, list);
      }
    }
    for (const list of byPort.values()) list.sort(byAddress);
    const first = entries[0] as { se: ServiceEntry };
    services.push(meshService(first.se, hostname, ports, inputs.namespaceAnnotations?.(first.se.meta.namespace)));
    endpoints.set(hostname, byPort);
  }
  return { services, endpoints };
}

function servicePorts(se: ServiceEntry, diags: Diagnostics): MeshServicePort[] {
  return se.spec.ports.map((p, i) => {
    if (p.protocol === undefined)
      diags.info({
        code: 'protocol-defaulted',
        message: `port ${p.number} (${p.name}) names no protocol; sidecars sniff it outbound (HTTP by the host's http routes, the rest as TCP) and take it as TCP inbound (set protocol)`,
        kind: 'ServiceEntry',
        namespace: se.meta.namespace,
        name: se.meta.name,
        field: `spec.ports[${i}].protocol`,
        ...se.origin,
      });
    const port = { name: p.name, port: p.number, targetPort: p.targetPort ?? p.number };
    return p.protocol === undefined
      ? { ...port, protocol: 'TCP', protocolDefaulted: true }
      : { ...port, protocol: p.protocol };
  });
}

function meshService(
  se: ServiceEntry,
  hostname: string,
  ports: MeshServicePort[],
  namespaceAnnotations: Readonly<Record<string, string>> | undefined,
): MeshService {
  const { spec } = se;
  const trafficDistribution = trafficDistributionOf(undefined, se.meta.annotations, namespaceAnnotations);
  return {
    hostname,
    name: hostname,
    namespace: se.meta.namespace,
    labels: se.meta.labels,
    headless: false,
    ports: [...ports].sort((a, b) => a.port - b.port),
    origin: se.origin,
    ...(spec.exportTo ? { exportTo: spec.exportTo } : {}),
    ...(trafficDistribution ? { trafficDistribution } : {}),
    serviceEntry: {
      entryName: se.meta.name,
      resolution: spec.resolution,
      location: spec.location,
      addresses: (spec.addresses ?? []).map(address),
      subjectAltNames: spec.subjectAltNames ?? [],
      ...(spec.workloadSelector ? { workloadSelector: spec.workloadSelector } : {}),
    },
  };
}

function entryEndpoints(
  inputs: ServiceEntryInputs,
  se: ServiceEntry,
  hostname: string,
  port: MeshServicePort,
): MeshEndpoint[] {
  const out: MeshEndpoint[] = [];
  const push = (ep: MeshEndpoint | undefined) => {
    if (ep) out.push(ep);
  };
  const { spec } = se;
  const selector = spec.workloadSelector;
  if (spec.endpoints) {
    spec.endpoints.forEach((e) => push(entryEndpoint(e, entryPort(e.ports, port), se.meta.name)));
  } else if (selector) {
    for (const we of inputs.workloadEntries.get(se.meta.namespace) ?? []) {
      if (!we.healthy || !selectsWorkload(selector, we.spec.labels ?? {})) continue;
      // An entry with a DNS name can only back a DNS-resolved service.
      if (we.spec.address !== undefined && !isIp(we.spec.address) && !isDns(se)) continue;
      push(entryEndpoint(we.spec, entryPort(we.spec.ports, port), we.meta.name));
    }
    for (const pod of inputs.podsIn(se.meta.namespace))
      if (pod.ips.length > 0 && selectsWorkload(selector, pod.meta.labels))
        push(podEndpoint(pod, port, inputs.podLocality(pod)));
  } else if (isDns(se)) {
    out.push({
      address: hostname,
      port: entryPort(undefined, port),
      labels: {},
      locality: { region: '', zone: '', subzone: '' },
      health: 'HEALTHY',
      tlsMode: 'disabled',
      workloadName: se.meta.name,
    });
  }
  return out;
}

function byAddress(a: MeshEndpoint, b: MeshEndpoint): number {
  if (a.address !== b.address) return a.address < b.address ? -1 : 1;
  return a.port - b.port;
}
