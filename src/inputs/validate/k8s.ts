/**
 * Kubernetes kinds (Service, Endpoints, EndpointSlice, Pod, Namespace, Node) → model/k8s.ts types,
 * with the API server's defaults applied. Only the fields meshsnap uses are read; the others
 * (containers' images, status details, …) are ignored without a diagnostic.
 */
import { PROXY_CONFIG_ANNOTATION, readPodProxyConfig } from './pod-proxy-config.js';
import type { Origin } from '../../model/diagnostics.js';
import type {
  ContainerPort,
  EndpointAddress,
  EndpointPort,
  EndpointSlice,
  EndpointSubset,
  Endpoints,
  Namespace,
  Node,
  ObjectRef,
  Pod,
  PortProtocol,
  Service,
  ServicePort,
  SliceEndpoint,
} from '../../model/k8s.js';
import { readMeta } from './meta.js';
import {
  bool,
  compact,
  get,
  list,
  obj,
  port,
  requiredStr,
  str,
  strList,
  strMap,
  type Raw,
  type Reader,
} from './reader.js';

const PROTOCOLS: readonly PortProtocol[] = ['TCP', 'UDP', 'SCTP'];
const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'] as const;
const INTERNAL_TRAFFIC_POLICIES = ['Cluster', 'Local'] as const;

function protocol(r: Reader, v: unknown, path: string): PortProtocol {
  const s = str(r, v, path);
  if (s === undefined) return 'TCP';
  if (!(PROTOCOLS as readonly string[]).includes(s)) {
    r.error(path, `must be one of ${PROTOCOLS.join(', ')}, got "${s.slice(0, 40)}"`);
    return 'TCP';
  }
  return s as PortProtocol;
}

function enumOf<T extends string>(r: Reader, v: unknown, path: string, values: readonly T[]): T | undefined {
  const s = str(r, v, path);
  if (s === undefined) return undefined;
  if (!(values as readonly string[]).includes(s)) {
    r.error(path, `must be one of ${values.join(', ')}, got "${s.slice(0, 40)}"`);
    return undefined;
  }
  return s as T;
}

export function readService(r: Reader, raw: Raw, origin: Origin): Service | undefined {
  const meta = readMeta(r, raw, true, 'label');
  const spec = obj(r, get(raw, 'spec'), 'spec') ?? {};
  const type = enumOf(r, get(spec, 'type'), 'spec.type', SERVICE_TYPES) ?? 'ClusterIP';
  const clusterIP = str(r, get(spec, 'clusterIP'), 'spec.clusterIP');
  const clusterIPs = strList(r, get(spec, 'clusterIPs'), 'spec.clusterIPs');
  const externalName = str(r, get(spec, 'externalName'), 'spec.externalName');
  const selector = strMap(r, get(spec, 'selector'), 'spec.selector');
  const trafficDistribution = str(r, get(spec, 'trafficDistribution'), 'spec.trafficDistribution');
  const internalTrafficPolicy = enumOf(
    r,
    get(spec, 'internalTrafficPolicy'),
    'spec.internalTrafficPolicy',
    INTERNAL_TRAFFIC_POLICIES,
  );
  const ports =
    list(r, get(spec, 'ports'), 'spec.ports', (item, p): ServicePort | undefined => {
      const o = obj(r, item, p);
      if (!o) return undefined;
      const number = port(r, get(o, 'port'), `${p}.port`);
      if (number === undefined && (get(o, 'port') ?? null) === null)
        r.error(`${p}.port`, 'is required', 'missing-field');
      const target = targetPort(r, get(o, 'targetPort'), `${p}.targetPort`);
      const name = str(r, get(o, 'name'), `${p}.name`);
      const appProtocol = str(r, get(o, 'appProtocol'), `${p}.appProtocol`);
      if (number === undefined) return undefined;
      return compact({
        name: name === '' ? undefined : name,
        port: number,
        targetPort: target ?? number,
        protocol: protocol(r, get(o, 'protocol'), `${p}.protocol`),
        appProtocol,
      });
    }) ?? [];
  if (type !== 'ExternalName' && ports.length === 0 && !r.failed)
    r.error('spec.ports', 'a Service needs at least one port', 'missing-field');
  // The API server's rule: a port number may repeat only with another protocol (DNS: 53/TCP + 53/UDP).
  const seen = new Map<string, number>();
  const names = new Map<string, number>();
  for (const [i, p] of ports.entries()) {
    const key = `${p.port}/${p.protocol}`;
    if (seen.has(key)) r.error(`spec.ports[${i}].port`, `duplicate port ${key} (also spec.ports[${seen.get(key)}])`);
    else seen.set(key, i);
    if (p.name !== undefined) {
      if (names.has(p.name)) r.error(`spec.ports[${i}].name`, `duplicate port name "${p.name}"`);
      else names.set(p.name, i);
    }
  }
  if (!meta || r.failed) return undefined;
  const ips = clusterIPs ?? (clusterIP !== undefined && clusterIP !== '' ? [clusterIP] : []);
  return compact({
    kind: 'Service' as const,
    meta,
    origin,
    type,
    clusterIP: clusterIP === '' ? undefined : clusterIP,
    clusterIPs: ips,
    externalName,
    selector,
    ports,
    trafficDistribution: trafficDistribution === '' ? undefined : trafficDistribution,
    internalTrafficPolicy,
  });
}

