/**
 * Incremental compilation: after a full compile, an endpoint-only change recompiles only what
 * reads the endpoints of the services it touches, and returns the difference as a CompileDelta.
 *
 * Endpoint-layer changes are EndpointSlices, Endpoints, and updates of pods that keep their
 * labels, service account and whether they have an IP (labels and IPs decide the proxy classes).
 * For each touched service, recomputed from the kept model lookups (no pass over all services):
 *   - its model endpoints (model/build.ts `serviceEndpoints`);
 *   - its ClusterLoadAssignments (`endpoints` group);
 *   - its sidecar clusters (`outbound`): SPIFFE SANs come from its pods' service accounts and
 *     auto mTLS on ORIGINAL_DST clusters from their sidecars. Proxyless clusters read no
 *     endpoints and are left alone;
 *   - the same in every restricted visibility scope that sees it (`scope/<name>/outbound`,
 *     `…/endpoints`), with the scope's DestinationRule;
 *   - the inbound groups of the shapes it is part of, when a named targetPort resolves through
 *     its endpoints;
 *   - its endpoint-dependent diagnostics (incremental/diagnostics.ts);
 *   - for a headless service with TCP ports, the shared outbound listeners (one per pod IP), and
 *     the restricted scopes' outbound listeners.
 * A round of config changes (VirtualServices, DestinationRules, Services, with or without endpoint
 * changes) is compiled in full, and what is returned is the difference from the previous output
 * (incremental/output-diff.ts): the resources whose encoding changed, the groups gone, and the
 * classes and selectors when they changed (a new Service with a selector adds a class). The
 * snapshot builder then encodes and checks only those.
 * Every other change (other Istio config including ServiceEntries, Sidecars and WorkloadEntries,
 * Namespaces, Nodes, mesh config, pods coming, going or relabelled, any pod of a namespace where a
 * ServiceEntry selects pods) is a full compile. Either way the result equals `compile(next)`: the delta
 * applied to the previous output gives its output, and the diagnostics are its diagnostics
 * (test/compile/incremental*.test.ts checks this on random endpoint and config churn).
 */
import { Diagnostics, sortDiagnostics, type Diagnostic } from '../model/diagnostics.js';
import { serviceEndpoints, serviceHostname } from '../model/build.js';
import type { InputSet } from '../model/inputs.js';
import type { Pod, Service } from '../model/k8s.js';
import type { MeshConfig } from '../model/mesh-config.js';
import { isHttpProtocol, type MeshEndpoint, type MeshService, type Workload } from '../model/service-model.js';
import { buildServiceClusters } from './clusters.js';
import type { CompileContext } from './context.js';
import { buildServiceEndpoints } from './endpoints.js';
import { localityKey, variantsOf } from './locality-variants.js';
import { localityBaseGroup, localityVariantGroup } from '../proxy-class/locality.js';
import { nodeVariant, nodeVariantsOf } from './node-variants.js';
import { nodeBaseGroup, nodeVariantGroup } from '../proxy-class/node-local.js';
import { compileWithShapes, createContext, type CompileResult, type InboundReuse, type SidecarShape } from './index.js';
import { DeltaBuilder, copyTables, type LayoutChange } from './incremental/delta.js';
import {
  hasNamedTargetPort,
  sameDiagnostics,
  SortedDiagnostics,
  serviceEndpointDiagnostics,
} from './incremental/diagnostics.js';
import { EndpointLayer, serviceKey, type ServiceKey } from './incremental/endpoint-layer.js';
import { copyIndex, CopyRepatcher, type CopyIndex } from './incremental/envoy-filter-copies.js';
import { isInputKind, lookupInput } from './incremental/inputs-patch.js';
import { diffOutputs } from './incremental/output-diff.js';
import { isGrpcFamily } from './listener/inbound-chains.js';
import { buildInbound, buildOutboundListeners, buildProxylessServerListeners, type InboundShape } from './listeners.js';
import type { EndpointReadingGroups } from './scope/groups.js';
import { sameRule } from './scope/reuse.js';
import type { Cluster, ClusterLoadAssignment } from '../xds/proto.js';
import { selects } from '../proxy-class/class-id.js';
import {
  emptyTable,
  type ClassSelector,
  type CompileDelta,
  type CompileOutput,
  type GroupId,
  type ProxyClass,
  type ResourceTable,
} from './types.js';

