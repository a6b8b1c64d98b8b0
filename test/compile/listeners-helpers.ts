/** Hand-built service models and small decoding helpers for the listener tests. */
import assert from 'node:assert/strict';
import type {
  CompileContext,
  ResolvedDestinationRule,
  SourcedTcpRoute,
  SourcedTlsRoute,
} from '../../src/compile/context.js';
import { Diagnostics } from '../../src/model/diagnostics.js';
import { NO_SIDECARS } from '../../src/compile/scope/select-sidecar.js';
import { NO_SECURITY_INDEX } from '../../src/compile/security/workload-security.js';
import type { DestinationRule, VirtualService, VirtualServiceSpec } from '../../src/model/istio.js';
import { DEFAULT_MESH_CONFIG, type MeshConfig } from '../../src/model/mesh-config.js';
import type { MeshEndpoint, MeshService, MeshServicePort, ServiceModel } from '../../src/model/service-model.js';
import { codecOf, decodeMessage, encodeMessage, type Any, type Listener } from '../../src/xds/proto.js';
import { TypeName, typeNameOf } from '../../src/xds/type-urls.js';

export function service(
  name: string,
  namespace: string,
  ports: MeshServicePort[],
  extra: Partial<MeshService> = {},
): MeshService {
  return {
    hostname: `${name}.${namespace}.svc.cluster.local`,
    name,
    namespace,
    labels: {},
    headless: false,
    selector: { app: name },
    ports,
    origin: { file: `${name}.yaml`, index: 0 },
    ...extra,
  };
}

export const port = (
  p: number,
  protocol: MeshServicePort['protocol'],
  targetPort: number | string = p,
  name?: string,
): MeshServicePort => ({
  port: p,
  targetPort,
  protocol,
  ...(name ? { name } : {}),
});

export function endpoint(address: string, p: number): MeshEndpoint {
  return {
    address,
    port: p,
    labels: {},
    locality: { region: '', zone: '', subzone: '' },
    health: 'HEALTHY',
    tlsMode: 'istio',
  };
}

export interface ContextOptions {
  readonly mesh?: Partial<MeshConfig>;
  /** hostname → service port → endpoints */
  readonly endpoints?: ReadonlyMap<string, ReadonlyMap<number, readonly MeshEndpoint[]>>;
  readonly virtualServices?: readonly VirtualService[];
  readonly destinationRules?: ReadonlyMap<string, DestinationRule>;
}

export function virtualService(name: string, namespace: string, spec: VirtualServiceSpec): VirtualService {
  return {
    kind: 'VirtualService',
    apiVersion: 'networking.istio.io/v1',
    meta: { name, namespace, labels: {}, annotations: {} },
    origin: { file: 'vs.yaml', index: 3 },
    spec,
  };
}

export function destinationRule(name: string, namespace: string, spec: DestinationRule['spec']): DestinationRule {
  return {
    kind: 'DestinationRule',
    apiVersion: 'networking.istio.io/v1',
    meta: { name, namespace, labels: {}, annotations: {} },
    origin: { file: 'dr.yaml', index: 0 },
    spec,
  };
}

/** A context with only what the listener translators read; VirtualServices apply by exact host. */
export function makeContext(services: readonly MeshService[], opts: ContextOptions = {}): CompileContext {
  const sorted = [...services].sort((a, b) => (a.hostname < b.hostname ? -1 : 1));
  const model: ServiceModel = {
    services: sorted,
    byHostname: new Map(sorted.map((s) => [s.hostname, s])),
    endpoints: opts.endpoints ?? new Map(),
    proxyLocalities: [],
    nodeLocalities: new Map(),
    namespaces: [...new Set(sorted.map((s) => s.namespace))].sort(),
    workloads: [],
    entryWorkloads: [],
    virtualServices: opts.virtualServices ?? [],
    destinationRules: [...(opts.destinationRules?.values() ?? [])],
    gateways: [],
  };
  const vss = opts.virtualServices ?? [];
  const hostOf = (vs: VirtualService) =>
    vs.spec.hosts.map((h) => (h.includes('.') ? h : `${h}.${vs.meta.namespace}.svc.cluster.local`));
  const routes =
    <R>(pick: (vs: VirtualService) => readonly R[] | undefined) =>
    (hostname: string) => {
      const out: { route: R; source: VirtualService }[] = [];
      for (const vs of vss)
        if (hostOf(vs).includes(hostname)) for (const route of pick(vs) ?? []) out.push({ route, source: vs });
      return out.length ? out : undefined;
    };
  return {
    model,
    mesh: { ...DEFAULT_MESH_CONFIG, ...opts.mesh },
    diags: new Diagnostics(),
    destinationRules: {
      lookup: (hostname: string): ResolvedDestinationRule | undefined => {
        const dr = opts.destinationRules?.get(hostname);
        return dr ? { hostname, spec: dr.spec, sources: [dr] } : undefined;
      },
    },
    security: NO_SECURITY_INDEX,
    sidecars: NO_SIDECARS,
    virtualServices: {
      httpRoutes: routes((vs) => vs.spec.http),
      tcpRoutes: routes((vs) => vs.spec.tcp) as (h: string) => SourcedTcpRoute[] | undefined,
      tlsRoutes: routes((vs) => vs.spec.tls) as (h: string) => SourcedTlsRoute[] | undefined,
    },
  };
}

type Plain = Record<string, unknown>;

/** Decodes a packed Any into a plain object (field names as in the .proto). */
export function unpack(any: Any | null | undefined): Plain {
  assert.ok(any?.type_url && any.value, 'expected a packed Any');
  const name = typeNameOf(any.type_url);
  const codec = codecOf(name);
  assert.ok(codec, `no codec for ${name}`);
  return codec.toObject(decodeMessage(name, any.value), { longs: Number, enums: String });
}

/** The typed config of the single filter named `name` in a chain. */
export function filterConfig(
  chain: { filters?: { name?: string | null; typed_config?: Any | null }[] | null } | null | undefined,
  name: string,
): Plain {
  const f = chain?.filters?.find((x) => x.name === name);
  assert.ok(f, `no ${name} filter in chain`);
  return unpack(f.typed_config);
}

/** Encodes a Listener and decodes it again; asserts nothing is lost or silently dropped. */
export function assertListenerRoundTrip(l: Listener): void {
  const codec = codecOf(TypeName.Listener);
  assert.ok(codec);
  const bytes = encodeMessage(TypeName.Listener, l);
  const decoded = decodeMessage(TypeName.Listener, bytes);
  assert.deepEqual(codec.toObject(decoded), codec.toObject(codec.fromObject(l as Plain)));
  assert.deepEqual(encodeMessage(TypeName.Listener, decoded), bytes);
}