function targetPort(r: Reader, v: unknown, path: string): number | string | undefined {
  if (typeof v === 'string') {
    if (v === '') r.error(path, 'must not be empty');
    return v === '' ? undefined : v;
  }
  return port(r, v, path);
}

function objectRef(r: Reader, v: unknown, path: string): ObjectRef | undefined {
  const o = obj(r, v, path);
  if (!o) return undefined;
  const kind = str(r, get(o, 'kind'), `${path}.kind`);
  const name = str(r, get(o, 'name'), `${path}.name`);
  const namespace = str(r, get(o, 'namespace'), `${path}.namespace`);
  if (name === undefined || name === '') return undefined;
  return compact({ kind: kind ?? '', name, namespace: namespace === '' ? undefined : namespace });
}

function endpointPort(r: Reader, item: unknown, p: string): EndpointPort | undefined {
  const o = obj(r, item, p);
  if (!o) return undefined;
  const raw = get(o, 'port');
  const number = port(r, raw, `${p}.port`);
  if (raw === undefined || raw === null) r.error(`${p}.port`, 'is required', 'missing-field');
  const name = str(r, get(o, 'name'), `${p}.name`);
  const appProtocol = str(r, get(o, 'appProtocol'), `${p}.appProtocol`);
  const proto = protocol(r, get(o, 'protocol'), `${p}.protocol`);
  if (number === undefined) return undefined;
  return compact({ name: name === '' ? undefined : name, port: number, protocol: proto, appProtocol });
}

export function readEndpointSlice(r: Reader, raw: Raw, origin: Origin): EndpointSlice | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const addressType = enumOf(r, get(raw, 'addressType'), 'addressType', ['IPv4', 'IPv6', 'FQDN'] as const) ?? 'IPv4';
  const ports = list(r, get(raw, 'ports'), 'ports', (item, p) => endpointPort(r, item, p)) ?? [];
  const endpoints =
    list(r, get(raw, 'endpoints'), 'endpoints', (item, p): SliceEndpoint | undefined => {
      const o = obj(r, item, p);
      if (!o) return undefined;
      const addresses = strList(r, get(o, 'addresses'), `${p}.addresses`);
      if (addresses === undefined && !r.failed) r.error(`${p}.addresses`, 'is required', 'missing-field');
      const cond = obj(r, get(o, 'conditions'), `${p}.conditions`) ?? {};
      // API semantics: an unknown `ready` means ready; `serving` defaults to `ready`.
      const ready = bool(r, get(cond, 'ready'), `${p}.conditions.ready`) ?? true;
      const serving = bool(r, get(cond, 'serving'), `${p}.conditions.serving`) ?? ready;
      const terminating = bool(r, get(cond, 'terminating'), `${p}.conditions.terminating`) ?? false;
      const targetRef = objectRef(r, get(o, 'targetRef'), `${p}.targetRef`);
      const nodeName = str(r, get(o, 'nodeName'), `${p}.nodeName`);
      const zone = str(r, get(o, 'zone'), `${p}.zone`);
      const hostname = str(r, get(o, 'hostname'), `${p}.hostname`);
      return compact({ addresses: addresses ?? [], ready, serving, terminating, targetRef, nodeName, zone, hostname });
    }) ?? [];
  if (!meta || r.failed) return undefined;
  return {
    kind: 'EndpointSlice',
    meta,
    origin,
    serviceName: meta.labels['kubernetes.io/service-name'] ?? '',
    addressType,
    ports,
    endpoints,
  };
}

export function readEndpoints(r: Reader, raw: Raw, origin: Origin): Endpoints | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const address = (item: unknown, p: string): EndpointAddress | undefined => {
    const o = obj(r, item, p);
    if (!o) return undefined;
    const ip = requiredStr(r, get(o, 'ip'), `${p}.ip`);
    const hostname = str(r, get(o, 'hostname'), `${p}.hostname`);
    const nodeName = str(r, get(o, 'nodeName'), `${p}.nodeName`);
    const targetRef = objectRef(r, get(o, 'targetRef'), `${p}.targetRef`);
    return ip === undefined ? undefined : compact({ ip, hostname, nodeName, targetRef });
  };
  const subsets =
    list(r, get(raw, 'subsets'), 'subsets', (item, p): EndpointSubset | undefined => {
      const o = obj(r, item, p);
      if (!o) return undefined;
      return {
        addresses: list(r, get(o, 'addresses'), `${p}.addresses`, address) ?? [],
        notReadyAddresses: list(r, get(o, 'notReadyAddresses'), `${p}.notReadyAddresses`, address) ?? [],
        ports: list(r, get(o, 'ports'), `${p}.ports`, (it, pp) => endpointPort(r, it, pp)) ?? [],
      };
    }) ?? [];
  if (!meta || r.failed) return undefined;
  return { kind: 'Endpoints', meta, origin, subsets };
}