export { applyCompileDelta, type LayoutChange } from './incremental/delta.js';
export {
  indexedInputs,
  lookupInput,
  withDeleted,
  withInputDiagnostics,
  withMeshConfig,
  withReplaced,
  type InputKind,
  type InputObject,
  type InputObjects,
} from './incremental/inputs-patch.js';

/** An object added, updated or deleted between the previous InputSet and the next one. */
export interface ChangedObject {
  /** The object's kind (`EndpointSlice`, `Pod`, …; `ConfigMap`/`MeshConfig` for the mesh config). */
  readonly kind: string;
  /** "" for cluster-scoped kinds. */
  readonly namespace: string;
  readonly name: string;
}

export type IncrementalResult =
  | {
      readonly kind: 'delta';
      readonly delta: CompileDelta;
      /** Groups removed, classes and selectors changed: only after a config change. */
      readonly layout?: LayoutChange;
      readonly diagnostics: readonly Diagnostic[];
    }
  | { readonly kind: 'full'; readonly output: CompileOutput; readonly diagnostics: readonly Diagnostic[] };

/** One inbound group and the workload shape it serves. */
interface Shape extends InboundShape {
  readonly group: GroupId;
}

interface State {
  readonly ctx: CompileContext;
  readonly endpoints: Map<string, ReadonlyMap<number, readonly MeshEndpoint[]>>;
  readonly layer: EndpointLayer;
  readonly services: ReadonlyMap<ServiceKey, { readonly raw: Service; readonly mesh: MeshService }>;
  readonly shapesByService: ReadonlyMap<string, readonly Shape[]>;
  readonly tables: Map<GroupId, ResourceTable>;
  readonly classes: readonly ProxyClass[];
  readonly selectors: readonly ClassSelector[];
  readonly serviceDiagnostics: Map<string, readonly Diagnostic[]>;
  readonly diagnostics: SortedDiagnostics;
  inputDiagnostics: readonly Diagnostic[];
  readonly meshConfig: MeshConfig;
  /** Whether gateway groups read endpoints (then endpoint changes compile in full). */
  readonly gatewaysReadEndpoints: boolean;
  /** Restricted scopes' views and their groups that read endpoints. */
  readonly endpointReaders: readonly EndpointReadingGroups[];
  /** Namespaces with a selector service on a gRPC port: their pods' IPs name proxyless server listeners. */
  readonly grpcServerNamespaces: ReadonlySet<string>;
  /** Namespaces whose pods a ServiceEntry's workloadSelector picks: a pod change there compiles in full. */
  readonly entrySelectedNamespaces: ReadonlySet<string>;
  /** The model's workloads by namespace: a changed Service's selector is matched against its namespace's only. */
  readonly workloadsByNamespace: ReadonlyMap<string, readonly Workload[]>;
  /**
   * The diagnostics of each inbound build of the last compile (their resources are in `tables`,
   * which endpoint rounds keep up to date; a build they make again must report the same:
   * reportsAsBefore).
   */
  readonly inbound: ReadonlyMap<GroupId, readonly Diagnostic[]>;
  /** The full view's outbound listeners' diagnostics, sorted: an endpoint round that rebuilds them replaces them. */
  outboundListenerDiagnostics: readonly Diagnostic[];
  /**
   * The groups EnvoyFilters patched copies of: the copies hold their resources patched, so an
   * endpoint round that edits one of them makes its copies again (./incremental/envoy-filter-copies.ts)
   * where it rebuilds the group whole, and compiles in full where it edits it otherwise (endpoints
   * groups are never patched).
   */
  readonly envoyFilterOriginals: ReadonlySet<GroupId>;
  /** The copies and how each was made, found once per compile. */
  readonly envoyFilterCopies: CopyIndex;
}

export class IncrementalCompiler {
  private state: State | undefined;
  private kept = false;
  private taken = 0;
  private path: 'endpoints' | 'recompiled' | 'full' = 'full';

  /**
   * How the last update was compiled: the endpoint path (only the touched services' resources), a
   * full compile handed on as a delta, or a full compile.
   */
  get lastPath(): 'endpoints' | 'recompiled' | 'full' {
    return this.path;
  }

  /** Whether the last update's compile took every inbound group from the compile before (VirtualServices only changed). */
  get inboundKept(): boolean {
    return this.kept;
  }

  /** How many inbound groups the last update's compile took from the compile before (0 when it built them all). */
  get inboundTaken(): number {
    return this.taken;
  }

