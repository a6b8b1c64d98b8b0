/**
 * The service model builder: Services + EndpointSlices (or legacy Endpoints) + Pods + Nodes →
 * MeshServices and MeshEndpoints, as istiod's Kubernetes registry builds `model.Service` and
 * `IstioEndpoint`. Pure; every lookup goes through a Map (10k services must build in milliseconds).
 */
import type { Diagnostics } from './diagnostics.js';
import { flat } from './flat-string.js';
import type { WorkloadEntry } from './service-entry.js';
import { buildServiceEntryServices } from './service-entries.js';
import { trafficDistributionOf } from './traffic-distribution.js';
import { entryLocality, isIp, workloadEntryEndpoints } from './workload-endpoints.js';
import type { InputSet } from './inputs.js';
import type {
  EndpointPort,
  EndpointSlice,
  Endpoints,
  Node,
  ObjectRef,
  Pod,
  PortProtocol,
  Service,
  ServicePort,
} from './k8s.js';
import { SERVICE_EXPORT_TO_ANNOTATION } from './k8s.js';
import {
  endpointNodesMatter,
  localityKey,
  type HealthStatus,
  type Locality,
  type MeshEndpoint,
  type MeshService,
  type MeshServicePort,
  type Protocol,
  type ServiceModel,
  type Workload,
} from './service-model.js';

const PROTOCOL_BY_PREFIX: Readonly<Record<string, Protocol>> = {
  http: 'HTTP',
  http2: 'HTTP2',
  https: 'HTTPS',
  grpc: 'GRPC',
  'grpc-web': 'GRPC-Web',
  tcp: 'TCP',
  tls: 'TLS',
  mongo: 'Mongo',
  redis: 'Redis',
  mysql: 'MySQL',
  udp: 'UDP',
};

/** Kubernetes' standard appProtocol names. */
const APP_PROTOCOLS: Readonly<Record<string, Protocol>> = {
  'kubernetes.io/h2c': 'HTTP2',
  h2c: 'HTTP2',
  'kubernetes.io/ws': 'HTTP',
  ws: 'HTTP',
  'kubernetes.io/wss': 'HTTPS',
};

/** Ports istiod never sniffs (SMTP, DNS, MySQL, MongoDB): plain TCP when the name says nothing. */
const WELL_KNOWN_TCP_PORTS = new Set([25, 53, 3306, 27017]);

/**
 * The protocol of a Service port, as istiod decides it: UDP ports are UDP; then `appProtocol`,
 * else the port name's prefix before the first `-` (case-insensitive; `grpc-web` is checked first
 * since it contains a `-`). Undefined: the name says nothing. istiod would then sniff the protocol
 * at runtime; meshsnap does not sniff, so the caller treats such ports as TCP.
 */
export function portProtocol(port: {
  readonly name?: string;
  readonly protocol: PortProtocol;
  readonly appProtocol?: string;
}): Protocol | undefined {
  if (port.protocol === 'UDP') return 'UDP';
  const name = (port.appProtocol ?? port.name ?? '').toLowerCase();
  if (port.appProtocol !== undefined) {
    const std = APP_PROTOCOLS[name];
    if (std) return std;
  }
  if (name.startsWith('grpc-web')) return 'GRPC-Web';
  const dash = name.indexOf('-');
  const prefix = dash >= 0 ? name.slice(0, dash) : name;
  return Object.hasOwn(PROTOCOL_BY_PREFIX, prefix) ? PROTOCOL_BY_PREFIX[prefix] : undefined;
}

export function serviceHostname(name: string, namespace: string, domainSuffix: string): string {
  return flat(`${name}.${namespace}.svc.${domainSuffix}`);
}

/** namespace → name → value: no key strings built per lookup. */
export type ByNamespace<T> = Map<string, Map<string, T>>;

function put<T>(m: ByNamespace<T>, ns: string, name: string, v: T): void {
  let inner = m.get(ns);
  if (!inner) m.set(ns, (inner = new Map()));
  inner.set(name, v);
}

