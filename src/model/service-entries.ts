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
 * istiod keeps one service per (namespace, host) and each proxy sees the one its namespace picks
 * (pilot/pkg/model/sidecar.go appendSidecarServices over servicesExportedToNamespace); so does
 * meshsnap: the entries of one namespace sharing a host merge into one service (the first in name
 * order owns its resolution, location, addresses; the others add ports and endpoints, as istiod
 * merges them), and a host several namespaces define has a candidate per namespace, in istiod's
 * order (oldest first, then namespace). The model's service for the host is the candidate a
 * namespace sees when nothing but public entries reach it (the first exported to `*`, else the
 * first); compile/scope/host-choice.ts picks another namespace's. A host a Kubernetes Service owns
 * is skipped with a `duplicate-host` warning (istiod prefers the Kubernetes Service wherever it
 * is visible), and so is another namespace's entry with a `workloadSelector` for a host that
 * already has a candidate (its workloads' inbound would need the model's one service per host). Pure.
 */
import { exportedToAll } from './export-to.js';
import { trafficDistributionOf } from './traffic-distribution.js';
import type { Diagnostics } from './diagnostics.js';
import type { Pod } from './k8s.js';
import type { ServiceEntry, WorkloadEntry } from './service-entry.js';
import {
  type HostCandidate,
  type Locality,
  type MeshEndpoint,
  type MeshService,
  type MeshServicePort,
} from './service-model.js';
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
  /** Hosts entries of several namespaces define: every candidate, in istiod's order. */
  readonly hostCandidates: Map<string, HostCandidate[]>;
}

const isDns = (se: ServiceEntry): boolean => se.spec.resolution === 'DNS' || se.spec.resolution === 'DNS_ROUND_ROBIN';

/** `1.2.3.4/32` → `1.2.3.4` (istiod turns full-length prefixes into plain addresses). */
function address(a: string): string {
  const slash = a.indexOf('/');
  if (slash < 0) return a;
  const bits = a.includes(':') ? 128 : 32;
  return Number(a.slice(slash + 1)) === bits ? a.slice(0, slash) : a;
}

/**
 * `taken`: hostnames Kubernetes Services already own; `defaultExportTo`: the mesh's
 * `defaultServiceExportTo` (which entries count as exported to every namespace).
 */
export function buildServiceEntryServices(
  inputs: ServiceEntryInputs,
  taken: ReadonlySet<string>,
  diags: Diagnostics,
  defaultExportTo: readonly string[] | undefined = undefined,
): ServiceEntryServices {
  // hostname → namespace → the entries of that namespace declaring it, in namespace/name order.
  const byHost = new Map<string, Map<string, Declaration[]>>();
  for (const se of inputs.serviceEntries) {
    const ports = servicePorts(se, diags);
    for (const [i, rawHost] of se.spec.hosts.entries()) {
      const hostname = rawHost.toLowerCase();
      if (taken.has(hostname)) {
        skipped(
          diags,
          se,
          i,
          `host ${hostname} is already defined by a Kubernetes Service; this entry's host is skipped`,
        );
        continue;
      }
      let byNamespace = byHost.get(hostname);
      if (!byNamespace) byHost.set(hostname, (byNamespace = new Map()));
      const declarations = byNamespace.get(se.meta.namespace);
      if (declarations) declarations.push({ se, ports, index: i });
      else byNamespace.set(se.meta.namespace, [{ se, ports, index: i }]);
    }
  }
  const services: MeshService[] = [];
  const endpoints = new Map<string, Map<number, MeshEndpoint[]>>();
  const hostCandidates = new Map<string, HostCandidate[]>();
  for (const [hostname, byNamespace] of byHost) {
    const candidates = [...byNamespace.values()]
      .map((declarations) => candidate(inputs, hostname, declarations))
      .sort(istiodOrder);
    const first =
      candidates.find((c) => exportedToAll(c.service.exportTo, defaultExportTo)) ?? (candidates[0] as Candidate);
    const kept = candidates.filter((c) => {
      if (c === first || !c.service.serviceEntry?.workloadSelector) return true;
      const { se, index } = c.owner;
      skipped(
        diags,
        se,
        index,
        `host ${hostname} is also defined by ServiceEntry ${first.owner.se.meta.namespace}/${first.owner.se.meta.name}; an entry of another namespace that selects workloads for it is not supported, this entry's host is skipped`,
      );
      return false;
    });
    services.push(first.service);
    endpoints.set(hostname, first.endpoints);
    if (kept.length > 1) hostCandidates.set(hostname, kept);
  }
  return { services, endpoints, hostCandidates };
}

/** One namespace's entries declaring a host. */
interface Declaration {
  readonly se: ServiceEntry;
  readonly ports: MeshServicePort[];
  /** The host's index in the entry's `spec.hosts`. */
  readonly index: number;
}

/** A namespace's candidate for a host, with the entry that owns it (the first in name order). */
interface Candidate extends HostCandidate {
  readonly endpoints: Map<number, MeshEndpoint[]>;
  readonly owner: Declaration;
}

/** istiod's SortServicesByCreationTime: oldest first, then (same host) by namespace. */
const istiodOrder = (a: Candidate, b: Candidate): number =>
  a.created !== b.created
    ? a.created < b.created
      ? -1
      : 1
    : a.service.namespace < b.service.namespace
      ? -1
      : a.service.namespace > b.service.namespace
        ? 1
        : 0;

function candidate(inputs: ServiceEntryInputs, hostname: string, declarations: readonly Declaration[]): Candidate {
  // Entries of one namespace sharing a host merge their ports (the first declaring a number owns it), as istiod's sidecar scope merges them.
  const ports: MeshServicePort[] = [];
  const byPort = new Map<number, MeshEndpoint[]>();
  let created: string | undefined;
  for (const { se, ports: declared } of declarations) {
    const age = se.creationTimestamp ?? '';
    if (created === undefined || age < created) created = age;
    for (const port of declared) {
      const owned = ports.find((p) => p.port === port.port);
      if (!owned) ports.push(port);
      const list = byPort.get(port.port) ?? [];
      list.push(...entryEndpoints(inputs, se, hostname, port));
      byPort.set(port.port, list);
    }
  }
  for (const list of byPort.values()) list.sort(byAddress);
  const owner = declarations[0] as Declaration;
  return {
    service: meshService(owner.se, hostname, ports, inputs.namespaceAnnotations?.(owner.se.meta.namespace)),
    endpoints: byPort,
    created: created ?? '',
    owner,
  };
}

function skipped(diags: Diagnostics, se: ServiceEntry, index: number, message: string): void {
  diags.warn({
    code: 'duplicate-host',
    message,
    kind: 'ServiceEntry',
    namespace: se.meta.namespace,
    name: se.meta.name,
    field: `spec.hosts[${index}]`,
    ...se.origin,
  });
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