  /** A full compile (the same result as `compile(inputs)`) that becomes the base of later updates. */
  compileFull(inputs: InputSet): CompileResult {
    this.path = 'full';
    return this.recompile(inputs, copyTables);
  }

  /** A full compile whose output's tables, as the later updates edit them, are `tablesOf(output)`. */
  private recompile(
    inputs: InputSet,
    tablesOf: (output: CompileOutput) => Map<GroupId, ResourceTable>,
    take?: InboundReuse,
  ): CompileResult {
    const diags = new Diagnostics();
    for (const d of inputs.diagnostics) diags.add(d);
    const built = createContext(inputs, diags);
    const compiled = compileWithShapes(built, take);
    this.kept = take !== undefined && compiled.inboundBuilt === 0;
    this.taken = take ? compiled.inboundDiagnostics.size - compiled.inboundBuilt : 0;
    const { output, sidecarShapes, endpointReaders, inboundDiagnostics, workloadsByNamespace } = compiled;
    const diagnostics = diags.sorted();

    // Own copies of what updates edit; the returned output stays as it is.
    const endpoints = new Map(built.model.endpoints);
    const ctx: CompileContext = { ...built, model: { ...built.model, endpoints } };
    const services = new Map<ServiceKey, { raw: Service; mesh: MeshService }>();
    for (const raw of inputs.services) {
      const mesh = ctx.model.byHostname.get(
        serviceHostname(raw.meta.name, raw.meta.namespace, inputs.meshConfig.domainSuffix),
      );
      if (mesh) services.set(serviceKey(raw.meta.namespace, raw.meta.name), { raw, mesh });
    }
    const serviceDiagnostics = new Map<string, readonly Diagnostic[]>();
    for (const s of ctx.model.services) {
      const list = serviceEndpointDiagnostics(ctx, s);
      if (list.length > 0) serviceDiagnostics.set(s.hostname, list);
    }
    this.state = {
      ctx,
      endpoints,
      layer: new EndpointLayer(inputs),
      services,
      shapesByService: shapesByService(sidecarShapes),
      tables: tablesOf(output),
      classes: output.classes,
      selectors: output.selectors,
      serviceDiagnostics,
      diagnostics: new SortedDiagnostics(diagnostics),
      inputDiagnostics: inputs.diagnostics,
      meshConfig: inputs.meshConfig,
      gatewaysReadEndpoints: gatewaysReadEndpoints(output, ctx),
      endpointReaders,
      grpcServerNamespaces: grpcServerNamespaces(ctx),
      entrySelectedNamespaces: new Set(
        ctx.model.services.filter((s) => s.serviceEntry?.workloadSelector).map((s) => s.namespace),
      ),
      workloadsByNamespace,
      inbound: inboundDiagnostics,
      outboundListenerDiagnostics: sortDiagnostics(compiled.outboundListenerDiagnostics),
      envoyFilterOriginals: compiled.envoyFilterOriginals,
      envoyFilterCopies: copyIndex(compiled.envoyFilterCopies, output.classes),
    };
    return { output, diagnostics };
  }

  /**
   * Compiles `next`, which differs from the previous InputSet by `changed`: a delta when only the
   * endpoint layer changed (or nothing did), a full compile returned as a delta when VirtualServices,
   * DestinationRules or Services changed (with slices, not pods), else a full compile. `next` made
   * by `withReplaced` / `withDeleted` makes the lookups of changed objects O(1).
   */
  update(next: InputSet, changed: readonly ChangedObject[]): IncrementalResult {
    this.kept = false;
    this.taken = 0;
    const state = this.state;
    if (!state) return { kind: 'full', ...this.compileFull(next) };
    if (!this.endpointOnly(state, next, changed))
      return configOnly(state, next, changed)
        ? this.recompiledDelta(state, next, changed)
        : { kind: 'full', ...this.compileFull(next) };

    const touched = new Set<ServiceKey>();
    const add = (keys: Iterable<ServiceKey>) => {
      for (const k of keys) touched.add(k);
    };
    for (const c of changed) {
      if (c.kind === 'EndpointSlice')
        add(state.layer.replaceSlice(c.namespace, c.name, lookupInput(next, 'EndpointSlice', c.namespace, c.name)));
      else if (c.kind === 'Endpoints')
        add(state.layer.replaceEndpoints(c.namespace, c.name, lookupInput(next, 'Endpoints', c.namespace, c.name)));
      else {
        const pod = lookupInput(next, 'Pod', c.namespace, c.name);
        add(pod ? state.layer.replacePod(pod) : state.layer.removePod(c.namespace, c.name));
      }
    }

    const builder = new DeltaBuilder(state.tables);
    try {
      return this.endpointRound(state, next, changed, touched, builder);
    } catch (e) {
      // An original EnvoyFilters copied and no class lists any more is gone from the tables.
      if (state.envoyFilterOriginals.size === 0) throw e;
      return { kind: 'full', ...this.compileFull(next) };
    }
  }

