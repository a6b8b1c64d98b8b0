/** Hand-built service models for the CDS/EDS/DestinationRule tests (no inputs layer needed). */
import { Diagnostics } from '../../src/model/diagnostics.js';
import { NO_SIDECARS } from '../../src/compile/scope/select-sidecar.js';
import { NO_SECURITY_INDEX } from '../../src/compile/security/workload-security.js';
import type { DestinationRule, DestinationRuleSpec } from '../../src/model/istio.js';
import { DEFAULT_MESH_CONFIG, type MeshConfig } from '../../src/model/mesh-config.js';
import type {
  Locality,
  MeshEndpoint,
  MeshService,
  MeshServicePort,
  Protocol,
  ServiceModel,
} from '../../src/model/service-model.js';
import type { CompileContext } from '../../src/compile/context.js';
import { indexDestinationRules } from '../../src/compile/destination-rules.js';

export const host = (name: string, ns = 'default'): string => `${name}.${ns}.svc.cluster.local`;

export interface ServiceOpts {
  ns?: string;
  ports?: { port: number; protocol?: Protocol; name?: string }[];
  headless?: boolean;
  externalName?: string;
  labels?: Record<string, string>;
}

export function service(name: string, opts: ServiceOpts = {}): MeshService {
  const ns = opts.ns ?? 'default';
  const ports: MeshServicePort[] = (opts.ports ?? [{ port: 9080, protocol: 'HTTP', name: 'http' }]).map((p) => ({
    name: p.name,
    port: p.port,
    targetPort: p.port,
    protocol: p.protocol ?? 'HTTP',
  }));
  return {
    hostname: host(name, ns),
    name,
    namespace: ns,
    labels: opts.labels ?? {},
    ...(opts.headless || opts.externalName ? {} : { clusterIP: '10.96.0.1' }),
    headless: opts.headless ?? false,
    ...(opts.externalName ? { externalName: opts.externalName } : {}),
    selector: { app: name },
    ports,
    origin: { file: 'svc.yaml', index: 0 },
  };
}

export interface EndpointOpts {
  labels?: Record<string, string>;
  locality?: Partial<Locality>;
  health?: MeshEndpoint['health'];
  tlsMode?: MeshEndpoint['tlsMode'];
  podName?: string;
  serviceAccount?: string;
  port?: number;
}

export function endpoint(address: string, opts: EndpointOpts = {}): MeshEndpoint {
  return {
    address,
    port: opts.port ?? 9080,
    labels: opts.labels ?? {},
    locality: { region: '', zone: '', subzone: '', ...opts.locality },
    health: opts.health ?? 'HEALTHY',
    tlsMode: opts.tlsMode ?? 'istio',
    ...(opts.podName ? { podName: opts.podName } : {}),
    ...(opts.serviceAccount ? { serviceAccount: opts.serviceAccount } : {}),
  };
}

export function destinationRule(ns: string, name: string, spec: DestinationRuleSpec, index = 0): DestinationRule {
  return {
    kind: 'DestinationRule',
    apiVersion: 'networking.istio.io/v1',
    meta: { name, namespace: ns, labels: {}, annotations: {} },
    origin: { file: 'dr.yaml', index },
    spec,
  };
}

/** endpoints: hostname → service port → endpoints. */
export function model(
  services: MeshService[],
  endpoints: Record<string, Record<number, MeshEndpoint[]>> = {},
  destinationRules: DestinationRule[] = [],
): ServiceModel {
  const sorted = [...services].sort((a, b) => (a.hostname < b.hostname ? -1 : 1));
  const eps = new Map<string, Map<number, MeshEndpoint[]>>();
  for (const [h, byPort] of Object.entries(endpoints))
    eps.set(h, new Map(Object.entries(byPort).map(([p, list]) => [Number(p), list])));
  return {
    services: sorted,
    byHostname: new Map(sorted.map((s) => [s.hostname, s])),
    endpoints: eps,
    proxyLocalities: [],
    nodeLocalities: new Map(),
    namespaces: [...new Set(sorted.map((s) => s.namespace))].sort(),
    workloads: [],
    entryWorkloads: [],
    virtualServices: [],
    destinationRules,
    gateways: [],
  };
}

export function context(m: ServiceModel, mesh: Partial<MeshConfig> = {}): CompileContext {
  const diags = new Diagnostics();
  const meshConfig = { ...DEFAULT_MESH_CONFIG, ...mesh };
  return {
    model: m,
    mesh: meshConfig,
    diags,
    destinationRules: indexDestinationRules(m, meshConfig, diags),
    virtualServices: { httpRoutes: () => undefined, tcpRoutes: () => undefined, tlsRoutes: () => undefined },
    security: NO_SECURITY_INDEX,
    sidecars: NO_SIDECARS,
  };
}
