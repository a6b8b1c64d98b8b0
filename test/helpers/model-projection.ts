/**
 * The model stage as a reviewer reads it: what the compiler built from the inputs (services, their
 * ports and endpoints, which endpoints each DestinationRule subset selects, and the
 * VirtualService routes and DestinationRule that apply to each host), as plain JSON. Every list
 * is in the model's own sorted order; file paths and internal caches are left out, so the same
 * inputs give the same bytes wherever the repo is checked out.
 */
import { createContext } from '../../src/compile/index.js';
import { Diagnostics } from '../../src/model/diagnostics.js';
import type { InputSet } from '../../src/model/inputs.js';
import type { MeshEndpoint, MeshService } from '../../src/model/service-model.js';
import type { CompileContext } from '../../src/compile/context.js';
import { selects } from '../../src/proxy-class/class-id.js';

type Json = null | boolean | number | string | readonly Json[] | { readonly [key: string]: Json | undefined };

interface EndpointProjection {
  /** `address:port` the workload listens on. */
  readonly address: string;
  readonly pod?: string;
  readonly serviceAccount?: string;
  /** `region/zone/subzone`, absent when all three are empty. */
  readonly locality?: string;
  readonly health: string;
  readonly tlsMode: string;
  readonly weight?: number;
  readonly network?: string;
  /** A WorkloadEntry's or ServiceEntry's name (telemetry workload). */
  readonly workload?: string;
}

interface ServiceProjection {
  readonly hostname: string;
  readonly clusterIP?: string;
  readonly headless?: true;
  readonly externalName?: string;
  readonly selector?: Readonly<Record<string, string>>;
  readonly exportTo?: readonly string[];
  /** The ServiceEntry behind a host: its name, resolution, location, addresses, SANs, selector. */
  readonly serviceEntry?: Json;
  readonly ports: readonly { name?: string; port: number; targetPort: number | string; protocol: string }[];
  /** Service port → its endpoints. */
  readonly endpoints: Readonly<Record<string, readonly EndpointProjection[]>>;
  readonly destinationRule?: Json;
  readonly virtualService?: Json;
}

export interface ModelProjection {
  readonly namespaces: readonly string[];
  readonly services: readonly ServiceProjection[];
  readonly workloads: readonly {
    name: string;
    ips: readonly string[];
    serviceAccount: string;
    labels: Readonly<Record<string, string>>;
  }[];
}

const ref = (o: { readonly meta: { readonly namespace: string; readonly name: string } }): string =>
  `${o.meta.namespace}/${o.meta.name}`;

function endpoint(e: MeshEndpoint): EndpointProjection {
  const locality = [e.locality.region, e.locality.zone, e.locality.subzone].join('/');
  return {
    address: `${e.address}:${e.port}`,
    ...(e.podName !== undefined ? { pod: e.podName } : {}),
    ...(e.serviceAccount !== undefined ? { serviceAccount: e.serviceAccount } : {}),
    ...(locality !== '//' ? { locality } : {}),
    health: e.health,
    tlsMode: e.tlsMode,
    ...(e.weight !== undefined ? { weight: e.weight } : {}),
    ...(e.network !== undefined ? { network: e.network } : {}),
    ...(e.workloadName !== undefined ? { workload: e.workloadName } : {}),
  };
}

function endpointsByPort<T>(
  byPort: ReadonlyMap<number, readonly MeshEndpoint[]> | undefined,
  keep: (e: MeshEndpoint) => boolean,
  show: (e: MeshEndpoint) => T,
): Record<string, T[]> {
  const out: Record<string, T[]> = {};
  for (const [port, list] of [...(byPort ?? new Map<number, readonly MeshEndpoint[]>())].sort(([a], [b]) => a - b))
    out[String(port)] = list.filter(keep).map(show);
  return out;
}

/** The DestinationRule in effect for the host, with the endpoints each subset selects (`address:port`). */
function destinationRule(ctx: CompileContext, s: MeshService): Json | undefined {
  const rule = ctx.destinationRules.lookup(s.hostname);
  if (!rule) return undefined;
  const byPort = ctx.model.endpoints.get(s.hostname);
  return {
    from: rule.sources.map(ref),
    ...(rule.spec.trafficPolicy ? { trafficPolicy: rule.spec.trafficPolicy as Json } : {}),
    subsets: (rule.spec.subsets ?? []).map((subset) => ({
      name: subset.name,
      labels: subset.labels ?? {},
      ...(subset.trafficPolicy ? { trafficPolicy: subset.trafficPolicy as Json } : {}),
      endpoints: endpointsByPort(
        byPort,
        (e) => selects(subset.labels ?? {}, e.labels),
        (e) => `${e.address}:${e.port}`,
      ),
    })),
  };
}

/** The routes the host is served by, each with the VirtualService it came from (delegates resolved). */
function virtualService(ctx: CompileContext, hostname: string): Json | undefined {
  const vs = ctx.virtualServices;
  const sourced = (
    list: readonly { route: object; source: { meta: { namespace: string; name: string } } }[] | undefined,
  ): Json[] | undefined => list?.map((r) => ({ from: ref(r.source), ...(r.route as Record<string, Json>) }));
  const http = sourced(vs.httpRoutes(hostname));
  const tcp = sourced(vs.tcpRoutes(hostname));
  const tls = sourced(vs.tlsRoutes(hostname));
  if (!http && !tcp && !tls) return undefined;
  return { ...(http ? { http } : {}), ...(tcp ? { tcp } : {}), ...(tls ? { tls } : {}) };
}

function service(ctx: CompileContext, s: MeshService): ServiceProjection {
  const dr = destinationRule(ctx, s);
  const vs = virtualService(ctx, s.hostname);
  return {
    hostname: s.hostname,
    ...(s.clusterIP !== undefined ? { clusterIP: s.clusterIP } : {}),
    ...(s.headless ? { headless: true as const } : {}),
    ...(s.externalName !== undefined ? { externalName: s.externalName } : {}),
    ...(s.selector !== undefined ? { selector: s.selector } : {}),
    ...(s.exportTo !== undefined ? { exportTo: s.exportTo } : {}),
    ...(s.serviceEntry !== undefined ? { serviceEntry: s.serviceEntry as unknown as Json } : {}),
    ports: s.ports.map((p) => ({
      ...(p.name !== undefined ? { name: p.name } : {}),
      port: p.port,
      targetPort: p.targetPort,
      protocol: p.protocol,
    })),
    endpoints: endpointsByPort(ctx.model.endpoints.get(s.hostname), () => true, endpoint),
    ...(dr !== undefined ? { destinationRule: dr } : {}),
    ...(vs !== undefined ? { virtualService: vs } : {}),
  };
}

/** The projection of the service model and config indexes the compiler builds from `inputs`. */
export function projectModel(inputs: InputSet): ModelProjection {
  // The compiler reports its own diagnostics; the golden test checks those from the real compile.
  const ctx = createContext(inputs, new Diagnostics());
  return {
    namespaces: ctx.model.namespaces,
    services: ctx.model.services.map((s) => service(ctx, s)),
    workloads: ctx.model.workloads.map((w) => ({
      name: `${w.namespace}/${w.name}`,
      ips: w.ips,
      serviceAccount: w.serviceAccount,
      labels: w.labels,
    })),
  };
}