  /** The endpoint path of `update`: the changed services' assignments, and what names pod IPs. */
  private endpointRound(
    state: State,
    next: InputSet,
    changed: readonly ChangedObject[],
    touched: ReadonlySet<ServiceKey>,
    builder: DeltaBuilder,
  ): IncrementalResult {
    const patched = (g: GroupId | undefined): boolean => g !== undefined && state.envoyFilterOriginals.has(g);
    const shapes = new Set<Shape>();
    let podListeners = false;
    for (const key of [...touched].sort()) {
      const svc = state.services.get(key);
      if (!svc) continue; // a slice of a service that does not exist (yet) compiles to nothing
      if (!this.recompileService(state, svc.raw, svc.mesh, builder)) return { kind: 'full', ...this.compileFull(next) };
      if (hasNamedTargetPort(svc.mesh))
        for (const s of state.shapesByService.get(svc.mesh.hostname) ?? []) shapes.add(s);
      if (hasPodListeners(svc.mesh)) podListeners = true;
    }
    // A group rebuilt whole below: its new content where a class still lists it, and the copies
    // EnvoyFilters patched of it made again. False: only a full compile says what it becomes.
    const repatcher = new CopyRepatcher(state.tables, state.envoyFilterCopies, builder);
    const rebuilt = (group: GroupId, content: Partial<ResourceTable>): boolean => {
      if (state.tables.has(group))
        for (const type of ['listeners', 'clusters'] as const) {
          const next = content[type];
          if (next) builder.replaceAll(group, type, next);
        }
      return !patched(group) || repatcher.rebuilt(group, { ...emptyTable(), ...content });
    };
    // Headless services listen on their pods' IPs: the shared outbound listeners follow the
    // endpoints, and so do the full view's listener conflicts (they name the IPs).
    if (podListeners) {
      const diags = new Diagnostics();
      const listeners = buildOutboundListeners({ ...state.ctx, diags });
      if (!rebuilt('outbound-listeners', { listeners })) return { kind: 'full', ...this.compileFull(next) };
      const reported = diags.sorted();
      state.diagnostics.replace(state.outboundListenerDiagnostics, reported);
      state.outboundListenerDiagnostics = reported;
      // A restricted view's diagnostics are not the compile's (the full view's are), as in a full compile.
      for (const reader of state.endpointReaders) {
        const id = reader['outbound-listeners'];
        if (!id) continue;
        const view = {
          ...reader.view,
          model: { ...reader.view.model, endpoints: state.endpoints },
          diags: new Diagnostics(),
        };
        if (!rebuilt(id, { listeners: buildOutboundListeners(view) }))
          return { kind: 'full', ...this.compileFull(next) };
      }
    }
    // Pod IPs and named target ports name the listeners of proxyless gRPC servers.
    for (const ns of new Set(changed.map((c) => c.namespace))) {
      if (!state.grpcServerNamespaces.has(ns)) continue;
      const group = `grpc-inbound/${ns}`;
      const diags = new Diagnostics();
      const servers = buildProxylessServerListeners(
        { ...state.ctx, diags },
        ns,
        state.ctx.model.services.filter((s) => s.namespace === ns),
        currentWorkloads(state.layer, ns),
      );
      // The group appearing or disappearing changes the classes: only a full compile says so.
      if (servers.size > 0 !== state.tables.has(group)) return { kind: 'full', ...this.compileFull(next) };
      if (!reportsAsBefore(state, group, diags)) return { kind: 'full', ...this.compileFull(next) };
      if (servers.size > 0) builder.replaceAll(group, 'listeners', servers);
    }
    for (const shape of shapes) {
      const diags = new Diagnostics();
      const built = buildInbound({ ...state.ctx, diags }, shape);
      if (!reportsAsBefore(state, shape.group, diags)) return { kind: 'full', ...this.compileFull(next) };
      if (!rebuilt(shape.group, { listeners: built.listeners, clusters: built.clusters }))
        return { kind: 'full', ...this.compileFull(next) };
    }
    if (!repatcher.checked()) return { kind: 'full', ...this.compileFull(next) };

    if (next.diagnostics !== state.inputDiagnostics) {
      state.diagnostics.replace(sortedCopy(state.inputDiagnostics), sortedCopy(next.diagnostics));
      state.inputDiagnostics = next.diagnostics;
    }
    // An original edited other than rebuilt whole (its copies were not made again): a full compile.
    if (Object.keys(builder.delta).some((g) => patched(g) && !repatcher.handled.has(g)))
      return { kind: 'full', ...this.compileFull(next) };
    this.path = 'endpoints';
    return { kind: 'delta', delta: builder.delta, diagnostics: state.diagnostics.toArray() };
  }

