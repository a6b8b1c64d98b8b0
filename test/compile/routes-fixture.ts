/**
 * Test fixtures for the RDS translator: hand-built service models (bookinfo's shape) and a small
 * YAML → VirtualService/DestinationRule reader covering the fields the route tests use.
 */
import { NO_SIDECARS } from '../../src/compile/scope/select-sidecar.js';
import { NO_SECURITY_INDEX } from '../../src/compile/security/workload-security.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Diagnostics } from '../../src/model/diagnostics.js';
import type { DestinationRule, HTTPRoute, VirtualService } from '../../src/model/istio.js';
import { DEFAULT_MESH_CONFIG, type MeshConfig } from '../../src/model/mesh-config.js';
import type { MeshService, Protocol, ServiceModel } from '../../src/model/service-model.js';
import type { CompileContext, DestinationRuleIndex } from '../../src/compile/context.js';
import { resolveHost } from '../../src/compile/names.js';
import { indexVirtualServices } from '../../src/compile/virtual-services.js';
import { ISTIO_SAMPLES } from '../helpers/paths.js';

export const BOOKINFO_NETWORKING = join(ISTIO_SAMPLES, 'bookinfo', 'networking');

export function service(
  name: string,
  namespace: string,
  ports: [number, Protocol][],
  clusterIP?: string,
  extra: Partial<MeshService> = {},
): MeshService {
  return {
    hostname: `${name}.${namespace}.svc.cluster.local`,
    name,
    namespace,
    labels: {},
    headless: clusterIP === undefined,
    ...(clusterIP ? { clusterIP } : {}),
    selector: { app: name },
    ports: ports.map(([port, protocol]) => ({ name: protocol.toLowerCase(), port, targetPort: port, protocol })),
    origin: {},
    ...extra,
  };
}

export const bookinfoServices = (): MeshService[] => [
  service('details', 'default', [[9080, 'HTTP']], '10.96.0.11'),
  service('productpage', 'default', [[9080, 'HTTP']], '10.96.0.14'),
  service('ratings', 'default', [[9080, 'HTTP']], '10.96.0.12'),
  service('reviews', 'default', [[9080, 'HTTP']], '10.96.0.13'),
];

export function model(
  services: MeshService[],
  virtualServices: VirtualService[] = [],
  destinationRules: DestinationRule[] = [],
): ServiceModel {
  const sorted = [...services].sort((a, b) => (a.hostname < b.hostname ? -1 : 1));
  return {
    services: sorted,
    byHostname: new Map(sorted.map((s) => [s.hostname, s])),
    endpoints: new Map(),
    proxyLocalities: [],
    nodeLocalities: new Map(),
    namespaces: [...new Set(['default', ...sorted.map((s) => s.namespace)])].sort(),
    workloads: [],
    entryWorkloads: [],
    virtualServices,
    destinationRules,
    gateways: [],
  };
}

/** Exact-host DestinationRule lookup: enough for these tests, independent of the real index. */
function simpleRules(rules: readonly DestinationRule[], suffix: string): DestinationRuleIndex {
  const byHost = new Map(rules.map((r) => [resolveHost(r.spec.host, r.meta.namespace, suffix), r]));
  return {
    lookup: (hostname) => {
      const r = byHost.get(hostname);
      return r ? { hostname, spec: r.spec, sources: [r] } : undefined;
    },
  };
}

export function context(m: ServiceModel, mesh: Partial<MeshConfig> = {}): CompileContext {
  const meshConfig = { ...DEFAULT_MESH_CONFIG, ...mesh };
  const diags = new Diagnostics();
  return {
    model: m,
    mesh: meshConfig,
    diags,
    destinationRules: simpleRules(m.destinationRules, meshConfig.domainSuffix),
    virtualServices: indexVirtualServices(m, meshConfig, diags),
    security: NO_SECURITY_INDEX,
    sidecars: NO_SIDECARS,
  };
}

const durationMs = (s: unknown): number | undefined => {
  if (typeof s !== 'string') return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(s);
  if (!m) throw new Error(`bad duration ${s}`);
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
};

type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function httpRoute(h: Raw): HTTPRoute {
  const out: Raw = { ...h };
  if (h.timeout !== undefined) out.timeoutMs = durationMs(h.timeout);
  delete out.timeout;
  if (h.retries) out.retries = { ...h.retries, perTryTimeoutMs: durationMs(h.retries.perTryTimeout) };
  if (h.fault?.delay)
    out.fault = {
      ...h.fault,
      delay: { fixedDelayMs: durationMs(h.fault.delay.fixedDelay), percentage: h.fault.delay.percentage },
    };
  if (h.mirror)
    out.mirrors = [{ destination: h.mirror, ...(h.mirrorPercentage ? { percentage: h.mirrorPercentage } : {}) }];
  delete out.mirror;
  delete out.mirrorPercentage;
  if (h.corsPolicy?.maxAge) out.corsPolicy = { ...h.corsPolicy, maxAgeMs: durationMs(h.corsPolicy.maxAge) };
  return out as HTTPRoute;
}

/** VirtualServices and DestinationRules of a YAML file (other kinds ignored). */
export function readIstio(
  file: string,
  namespace = 'default',
): { virtualServices: VirtualService[]; destinationRules: DestinationRule[] } {
  const virtualServices: VirtualService[] = [];
  const destinationRules: DestinationRule[] = [];
  parseAllDocuments(readFileSync(file, 'utf8')).forEach((doc, index) => {
    const raw = doc.toJS() as Raw | null;
    if (!raw) return;
    const meta = {
      name: raw.metadata.name,
      namespace: raw.metadata.namespace ?? namespace,
      labels: {},
      annotations: {},
    };
    const origin = { file, index };
    if (raw.kind === 'VirtualService') {
      virtualServices.push({
        kind: 'VirtualService',
        apiVersion: raw.apiVersion,
        meta,
        origin,
        spec: { ...raw.spec, hosts: raw.spec.hosts ?? [], http: raw.spec.http?.map(httpRoute) },
      });
    } else if (raw.kind === 'DestinationRule') {
      destinationRules.push({ kind: 'DestinationRule', apiVersion: raw.apiVersion, meta, origin, spec: raw.spec });
    }
  });
  return { virtualServices, destinationRules };
}

export function vs(
  name: string,
  namespace: string,
  hosts: string[],
  http: HTTPRoute[],
  extra: Partial<VirtualService['spec']> = {},
): VirtualService {
  return {
    kind: 'VirtualService',
    apiVersion: 'networking.istio.io/v1',
    meta: { name, namespace, labels: {}, annotations: {} },
    origin: { file: `${name}.yaml`, index: 0 },
    spec: { hosts, http, ...extra },
  };
}

export function dr(
  name: string,
  namespace: string,
  host: string,
  subsets: string[],
  extra: Partial<DestinationRule['spec']> = {},
): DestinationRule {
  return {
    kind: 'DestinationRule',
    apiVersion: 'networking.istio.io/v1',
    meta: { name, namespace, labels: {}, annotations: {} },
    origin: {},
    spec: { host, subsets: subsets.map((s) => ({ name: s, labels: { version: s } })), ...extra },
  };
}

/** Bookinfo services + all-subsets DestinationRules + the given sample files. */
export function bookinfo(...files: string[]): CompileContext {
  const rules = readIstio(join(BOOKINFO_NETWORKING, 'destination-rule-all.yaml')).destinationRules;
  const vss = files.flatMap((f) => readIstio(join(BOOKINFO_NETWORKING, f)).virtualServices);
  return context(model(bookinfoServices(), vss, rules));
}
