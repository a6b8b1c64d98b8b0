/**
 * A synthetic mesh for the benchmark: N services over ~N/100 namespaces, shaped like a real
 * cluster's objects (Services, Pods, EndpointSlices, Nodes, VirtualServices, DestinationRules).
 *
 * Pure and seeded: the same options give the same documents, byte for byte, so benchmark runs are
 * comparable. It yields raw documents (what `parseDocuments` would return) so the compile timing
 * skips YAML; `toYaml` renders the same objects for timing the parser on its own.
 */
import { stringify } from 'yaml';
import type { RawDocument } from '../src/inputs/parse.js';

export interface SyntheticOptions {
  readonly services: number;
  readonly seed?: number;
  /** Services per namespace (default 100). */
  readonly perNamespace?: number;
}

type Obj = Record<string, unknown>;

export interface SyntheticMesh {
  readonly docs: RawDocument[];
  readonly namespaces: number;
  readonly pods: number;
  readonly virtualServices: number;
  readonly destinationRules: number;
}

const FILE = 'synthetic.yaml';
const ZONES = ['zone-a', 'zone-b', 'zone-c'] as const;
const NODES_PER_ZONE = 4;

/** mulberry32: tiny, fast and good enough to spread choices; not for anything secret. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The i-th address of a /8-style range starting at `base` (e.g. 10.96.0.0), skipping .0 hosts. */
export function nthAddress(base: readonly [number, number], i: number): string {
  const host = (i % 254) + 1;
  const mid = Math.floor(i / 254);
  return `${base[0]}.${base[1] + Math.floor(mid / 256)}.${mid % 256}.${host}`;
}

interface ServicePlan {
  readonly name: string;
  readonly namespace: string;
  readonly ports: readonly { name: string; port: number; targetPort: number }[];
  readonly clusterIP: string;
  readonly versions: readonly string[];
  readonly podIPs: readonly string[];
  readonly nodes: readonly number[];
  readonly withVirtualService: boolean;
  readonly withDestinationRule: boolean;
  readonly lb: number;
}

export function generateMesh(opts: SyntheticOptions): SyntheticMesh {
  const rand = seededRandom(opts.seed ?? 42);
  const perNs = opts.perNamespace ?? 100;
  const plans: ServicePlan[] = [];
  let podCounter = 0;
  for (let i = 0; i < opts.services; i++) {
    const ports = [{ name: 'http', port: 8080, targetPort: 8080 }];
    if (rand() < 0.4) ports.push({ name: 'http-admin', port: 9090, targetPort: 9090 });
    if (rand() < 0.15) ports.push({ name: 'tcp-db', port: 5432, targetPort: 5432 });
    const podIPs = [0, 1, 2].map(() => nthAddress([10, 128], podCounter++));
    plans.push({
      name: `svc-${i}`,
      namespace: `ns-${Math.floor(i / perNs)}`,
      ports,
      clusterIP: nthAddress([10, 96], i),
      versions: ['v1', 'v1', 'v2'],
      podIPs,
      nodes: podIPs.map(() => Math.floor(rand() * ZONES.length * NODES_PER_ZONE)),
      withVirtualService: rand() < 0.2,
      withDestinationRule: rand() < 0.2,
      lb: rand(),
    });
  }

  const docs: RawDocument[] = [];
  const push = (object: Obj): void => {
    docs.push({ file: FILE, index: docs.length, object });
  };
  for (let n = 0; n < ZONES.length * NODES_PER_ZONE; n++) push(nodeManifest(n));
  const namespaces = [...new Set(plans.map((p) => p.namespace))];
  for (const ns of namespaces)
    push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { 'istio-injection': 'enabled' } } });
  let vs = 0;
  let dr = 0;
  for (const [i, p] of plans.entries()) {
    push(serviceManifest(p));
    for (const m of podManifests(p)) push(m);
    push(endpointSliceManifest(p));
    if (p.withVirtualService) {
      // Without subsets to split over, a VirtualService routes a header-matched share to a neighbour.
      const neighbour = plans[i + 1]?.namespace === p.namespace ? plans[i + 1] : plans[i - 1];
      push(virtualServiceManifest(p, neighbour));
      vs++;
    }
    if (p.withDestinationRule) {
      push(destinationRuleManifest(p));
      dr++;
    }
  }
  return { docs, namespaces: namespaces.length, pods: podCounter, virtualServices: vs, destinationRules: dr };
}

const nodeName = (n: number): string => `node-${n}`;

function nodeManifest(n: number): Obj {
  const zone = ZONES[n % ZONES.length] as string;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: nodeName(n),
      labels: {
        'topology.kubernetes.io/region': 'region-1',
        'topology.kubernetes.io/zone': zone,
        'kubernetes.io/hostname': nodeName(n),
      },
    },
  };
}

function serviceManifest(p: ServicePlan): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: p.name, namespace: p.namespace, labels: { app: p.name } },
    spec: {
      type: 'ClusterIP',
      clusterIP: p.clusterIP,
      clusterIPs: [p.clusterIP],
      selector: { app: p.name },
      ports: p.ports.map((port) => ({
        name: port.name,
        port: port.port,
        targetPort: port.targetPort,
        protocol: 'TCP',
      })),
    },
  };
}