  /**
   * A full compile of `next`, returned as its difference from the previous output. It takes the
   * last compile's inbound groups that the changes cannot reach (inboundKeep).
   */
  private recompiledDelta(state: State, next: InputSet, changed: readonly ChangedObject[]): IncrementalResult {
    this.path = 'recompiled';
    let diff: ReturnType<typeof diffOutputs> | undefined;
    const { diagnostics } = this.recompile(
      next,
      (output) => {
        // The previous tables become the next ones: resources encoded the same keep their message objects.
        diff = diffOutputs(state.tables, state, output);
        return state.tables;
      },
      // EnvoyFilters patch copies of the inbound groups and drop the originals no class lists: the
      // last tables do not hold every inbound build then.
      next.envoyFilters.length > 0 ? undefined : inboundKeep(state, next, changed),
    );
    const { delta, layout } = diff as ReturnType<typeof diffOutputs>;
    return { kind: 'delta', delta, ...(Object.keys(layout).length > 0 ? { layout } : {}), diagnostics };
  }

  /** Whether every change is in the endpoint layer (pods: updated without touching what decides classes). */
  private endpointOnly(state: State, next: InputSet, changed: readonly ChangedObject[]): boolean {
    if (next.meshConfig !== state.meshConfig && JSON.stringify(next.meshConfig) !== JSON.stringify(state.meshConfig))
      return false;
    if (state.gatewaysReadEndpoints) return false;
    for (const c of changed) {
      if (c.kind === 'EndpointSlice' || c.kind === 'Endpoints') continue;
      if (c.kind !== 'Pod' || state.entrySelectedNamespaces.has(c.namespace)) return false;
      const prev = state.layer.pod(c.namespace, c.name);
      const pod = lookupInput(next, 'Pod', c.namespace, c.name);
      if (!pod && !prev) continue; // nothing to do
      if (!workloadShapesKept(state.layer, prev, pod)) return false;
      // When a service's EDS depends on nodes, a pod's node may name a node group (model.proxyNodes): a
      // move keeps the groups only between Nodes' names (those stay whatever the pods say).
      if (state.ctx.model.proxyNodes && prev?.nodeName !== pod?.nodeName) {
        const known = (n: string | undefined): boolean => !n || state.layer.idx.nodes.has(n);
        if (!known(prev?.nodeName) || !known(pod?.nodeName)) return false;
      }
    }
    return true;
  }

  /** False when the service's assignments cannot be patched in place (placeAssignments): compile in full. */
  private recompileService(state: State, raw: Service, mesh: MeshService, builder: DeltaBuilder): boolean {
    state.endpoints.set(mesh.hostname, serviceEndpoints(raw, mesh, state.layer.idx));
    // The service's cluster and assignment names come from its ports and DestinationRule, not
    // its endpoints: the same names come back, so nothing here is ever deleted.
    const endpoints = buildServiceEndpoints(state.ctx, mesh);
    const clusters = buildServiceClusters(state.ctx, mesh, 'sidecar');
    // The full view's groups are gone when no class used them (every namespace restricted, no router).
    if (state.tables.has('endpoints') && !placeAssignments(state, builder, 'endpoints', endpoints)) return false;
    // DNS clusters with locality variants are ServiceEntries': never patched here (see placeAssignments).
    for (const c of clusters.values()) if (variantsOf(c)) return false;
    if (state.tables.has('outbound')) for (const [name, c] of clusters) builder.upsert('outbound', 'clusters', name, c);
    for (const reader of state.endpointReaders)
      if (!patchScope(state, reader, mesh, { clusters, endpoints }, builder)) return false;

    const before = state.serviceDiagnostics.get(mesh.hostname) ?? [];
    const after = serviceEndpointDiagnostics(state.ctx, mesh);
    state.diagnostics.replace(before, after);
    if (after.length > 0) state.serviceDiagnostics.set(mesh.hostname, after);
    else state.serviceDiagnostics.delete(mesh.hostname);
    return true;
  }
}