/** The lookups the builder joins objects through; exported (with `indexInputs`) for incremental compiles. */
export interface Indexes {
  readonly podsByName: ByNamespace<Pod>;
  readonly podsByIp: ReadonlyMap<string, Pod>;
  readonly nodes: ReadonlyMap<string, Node>;
  readonly slicesByService: ByNamespace<EndpointSlice[]>;
  readonly endpointsByName: ByNamespace<Endpoints>;
  /** WorkloadEntries by namespace, in name order: Kubernetes Services select them too. */
  readonly workloadEntries: ReadonlyMap<string, readonly WorkloadEntry[]>;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const byNsName = <T extends { readonly meta: { readonly namespace: string; readonly name: string } }>(
  a: T,
  b: T,
): number => cmp(a.meta.namespace, b.meta.namespace) || cmp(a.meta.name, b.meta.name);

export function buildServiceModel(inputs: InputSet, diags: Diagnostics): ServiceModel {
  const idx = index(inputs);
  const domain = inputs.meshConfig.domainSuffix;
  const services: MeshService[] = [];
  const endpoints = new Map<string, ReadonlyMap<number, readonly MeshEndpoint[]>>();
  const namespaceAnnotations = new Map(inputs.namespaces.map((n) => [n.meta.name, n.meta.annotations]));
  for (const svc of [...inputs.services].sort(byNsName)) {
    const ms = meshService(svc, domain, diags, namespaceAnnotations.get(svc.meta.namespace));
    services.push(ms);
    endpoints.set(ms.hostname, serviceEndpoints(svc, ms, idx));
  }
  const entries = buildServiceEntryServices(
    {
      serviceEntries: inputs.serviceEntries,
      workloadEntries: idx.workloadEntries,
      podsIn: (ns) => [...(idx.podsByName.get(ns)?.values() ?? [])],
      podLocality: (pod) => locality(undefined, undefined, pod, idx),
      namespaceAnnotations: (ns) => namespaceAnnotations.get(ns),
    },
    new Set(services.map((s) => s.hostname)),
    diags,
    inputs.meshConfig.defaultServiceExportTo,
  );
  for (const s of entries.services) services.push(s);
  for (const [host, byPort] of entries.endpoints) endpoints.set(host, byPort);
  services.sort((a, b) => cmp(a.hostname, b.hostname));

  const namespaces = new Set<string>();
  for (const n of inputs.namespaces) namespaces.add(n.meta.name);
  for (const s of inputs.services) namespaces.add(s.meta.namespace);
  for (const s of inputs.serviceEntries) namespaces.add(s.meta.namespace);
  for (const p of inputs.pods) namespaces.add(p.meta.namespace);
  for (const w of inputs.workloadEntries) namespaces.add(w.meta.namespace);

  const workloads: Workload[] = [...inputs.pods]
    .filter((p) => p.ips.length > 0)
    .sort(byNsName)
    .map((p) => ({
      namespace: p.meta.namespace,
      name: p.meta.name,
      labels: p.meta.labels,
      ips: [...p.ips].sort(),
      serviceAccount: p.serviceAccount,
      ...(p.proxyConfig ? { proxyConfig: p.proxyConfig } : {}),
    }));

  const entryWorkloads: Workload[] = [...inputs.workloadEntries].sort(byNsName).map((w) => ({
    namespace: w.meta.namespace,
    name: w.meta.name,
    labels: w.spec.labels ?? {},
    ips: w.spec.address !== undefined && isIp(w.spec.address) ? [w.spec.address] : [],
    serviceAccount: w.spec.serviceAccount ?? 'default',
  }));

  return {
    services,
    byHostname: new Map(services.map((s) => [s.hostname, s])),
    endpoints,
    ...(entries.hostCandidates.size ? { hostCandidates: entries.hostCandidates } : {}),
    ...proxyLocalities(inputs, idx),
    ...(services.some(endpointNodesMatter) ? { proxyNodes: proxyNodes(inputs, idx) } : {}),
    namespaces: [...namespaces].sort(),
    workloads,
    entryWorkloads,
    virtualServices: [...inputs.virtualServices].sort(byNsName),
    destinationRules: [...inputs.destinationRules].sort(byNsName),
    gateways: [...inputs.gateways].sort(byNsName),
  };
}

const UNNAMEABLE = /[@#/]/;

/**
 * Where proxies can be: the localities of Nodes, of pods' `istio-locality` labels and of
 * WorkloadEntries (the empty one left out), and each located Node's, for relays that place a proxy
 * by its NODE_NAME when it does not say its locality (istiod reads it from the registry then).
 */
function proxyLocalities(inputs: InputSet, idx: Indexes): Pick<ServiceModel, 'proxyLocalities' | 'nodeLocalities'> {
  const byKey = new Map<string, Locality>();
  const add = (l: Locality): void => {
    // A part holding `@`, `#` or `/` cannot name a locality group or class (no Kubernetes label value
    // can hold one; a WorkloadEntry's or a pod label's may, in files): no variant for it.
    if (UNNAMEABLE.test(l.region) || UNNAMEABLE.test(l.zone) || UNNAMEABLE.test(l.subzone)) return;
    if (l.region || l.zone || l.subzone) byKey.set(localityKey(l), l);
  };
  const nodeLocalities = new Map<string, Locality>();
  for (const name of [...idx.nodes.keys()].sort()) {
    const l = locality(name, undefined, undefined, idx);
    if (!(l.region || l.zone || l.subzone)) continue;
    nodeLocalities.set(name, l);
    add(l);
  }
  for (const pod of inputs.pods) if (pod.meta.labels['istio-locality']) add(locality(undefined, undefined, pod, idx));
  for (const w of inputs.workloadEntries) add(entryLocality(w.spec));
  const keys = [...byKey.keys()].sort();
  return { proxyLocalities: keys.map((k) => byKey.get(k) as Locality), nodeLocalities };
}

/** The Kubernetes node names proxies can be on: the Nodes', and those pods name (`spec.nodeName`). */
function proxyNodes(inputs: InputSet, idx: Indexes): string[] {
  const names = new Set(idx.nodes.keys());
  // A name holding `@`, `#` or `/` (no Kubernetes name can; a pod's in a file may) names no group or class.
  for (const pod of inputs.pods) if (pod.nodeName && !UNNAMEABLE.test(pod.nodeName)) names.add(pod.nodeName);
  return [...names].sort();
}

/** Builds the lookups of `buildServiceModel` (src/compile/incremental keeps them up to date). */
export function indexInputs(inputs: InputSet): Indexes {
  return index(inputs);
}

function index(inputs: InputSet): Indexes {
  const podsByName: ByNamespace<Pod> = new Map();
  const podsByIp = new Map<string, Pod>();
  // Sorted first so that, when two pods claim an IP (host network), the same one always wins.
  for (const pod of [...inputs.pods].sort(byNsName)) {
    put(podsByName, pod.meta.namespace, pod.meta.name, pod);
    for (const ip of pod.ips) if (!podsByIp.has(ip)) podsByIp.set(ip, pod);
  }
  const nodes = new Map(inputs.nodes.map((n) => [n.meta.name, n]));
  const slicesByService: ByNamespace<EndpointSlice[]> = new Map();
  for (const s of [...inputs.endpointSlices].sort(byNsName)) {
    if (s.serviceName === '') continue;
    const list = slicesByService.get(s.meta.namespace)?.get(s.serviceName);
    if (list) list.push(s);
    else put(slicesByService, s.meta.namespace, s.serviceName, [s]);
  }
  const endpointsByName: ByNamespace<Endpoints> = new Map();
  for (const e of inputs.endpoints) put(endpointsByName, e.meta.namespace, e.meta.name, e);
  const workloadEntries = new Map<string, WorkloadEntry[]>();
  for (const we of [...inputs.workloadEntries].sort(byNsName)) {
    const list = workloadEntries.get(we.meta.namespace);
    if (list) list.push(we);
    else workloadEntries.set(we.meta.namespace, [we]);
  }
  return { podsByName, podsByIp, nodes, slicesByService, endpointsByName, workloadEntries };
}

const PROTOCOL_RANK: Readonly<Record<PortProtocol, number>> = { TCP: 0, SCTP: 1, UDP: 2 };

function meshService(
  svc: Service,
  domain: string,
  diags: Diagnostics,
  namespaceAnnotations: Readonly<Record<string, string>> | undefined,
): MeshService {
  const { name, namespace } = svc.meta;
  // One mesh port per number: a 53/TCP + 53/UDP pair keeps the TCP one (the mesh proxies TCP).
  const sorted =
    svc.ports.length < 2
      ? svc.ports
      : [...svc.ports].sort((a, b) => a.port - b.port || PROTOCOL_RANK[a.protocol] - PROTOCOL_RANK[b.protocol]);
  const ports: MeshServicePort[] = [];
  for (const p of sorted) {
    if (ports.length > 0 && ports[ports.length - 1]!.port === p.port) continue;
    let protocol = portProtocol(p);
    // No protocol named (istiod's `Unsupported`): TCP, and sniffed by sidecars but on well-known TCP ports.
    let defaulted = false;
    if (protocol === undefined) {
      protocol = 'TCP';
      defaulted = !WELL_KNOWN_TCP_PORTS.has(p.port);
      if (defaulted) {
        const field = `spec.ports[${svc.ports.indexOf(p)}]`;
        diags.info({
          code: 'protocol-defaulted',
          message: `port ${p.port}${p.name ? ` (${p.name})` : ''} names no protocol; sidecars sniff it outbound (HTTP by the host's http routes, the rest as TCP) and take it as TCP inbound (name it http-…, grpc-…, tcp-… or set appProtocol)`,
          kind: 'Service',
          namespace,
          name,
          field,
          ...svc.origin,
        });
      }
    }
    const port: MeshServicePort =
      p.name !== undefined
        ? { name: p.name, port: p.port, targetPort: p.targetPort, protocol }
        : { port: p.port, targetPort: p.targetPort, protocol };
    ports.push(defaulted ? { ...port, protocolDefaulted: true } : port);
  }
  const headless = svc.clusterIP === 'None';
  const clusterIP = !headless && svc.clusterIP ? svc.clusterIP : undefined;
  const exportTo = annotatedExportTo(svc.meta.annotations);
  // Members set in the order of the type, optional ones only when present (no spread temporaries).
  const ms = { hostname: serviceHostname(name, namespace, domain), name, namespace, labels: svc.meta.labels } as {
    -readonly [K in keyof MeshService]: MeshService[K];
  };
  if (clusterIP !== undefined) ms.clusterIP = clusterIP;
  ms.headless = headless;
  if (svc.externalName !== undefined && svc.type === 'ExternalName') ms.externalName = svc.externalName;
  if (svc.selector !== undefined) ms.selector = svc.selector;
  ms.ports = ports;
  if (exportTo) ms.exportTo = exportTo;
  const distribution = trafficDistributionOf(svc.trafficDistribution, svc.meta.annotations, namespaceAnnotations);
  if (distribution) ms.trafficDistribution = distribution;
  // istiod's conversion: internalTrafficPolicy Local makes the service NodeLocal.
  if (svc.internalTrafficPolicy === 'Local') ms.nodeLocal = true;
  ms.origin = svc.origin;
  return ms;
}

/** istiod's kube controller: the `networking.istio.io/exportTo` annotation, comma-separated, trimmed. */
function annotatedExportTo(annotations: Readonly<Record<string, string>>): string[] | undefined {
  const value = annotations[SERVICE_EXPORT_TO_ANNOTATION];
  if (value === undefined) return undefined;
  const list = [...new Set(value.split(',').map((e) => e.trim()))].filter((e) => e !== '');
  return list.length ? list : undefined;
}

/** The slice port serving a Service port: same name, or the only port when the Service port is unnamed. */
function matchPort(sp: ServicePort | MeshServicePort, ports: readonly EndpointPort[]): EndpointPort | undefined {
  const named = ports.find((p) => p.name === sp.name);
  if (named) return named;
  return sp.name === undefined && ports.length === 1 ? ports[0] : undefined;
}

/** One service's model endpoints from the lookups: what `buildServiceModel` puts in `endpoints` for it. */
export function serviceEndpoints(svc: Service, ms: MeshService, idx: Indexes): Map<number, readonly MeshEndpoint[]> {
  const out = new Map<number, readonly MeshEndpoint[]>();
  if (svc.type === 'ExternalName') return out;
  const slices = idx.slicesByService.get(svc.meta.namespace)?.get(svc.meta.name);
  const legacy = slices ? undefined : idx.endpointsByName.get(svc.meta.namespace)?.get(svc.meta.name);
  // Endpoints keep their pod's node where the proxy's node decides what it gets.
  const keepNode = endpointNodesMatter(ms);
  for (const sp of ms.ports) {
    const list: MeshEndpoint[] = [];
    const ns = svc.meta.namespace;
    for (const slice of slices ?? []) {
      if (slice.addressType === 'FQDN') continue;
      const p = matchPort(sp, slice.ports);
      if (!p) continue;
      for (const e of slice.endpoints) {
        // Ready → serving traffic; not ready but still serving while terminating → draining.
        const health: HealthStatus = e.ready ? 'HEALTHY' : e.serving && e.terminating ? 'DRAINING' : 'UNHEALTHY';
        for (const address of e.addresses)
          list.push(meshEndpoint(address, health, e.targetRef, e.nodeName, e.zone, p.port, ns, idx, keepNode));
      }
    }
    for (const subset of legacy?.subsets ?? []) {
      const p = matchPort(sp, subset.ports);
      if (!p) continue;
      for (const a of subset.addresses)
        list.push(meshEndpoint(a.ip, 'HEALTHY', a.targetRef, a.nodeName, undefined, p.port, ns, idx, keepNode));
      for (const a of subset.notReadyAddresses)
        list.push(meshEndpoint(a.ip, 'UNHEALTHY', a.targetRef, a.nodeName, undefined, p.port, ns, idx, keepNode));
    }
    out.set(sp.port, dedupeEndpoints(list));
  }
  const entries = idx.workloadEntries.get(svc.meta.namespace);
  if (entries) {
    for (const [port, list] of workloadEntryEndpoints(svc, ms.ports, entries))
      out.set(port, dedupeEndpoints([...(out.get(port) ?? []), ...list]));
  }
  return out;
}

const HEALTH_RANK: Readonly<Record<HealthStatus, number>> = { HEALTHY: 0, DRAINING: 1, UNHEALTHY: 2 };

const byEndpointOrder = (a: MeshEndpoint, b: MeshEndpoint): number =>
  cmp(a.address, b.address) ||
  a.port - b.port ||
  HEALTH_RANK[a.health] - HEALTH_RANK[b.health] ||
  cmp(a.podName ?? '', b.podName ?? '');

/** Whether `list` is sorted by `compare` already (ties allowed: a stable sort would keep them as they are). */
function inOrder<T>(list: readonly T[], compare: (a: T, b: T) => number): boolean {
  for (let i = 1; i < list.length; i++) if (compare(list[i - 1] as T, list[i] as T) > 0) return false;
  return true;
}

/** Sorted by address then port; of identical address+port, the healthiest (then first by pod name) stays. */
function dedupeEndpoints(list: MeshEndpoint[]): MeshEndpoint[] {
  // Slices usually list their endpoints in this order already: sort only when not (Array#sort
  // allocates a work array per call, and a compile makes one list per service port).
  if (!inOrder(list, byEndpointOrder)) list.sort(byEndpointOrder);
  return list.filter((e, i) => {
    const prev = list[i - 1];
    return !prev || prev.address !== e.address || prev.port !== e.port;
  });
}

/** One address of a slice or legacy Endpoints subset, joined with its pod (by targetRef, else by IP) and node. */
function meshEndpoint(
  address: string,
  health: HealthStatus,
  ref: ObjectRef | undefined,
  nodeName: string | undefined,
  zone: string | undefined,
  port: number,
  namespace: string,
  idx: Indexes,
  keepNode: boolean,
): MeshEndpoint {
  const byRef =
    ref && (ref.kind === 'Pod' || ref.kind === '')
      ? idx.podsByName.get(ref.namespace ?? namespace)?.get(ref.name)
      : undefined;
  const pod = byRef ?? idx.podsByIp.get(address);
  const labels = pod?.meta.labels ?? {};
  const where = locality(nodeName, zone, pod, idx);
  const tlsMode = labels['security.istio.io/tlsMode'] === 'istio' ? 'istio' : 'disabled';
  const ep: MeshEndpoint = pod
    ? {
        address,
        port,
        labels,
        locality: where,
        health,
        tlsMode,
        podName: pod.meta.name,
        serviceAccount: pod.serviceAccount,
      }
    : { address, port, labels, locality: where, health, tlsMode };
  // istiod's endpoint builder takes the node from the pod (spec.nodeName), not from the slice.
  return keepNode && pod?.nodeName ? { ...ep, nodeName: pod.nodeName } : ep;
}

/**
 * Node topology labels (the endpoint's node, else its pod's), else the slice's zone; the pod label
 * `istio-locality` (region.zone.subzone) wins.
 */
function locality(
  endpointNode: string | undefined,
  zone: string | undefined,
  pod: Pod | undefined,
  idx: Indexes,
): Locality {
  const override = pod?.meta.labels['istio-locality'];
  if (override !== undefined && override !== '') {
    const [region = '', zone = '', subzone = ''] = override.split('.');
    return { region, zone, subzone };
  }
  const nodeName = endpointNode ?? pod?.nodeName;
  const node = nodeName !== undefined ? idx.nodes.get(nodeName) : undefined;
  return {
    region: node?.region ?? '',
    zone: node?.zone ?? zone ?? '',
    subzone: node?.subzone ?? '',
  };
}