export function readPod(r: Reader, raw: Raw, origin: Origin): Pod | undefined {
  const meta = readMeta(r, raw, true, 'subdomain');
  const spec = obj(r, get(raw, 'spec'), 'spec') ?? {};
  const status = obj(r, get(raw, 'status'), 'status') ?? {};
  const serviceAccount =
    str(r, get(spec, 'serviceAccountName'), 'spec.serviceAccountName') ||
    str(r, get(spec, 'serviceAccount'), 'spec.serviceAccount') ||
    'default';
  const nodeName = str(r, get(spec, 'nodeName'), 'spec.nodeName');
  const containerPorts: ContainerPort[] = [];
  list(r, get(spec, 'containers'), 'spec.containers', (c, p) => {
    const o = obj(r, c, p);
    if (!o) return undefined;
    list(r, get(o, 'ports'), `${p}.ports`, (item, pp) => {
      const po = obj(r, item, pp);
      if (!po) return undefined;
      const number = port(r, get(po, 'containerPort'), `${pp}.containerPort`);
      const name = str(r, get(po, 'name'), `${pp}.name`);
      const proto = protocol(r, get(po, 'protocol'), `${pp}.protocol`);
      if (number !== undefined)
        containerPorts.push(compact({ name: name === '' ? undefined : name, containerPort: number, protocol: proto }));
      return undefined;
    });
    return undefined;
  });
  const phase = str(r, get(status, 'phase'), 'status.phase') ?? 'Unknown';
  const podIPs = list(r, get(status, 'podIPs'), 'status.podIPs', (item, p) => {
    const o = obj(r, item, p);
    return o ? str(r, get(o, 'ip'), `${p}.ip`) : undefined;
  });
  const podIP = str(r, get(status, 'podIP'), 'status.podIP');
  // podIP first, then podIPs, each once, no empty one (a few per Pod: a scan, no set).
  const ips: string[] = podIP ? [podIP] : [];
  for (const ip of podIPs ?? []) if (ip !== '' && !ips.includes(ip)) ips.push(ip);
  let ready = false;
  list(r, get(status, 'conditions'), 'status.conditions', (item, p) => {
    const o = obj(r, item, p);
    if (o && get(o, 'type') === 'Ready') ready = str(r, get(o, 'status'), `${p}.status`) === 'True';
    return undefined;
  });
  const proxyConfig = readPodProxyConfig(r, meta?.annotations[PROXY_CONFIG_ANNOTATION]);
  if (!meta || r.failed) return undefined;
  // A copy of its own size (the InputSet keeps it; the pushed one has room for 17 ports).
  const ports = containerPorts.length > 0 ? containerPorts.slice() : containerPorts;
  return compact({
    kind: 'Pod' as const,
    meta,
    origin,
    proxyConfig,
    ips,
    nodeName,
    serviceAccount,
    phase,
    ready,
    containerPorts: ports,
  });
}

/** A Kubernetes label value (the API server's rule): what a locality part may be. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function readNode(r: Reader, raw: Raw, origin: Origin): Node | undefined {
  const meta = readMeta(r, raw, false, 'subdomain');
  if (!meta || r.failed) return undefined;
  const l = meta.labels;
  // A topology label names a locality, which names EDS groups and proxy classes (`…@<region>/<zone>/<subzone>`).
  const topology = (...keys: string[]): string | undefined => {
    for (const key of keys) {
      const value = l[key];
      if (value === undefined) continue;
      if (value.length <= 63 && LABEL_VALUE.test(value)) return value;
      // The API server refuses such a label: the Node is kept, without that part of its locality.
      r.warn(
        `metadata.labels.${key}`,
        `is not a label value: ${JSON.stringify(value.slice(0, 80))}; the Node's locality leaves it out`,
        'invalid-field',
      );
      return undefined;
    }
    return undefined;
  };
  return compact({
    kind: 'Node' as const,
    meta,
    origin,
    region: topology('topology.kubernetes.io/region', 'failure-domain.beta.kubernetes.io/region'),
    zone: topology('topology.kubernetes.io/zone', 'failure-domain.beta.kubernetes.io/zone'),
    subzone: topology('topology.istio.io/subzone'),
  });
}

export function readNamespace(r: Reader, raw: Raw, origin: Origin): Namespace | undefined {
  const meta = readMeta(r, raw, false, 'label');
  if (!meta || r.failed) return undefined;
  return { kind: 'Namespace', meta, origin };
}