const NONE: ReadonlyMap<string, never> = new Map<string, never>();

/**
 * What a config round may take of the last compile's inbound groups. Inbound groups read no
 * VirtualService: a VirtualService round takes them all. A Service round takes every group whose
 * shape has no changed service and builds the others. An inbound build reads the services of its
 * shape (their ports, named target ports through their endpoints, their DestinationRules), its
 * security and Sidecar, and the mesh config; of those only the changed services differ (their
 * hostnames are in the group's id, so a group with the same id has the same services). Taken and
 * built groups mix: a build's diagnostics are its own (an unresolved named target port is reported
 * from the model, not by the builds that read it). A namespace's proxyless servers
 * (`grpc-inbound/<ns>`) are built again where a changed service selects one of its workloads. Extension
 * providers resolve the services they name into authorization filters and tracers (which trace only
 * where the shape's scope sees the collector): with any, nothing is taken.
 * Other rounds (DestinationRules, endpoints in the same round) build them all.
 */
function inboundKeep(state: State, next: InputSet, changed: readonly ChangedObject[]): InboundReuse | undefined {
  if (changed.every((c) => c.kind === 'VirtualService')) return takeFrom(state, new Set());
  const servicesOnly = changed.every((c) => c.kind === 'VirtualService' || c.kind === 'Service');
  if (!servicesOnly || (next.meshConfig.extensionProviders?.length ?? 0) > 0) return undefined;
  const stale = new Set<GroupId>();
  for (const c of changed) {
    if (c.kind !== 'Service') continue;
    const hostname = serviceHostname(c.name, c.namespace, next.meshConfig.domainSuffix);
    for (const shape of state.shapesByService.get(hostname) ?? []) stale.add(shape.group);
    const selectors = [
      state.services.get(serviceKey(c.namespace, c.name))?.raw.selector,
      lookupInput(next, 'Service', c.namespace, c.name)?.selector,
    ];
    if (selectors.some((s) => selectsWorkloadIn(state, c.namespace, s))) stale.add(`grpc-inbound/${c.namespace}`);
  }
  return takeFrom(state, stale);
}

/**
 * Whether a Service's selector (before or after a change) picks a workload of its namespace. A
 * namespace's proxyless server listeners are built per workload from the services selecting it:
 * a service that selects none changes none of them.
 */
function selectsWorkloadIn(
  state: State,
  namespace: string,
  selector: Readonly<Record<string, string>> | undefined,
): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return state.workloadsByNamespace.get(namespace)?.some((w) => selects(selector, w.labels)) ?? false;
}

/**
 * Whether an inbound build an endpoint round made again reports what the compile's record says it
 * did. Then the record stays right for later Service rounds (inboundKeep takes the group's
 * resources from the tables the round updates), and the round's diagnostics need nothing from the
 * build: what depends on endpoints is recomputed per service (serviceEndpointDiagnostics). A build
 * that reports otherwise changes the compile's diagnostics, which only a full compile gives.
 */
function reportsAsBefore(state: State, group: GroupId, diags: Diagnostics): boolean {
  const before = state.inbound.get(group);
  return before !== undefined && sameDiagnostics(before, diags.all);
}

/** The last compile's inbound builds, from the tables it left, but for the `stale` groups. */
function takeFrom(state: State, stale: ReadonlySet<GroupId>): InboundReuse {
  return (id) => {
    const diagnostics = state.inbound.get(id);
    if (!diagnostics || stale.has(id)) return undefined;
    const table = state.tables.get(id);
    return { listeners: table?.listeners ?? NONE, clusters: table?.clusters ?? NONE, diagnostics };
  };
}

/** Endpoint-layer kinds (pods decide proxy classes: not these). */
const ENDPOINT_KINDS: ReadonlySet<string> = new Set(['EndpointSlice', 'Endpoints']);