const podName = (p: ServicePlan, k: number): string => `${p.name}-${p.versions[k]}-7f9c6d5b8-${k}x${k}z`;

function podManifests(p: ServicePlan): Obj[] {
  return p.podIPs.map((ip, k) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(p, k),
      namespace: p.namespace,
      labels: {
        app: p.name,
        version: p.versions[k],
        'security.istio.io/tlsMode': 'istio',
        'pod-template-hash': '7f9c6d5b8',
      },
    },
    spec: {
      serviceAccountName: p.name,
      nodeName: nodeName(p.nodes[k] ?? 0),
      containers: [
        {
          name: 'app',
          image: 'example/app:1',
          ports: p.ports.map((port) => ({ name: port.name, containerPort: port.targetPort, protocol: 'TCP' })),
        },
      ],
    },
    status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] },
  }));
}

function endpointSliceManifest(p: ServicePlan): Obj {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${p.name}-abcde`, namespace: p.namespace, labels: { 'kubernetes.io/service-name': p.name } },
    addressType: 'IPv4',
    ports: p.ports.map((port) => ({ name: port.name, port: port.targetPort, protocol: 'TCP' })),
    endpoints: p.podIPs.map((ip, k) => ({
      addresses: [ip],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: nodeName(p.nodes[k] ?? 0),
      zone: ZONES[(p.nodes[k] ?? 0) % ZONES.length],
      targetRef: { kind: 'Pod', name: podName(p, k), namespace: p.namespace },
    })),
  };
}

function virtualServiceManifest(p: ServicePlan, neighbour: ServicePlan | undefined): Obj {
  const retries = { attempts: 2, perTryTimeout: '500ms', retryOn: '5xx,connect-failure' };
  const http: Obj[] = [];
  if (neighbour && neighbour !== p) {
    http.push({
      name: 'preview',
      match: [{ headers: { 'x-preview': { exact: 'on' } } }],
      route: [{ destination: { host: neighbour.name, port: { number: 8080 } } }],
    });
  }
  const split = p.withDestinationRule
    ? [
        { destination: { host: p.name, subset: 'v1' }, weight: 80 },
        { destination: { host: p.name, subset: 'v2' }, weight: 20 },
      ]
    : [{ destination: { host: p.name } }];
  http.push({ name: 'default', route: split, timeout: '5s', retries });
  return {
    apiVersion: 'networking.istio.io/v1',
    kind: 'VirtualService',
    metadata: { name: p.name, namespace: p.namespace },
    spec: { hosts: [p.name], http },
  };
}

function destinationRuleManifest(p: ServicePlan): Obj {
  const loadBalancer = p.lb < 0.5 ? { simple: 'LEAST_REQUEST' } : { consistentHash: { httpHeaderName: 'x-user' } };
  return {
    apiVersion: 'networking.istio.io/v1',
    kind: 'DestinationRule',
    metadata: { name: p.name, namespace: p.namespace },
    spec: {
      host: `${p.name}.${p.namespace}.svc.cluster.local`,
      trafficPolicy: {
        loadBalancer,
        connectionPool: {
          tcp: { maxConnections: 100, connectTimeout: '2s' },
          http: { http2MaxRequests: 1000, maxRequestsPerConnection: 10 },
        },
        outlierDetection: { consecutive5xxErrors: 5, interval: '10s', baseEjectionTime: '30s' },
      },
      subsets: [
        { name: 'v1', labels: { version: 'v1' } },
        { name: 'v2', labels: { version: 'v2' } },
      ],
    },
  };
}

/**
 * A copy of the documents where the `endpoint`-th endpoint of the `slice`-th EndpointSlice has a
 * new address (a pod rescheduled): only that document is replaced, the rest are shared.
 */
export function withMovedEndpoint(
  docs: readonly RawDocument[],
  sliceIndex: number,
  newAddress: string,
): { docs: RawDocument[]; serviceName: string; namespace: string } {
  let seen = -1;
  let changed: { serviceName: string; namespace: string } | undefined;
  const out = docs.map((d) => {
    if (d.object['kind'] !== 'EndpointSlice' || ++seen !== sliceIndex) return d;
    const slice = d.object as Obj & {
      metadata: { namespace: string; labels: Record<string, string> };
      endpoints: Obj[];
    };
    const [first, ...rest] = slice.endpoints;
    changed = {
      serviceName: slice.metadata.labels['kubernetes.io/service-name'] ?? '',
      namespace: slice.metadata.namespace,
    };
    return { ...d, object: { ...slice, endpoints: [{ ...first, addresses: [newAddress] }, ...rest] } };
  });
  if (!changed) throw new RangeError(`no EndpointSlice #${sliceIndex}`);
  return { docs: out, ...changed };
}

/** The documents as one multi-document YAML file, the way `kubectl get -o yaml` users keep them. */
export function toYaml(docs: readonly RawDocument[]): string {
  return docs.map((d) => stringify(d.object)).join('---\n');
}