/**
 * Whether a round that is not endpoint-only may still go out as a delta: a kind the compiler reads
 * other than the endpoint layer changed (an endpoint-layer round the endpoint path refuses, e.g.
 * with an AUTO_PASSTHROUGH gateway, stays a full compile), and the mesh config did not.
 */
function configOnly(state: State, next: InputSet, changed: readonly ChangedObject[]): boolean {
  if (next.meshConfig !== state.meshConfig && JSON.stringify(next.meshConfig) !== JSON.stringify(state.meshConfig))
    return false;
  // Every kind the compiler reads (diffOutputs is exact for any change; at 10k services a delta costs
  // the builder the resources that changed where a full build re-encodes and re-checks ~150k).
  return changed.some((c) => !ENDPOINT_KINDS.has(c.kind)) && changed.every((c) => isInputKind(c.kind));
}

/**
 * A restricted scope that sees the service gets the full view's new objects (ports it sees) when its
 * DestinationRule is the full view's, else its own rebuilt with the current endpoints.
 */
function patchScope(
  state: State,
  reader: EndpointReadingGroups,
  service: MeshService,
  full: { clusters: ReadonlyMap<string, Cluster>; endpoints: ReadonlyMap<string, ClusterLoadAssignment> },
  builder: DeltaBuilder,
): boolean {
  const seen = reader.view.model.byHostname.get(service.hostname);
  if (!seen) return true;
  const view: CompileContext = { ...reader.view, model: { ...reader.view.model, endpoints: state.endpoints } };
  const same = sameRule(state.ctx, view, service.hostname);
  const ports = new Set(seen.ports.map((p) => p.port));
  const kept = <M>(m: ReadonlyMap<string, M>): [string, M][] =>
    [...m].filter(([name]) => ports.has(Number(name.split('|')[1])));
  if (reader.outbound)
    for (const [name, c] of same ? kept(full.clusters) : buildServiceClusters(view, seen, 'sidecar'))
      builder.upsert(reader.outbound, 'clusters', name, c);
  if (reader.endpoints)
    return placeAssignments(
      state,
      builder,
      reader.endpoints,
      same ? new Map(kept(full.endpoints)) : buildServiceEndpoints(view, seen),
    );
  return true;
}

/**
 * Puts a service's assignments where the full compile put them (scope/locality-groups.ts,
 * scope/node-groups.ts): in the endpoints group, or, for those that depend on the proxy's locality
 * or node, in its locality or node groups. False
 * when one moved between the two (or its locality groups do not exist yet): only a full compile
 * says what the classes then are.
 */
function placeAssignments(
  state: State,
  builder: DeltaBuilder,
  group: GroupId,
  assignments: ReadonlyMap<string, ClusterLoadAssignment>,
): boolean {
  const base = state.tables.get(localityBaseGroup(group));
  const nodeBase = state.tables.get(nodeBaseGroup(group));
  for (const [name, cla] of assignments) {
    // A node-local or PreferSameNode service's: in `G#` and every `G#<node>` (scope/node-groups.ts), nodes being the compile's.
    const onNodes = nodeVariantsOf(cla);
    if ((onNodes !== undefined) !== (nodeBase?.endpoints.has(name) ?? false)) return false;
    if (onNodes) {
      builder.upsert(nodeBaseGroup(group), 'endpoints', name, onNodes.base);
      for (const node of state.ctx.model.proxyNodes ?? [])
        builder.upsert(nodeVariantGroup(group, node), 'endpoints', name, nodeVariant(onNodes, node));
      continue;
    }
    const variants = variantsOf(cla);
    if ((variants !== undefined) !== (base?.endpoints.has(name) ?? false)) return false;
    if (!variants) {
      builder.upsert(group, 'endpoints', name, cla);
      continue;
    }
    builder.upsert(localityBaseGroup(group), 'endpoints', name, variants.base);
    for (const l of state.ctx.model.proxyLocalities) {
      const key = localityKey(l);
      builder.upsert(
        localityVariantGroup(group, key),
        'endpoints',
        name,
        variants.byLocality.get(key) ?? variants.base,
      );
    }
  }
  return true;
}

/**
 * Gateway groups read endpoints in two places: AUTO_PASSTHROUGH clusters copy their assignments, and
 * a named targetPort of a Service selecting a gateway resolves through them. Either way an endpoint
 * change rebuilds in full.
 */
function gatewaysReadEndpoints(output: CompileOutput, ctx: CompileContext): boolean {
  const { gateways, byHostname } = ctx.model;
  if (gateways.some((g) => g.spec.servers.some((s) => s.tls?.mode === 'AUTO_PASSTHROUGH'))) return true;
  return output.classes.some(
    (c) =>
      c.generator === 'router' &&
      c.services.some((h) => {
        const service = byHostname.get(h);
        return service !== undefined && hasNamedTargetPort(service);
      }),
  );
}

/** A headless service with a TCP-like port: its outbound listeners are named by its endpoints' IPs. */
const hasPodListeners = (s: MeshService): boolean =>
  s.headless &&
  s.externalName === undefined &&
  s.ports.some((p) => p.protocol !== 'UDP' && !isHttpProtocol(p.protocol));

/**
 * A pod's workload shape: labels decide proxy classes and subsets, the service account the SANs'
 * owners, its proxy config a gateway's HCMs, its container ports its inbound listeners.
 */
function sameWorkloadShape(a: Pod, b: Pod): boolean {
  return (
    a.serviceAccount === b.serviceAccount &&
    sameRecord(a.meta.labels, b.meta.labels) &&
    JSON.stringify(a.proxyConfig) === JSON.stringify(b.proxyConfig) &&
    JSON.stringify(a.containerPorts) === JSON.stringify(b.containerPorts)
  );
}

/**
 * Whether a pod change (new, deleted, moved, gaining or losing its IP) leaves its namespace's
 * workload shapes (those of the pods with an IP: an IP makes a pod a workload) as they were: they
 * decide the inbound groups and the proxies' classes. A pod that keeps its shape and its IP-ness, a
 * scale-up (a pod of a shape another pod already has) or a scale-down is then an endpoint change
 * (its IP reaches the assignments through the slices).
 */
function workloadShapesKept(layer: EndpointLayer, prev: Pod | undefined, pod: Pod | undefined): boolean {
  const had = prev !== undefined && prev.ips.length > 0;
  const has = pod !== undefined && pod.ips.length > 0;
  if (had === has && (!had || sameWorkloadShape(prev as Pod, pod as Pod))) return true;
  const self = (pod ?? prev) as Pod;
  const others = [...(layer.idx.podsByName.get(self.meta.namespace)?.values() ?? [])].filter(
    (o) => o.meta.name !== self.meta.name && o.ips.length > 0,
  );
  const heldElsewhere = (p: Pod): boolean => others.some((o) => sameWorkloadShape(o, p));
  return (!had || heldElsewhere(prev as Pod)) && (!has || heldElsewhere(pod as Pod));
}

function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  if (a === b) return true;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

function sortedCopy(list: readonly Diagnostic[]): Diagnostic[] {
  const d = new Diagnostics();
  for (const x of list) d.add(x);
  return d.sorted();
}

/** The namespace's pods with an IP, as the model builds its workloads. */
function currentWorkloads(layer: EndpointLayer, namespace: string): Workload[] {
  const pods = [...(layer.idx.podsByName.get(namespace)?.values() ?? [])];
  return pods
    .filter((p) => p.ips.length > 0)
    .sort((a, b) => (a.meta.name < b.meta.name ? -1 : a.meta.name > b.meta.name ? 1 : 0))
    .map((p) => ({
      namespace,
      name: p.meta.name,
      labels: p.meta.labels,
      ips: [...p.ips].sort(),
      serviceAccount: p.serviceAccount,
    }));
}

function grpcServerNamespaces(ctx: CompileContext): Set<string> {
  const out = new Set<string>();
  for (const s of ctx.model.services)
    if (s.selector && Object.keys(s.selector).length > 0 && s.ports.some((p) => isGrpcFamily(p.protocol)))
      out.add(s.namespace);
  return out;
}

/** hostname → the inbound groups of the sidecar classes whose shape includes the service. */
function shapesByService(sidecars: readonly SidecarShape[]): Map<string, Shape[]> {
  const out = new Map<string, Shape[]>();
  for (const sidecar of sidecars) {
    if (sidecar.services.length === 0) continue;
    const shape: Shape = { ...sidecar, group: sidecar.inboundGroup };
    for (const s of sidecar.services) {
      const list = out.get(s.hostname);
      if (list) list.push(shape);
      else out.set(s.hostname, [shape]);
    }
  }
  return out;
}
