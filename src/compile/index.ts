/**
 * The compiler: a pure function from an InputSet to Envoy resources and proxy classes.
 *
 * One translator per xDS type (clusters.ts, endpoints.ts, listeners.ts, routes.ts), plus the
 * proxyless gRPC variants and the gateway (router) translator (gateway/). This file only wires them together and decides grouping:
 *
 *   InputSet ──buildServiceModel──▶ ServiceModel ──translators──▶ groups of resources + classes
 *
 * No I/O, no clocks, no randomness, no Node built-ins: it also runs in Workers and Lambda.
 */
import { withProxyConfig } from '../model/mesh-config.js';
import { Diagnostics, type Diagnostic } from '../model/diagnostics.js';
import { buildServiceModel } from '../model/build.js';
import type { InputSet } from '../model/inputs.js';
import type { DestinationRule } from '../model/istio.js';
import {
  hasWorkloadSelector,
  workloadSelectorOf,
  type MeshService,
  type ServiceModel,
  type Workload,
} from '../model/service-model.js';
import { classServiceName, selects, sidecarClassId } from '../proxy-class/class-id.js';
import type { CompileContext } from './context.js';
import { indexDestinationRules } from './destination-rules.js';
import { analyzeGateways } from './gateway/analysis.js';
import { convertGatewayApi } from './gateway-api/index.js';
import { convertIngress } from './ingress/index.js';
import { buildRouterGroup, isRouterWorkload, routerShapes, selectorRefs } from './gateway/index.js';
import { verifiedGatewaySecrets } from './gateway/verified-secrets.js';
import { buildInbound, buildProxylessServerListeners, reportNamedTargetPorts, type InboundShape } from './listeners.js';
import { unseenCollectors } from './listener/unseen-collectors.js';
import { sidecarDiagnostics } from './scope/diagnostics.js';
import {
  restrictedViewDiagnostics,
  scopeGroups,
  type EndpointReadingGroups,
  type ScopeGroups,
} from './scope/groups.js';
import { scopeResolver, type Scope } from './scope/scopes.js';
import { classKeysOf, selectorRulesOf, type SelectorRuleIndex } from './scope/select-rules.js';
import { indexSidecars } from './scope/select-sidecar.js';
import { indexAccessLogs } from './listener/telemetry-logs.js';
import { collectorLookup, indexTracing } from './listener/telemetry-tracing.js';
import { applyEnvoyFilters, type EnvoyFilterCopies } from './envoy-filter/groups.js';
import { indexEnvoyFilters, type EnvoyFilterIndex } from './envoy-filter/selection.js';
import {
  indexSourceSelectors,
  listenerClientOf,
  routeSourceOf,
  type ListenerClient,
  type RouteSource,
  type SourceSelectorIndex,
} from './route/source-labels.js';
import { labelsKey } from './labels.js';
import { buildJwksClusters } from './security/jwks-clusters.js';
import { indexSecurity, type WorkloadSecurity } from './security/workload-security.js';
import { buildProxylessNamespaceRoutes } from './routes.js';
import {
  emptyTable,
  type ClassSelector,
  type CompileOutput,
  type GroupId,
  type OwnedCompileOutput,
  type ProxyClass,
  type ResourceTable,
} from './types.js';
import { indexVirtualServices } from './virtual-services.js';
import type { Cluster, Listener } from '../xds/proto.js';
import { sortedByName } from './sorted.js';
import { splitLocalityGroups } from './scope/locality-groups.js';
import { splitNodeGroups } from './scope/node-groups.js';

export interface CompileResult {
  readonly output: CompileOutput;
  /** Input diagnostics followed by the compiler's, in canonical order. */
  readonly diagnostics: readonly Diagnostic[];
}

export function createContext(given: InputSet, diags: Diagnostics): CompileContext {
  // Gateway API objects and Kubernetes Ingresses become Istio Gateways and VirtualServices first, as istiod converts them.
  const inputs = convertIngress(convertGatewayApi(given, diags), diags);
  const model = buildServiceModel(inputs, diags);
  return {
    model,
    mesh: inputs.meshConfig,
    diags,
    destinationRules: indexDestinationRules(model, inputs.meshConfig, diags),
    virtualServices: indexVirtualServices(model, inputs.meshConfig, diags),
    security: indexSecurity(inputs, model, diags),
    sidecars: indexSidecars(sidecarDiagnostics(inputs.sidecars, diags), inputs.meshConfig.rootNamespace),
    accessLogs: indexAccessLogs(inputs.meshConfig, inputs.telemetries, diags),
    tracing: indexTracing(inputs.meshConfig, inputs.telemetries, collectorLookup(model), diags),
    envoyFilters: indexEnvoyFilters(inputs.envoyFilters, inputs.meshConfig.rootNamespace, model.namespaces, diags),
  };
}

export function compile(inputs: InputSet): CompileResult {
  return compileOwned(inputs);
}

/** A value handed over once (pipeline.ts's Handoff): once taken, only the taker's frames hold it. */
export interface HandedOver<T> {
  take(): T;
}

/**
 * `compile`, saying that the output is the caller's own (a one-shot snapshot build takes it apart).
 * Inputs handed over are let go with the compile's context, before the EnvoyFilter copies are made.
 */
export function compileOwned(
  inputs: InputSet | HandedOver<InputSet>,
  hooks: CompileHooks = {},
): CompileResult & { readonly output: OwnedCompileOutput } {
  const diags = new Diagnostics();
  // The compile's context and what only the incremental compiler keeps are gone: the EnvoyFilter
  // copies are made beside the output alone (at 10k services its context is ~90 MB).
  const { output } = placeEnvoyFilters(classGroupsOf(inputs, diags), hooks.collect);
  return { output, diagnostics: diags.sorted() };
}

export interface CompileHooks {
  /**
   * A full collection (the pipeline's PipelineOptions.collect). Where the mesh has EnvoyFilters
   * the compile calls it once its context is let go, before their patched copies are made: the
   * copies grow the heap from the output's live size, not from where the context left it.
   * (Collections while they are made were tried: the real CLI's peak is then its publish's.)
   */
  readonly collect?: () => void;
}

/**
 * buildClassGroups in a frame of its own, which lets the context (and inputs handed over) go when
 * it returns, and without what only the incremental compiler keeps (it holds views of the context).
 */
function classGroupsOf(
  handed: InputSet | HandedOver<InputSet>,
  diags: Diagnostics,
): Pick<ClassGroups, 'groups' | 'classes' | 'selectors' | 'envoyFilters'> {
  const inputs = 'take' in handed ? handed.take() : handed;
  for (const d of inputs.diagnostics) diags.add(d);
  const { groups, classes, selectors, envoyFilters } = buildClassGroups(createContext(inputs, diags));
  return { groups, classes, selectors, envoyFilters };
}

export function compileContext(ctx: CompileContext): CompileOutput {
  return compileWithShapes(ctx).output;
}

/**
 * The inbound side of one workload shape (a sidecar's `inbound/…` group) or one namespace's
 * proxyless servers (`grpc-inbound/<ns>`, empty when it has none), with the diagnostics its build gave.
 */
export interface InboundBuild {
  readonly listeners: ReadonlyMap<string, Listener>;
  readonly clusters: ReadonlyMap<string, Cluster>;
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * Inbound builds of an earlier compile, by group id, that this compile may take as they are: the
 * caller says they are what building them again would give, diagnostics included (see
 * IncrementalCompiler). It may give some and not others: a build's diagnostics are its own, none
 * is reported once per compile by whichever build comes first (an unresolved named target port is
 * reported from the model: reportNamedTargetPorts).
 */
export type InboundReuse = (group: GroupId) => InboundBuild | undefined;

/** What a compile keeps for the incremental compiler beside its output. */
interface CompileExtras {
  readonly sidecarShapes: readonly SidecarShape[];
  /** Restricted scopes' clusters and endpoints, which an endpoint change patches too. */
  readonly endpointReaders: readonly EndpointReadingGroups[];
  /** The diagnostics of each inbound build (InboundBuild), by group id. */
  readonly inboundDiagnostics: ReadonlyMap<GroupId, readonly Diagnostic[]>;
  /** Inbound groups built here although `reuse` was given (it did not have them). */
  readonly inboundBuilt: number;
  /** The diagnostics of the full view's outbound listeners (headless services listen on their pods' IPs). */
  readonly outboundListenerDiagnostics: readonly Diagnostic[];
  /** The model's workloads (pods) by namespace, found once for the shapes. */
  readonly workloadsByNamespace: ReadonlyMap<string, readonly Workload[]>;
}

/** A compile's groups and classes before EnvoyFilters are applied (placeEnvoyFilters). */
interface ClassGroups extends CompileExtras {
  readonly groups: Map<GroupId, ResourceTable>;
  /** Sorted by id. */
  readonly classes: ProxyClass[];
  readonly selectors: ClassSelector[];
  /** What the EnvoyFilters need, when the mesh has some. */
  readonly envoyFilters: EnvoyFilterStage | undefined;
}

/** A compile with what the incremental compiler keeps of it. */
export interface ShapedCompile extends CompileExtras {
  readonly output: OwnedCompileOutput;
  /** The groups EnvoyFilters patched copies of (./envoy-filter/groups.ts): an endpoint round that edits one compiles in full. */
  readonly envoyFilterOriginals: ReadonlySet<GroupId>;
  /** How each patched copy was made (an endpoint round that rebuilds its original makes it again), when no EnvoyFilter was left out. */
  readonly envoyFilterCopies: EnvoyFilterCopies;
}

/** The compile, and the sidecar shapes it found (the incremental compiler indexes them, not finding them again). */
export function compileWithShapes(ctx: CompileContext, reuse?: InboundReuse): ShapedCompile {
  const { groups, classes, selectors, envoyFilters, ...extras } = buildClassGroups(ctx, reuse);
  return { ...extras, ...placeEnvoyFilters({ groups, classes, selectors, envoyFilters }) };
}

/** The compile but for its EnvoyFilters (placeEnvoyFilters). */
function buildClassGroups(ctx: CompileContext, reuse?: InboundReuse): ClassGroups {
  const inboundDiagnostics = new Map<GroupId, readonly Diagnostic[]>();
  // Inbound builds report into a list of their own, each build's part kept with it.
  const inboundCtx: CompileContext = { ...ctx, diags: new Diagnostics() };
  let inboundBuilt = 0;
  /** The build of an inbound group, taken from `reuse` or built; either way its diagnostics are the compile's. */
  const inboundBuild = (id: GroupId, build: (c: CompileContext) => Omit<InboundBuild, 'diagnostics'>): InboundBuild => {
    let built = reuse?.(id);
    if (!built) {
      if (reuse) inboundBuilt++;
      const from = inboundCtx.diags.all.length;
      const { listeners, clusters } = build(inboundCtx);
      const all = inboundCtx.diags.all;
      built = { listeners, clusters, diagnostics: all.length === from ? NO_DIAGNOSTICS : all.slice(from) };
    }
    for (const d of built.diagnostics) ctx.diags.add(d);
    inboundDiagnostics.set(id, built.diagnostics);
    return built;
  };
  const groups = new Map<string, ResourceTable>();
  const group = (id: string): ResourceTable => {
    let t = groups.get(id);
    if (!t) groups.set(id, (t = emptyTable()));
    return t;
  };

  // The full view's clusters, endpoints and listeners are built whatever uses them: their
  // diagnostics are the compile's.
  const jwks = buildJwksClusters(ctx);
  const scopes = scopeResolver(ctx);
  const scoped = scopeGroups(ctx, group, (id) => groups.has(id), jwks, scopes.full);
  scoped.build(scopes.full, 'outbound');
  scoped.build(scopes.full, 'endpoints');
  const beforeListeners = ctx.diags.all.length;
  scoped.build(scopes.full, 'outbound-listeners');
  // What the full view's listeners report: listener conflicts name pod IPs, which endpoints change.
  const outboundListenerDiagnostics = ctx.diags.all.slice(beforeListeners);

  // Once per compile, whatever inbound groups read the ports (or are taken from `reuse`).
  for (const s of ctx.model.services) reportNamedTargetPorts(ctx, s, ctx.diags);

  const classes: ProxyClass[] = [];
  /** The label-selected EnvoyFilters of each class that has some (their keys). */
  const envoyFilterKeys = new Map<string, readonly string[]>();
  /** Router classes' target port → Gateway server ports (EnvoyFilter route matches on gateways). */
  const gatewayPortMaps = new Map<string, ReadonlyMap<number, readonly number[]>>();
  const sidecars: SidecarShape[] = [];
  const unseen = unseenCollectors(ctx);
  const byNamespace = namespaceIndex(ctx.model);
  const selectorRules = selectorRulesOf(ctx);
  const sourceSelectors = indexSourceSelectors(ctx.model.virtualServices);
  for (const ns of ctx.model.namespaces) {
    // Proxyless clients see what exportTo and their namespace's Sidecar let them see, as sidecars
    // do; they are placed by namespace, not labels: only a rule selecting every workload applies.
    const grpcScope = scopes.scopeOf(ns, ctx.sidecars.forWorkload(ns, {}), selectorRules.selecting(ns, {}));
    const grpcGroups = [
      scoped.shared(grpcScope, 'grpc-clusters'),
      scoped.shared(grpcScope, 'endpoints'),
      scoped.shared(grpcScope, 'grpc'),
    ];
    // Only route configs whose routes match on sourceNamespace differ per namespace (usually none).
    const nsRoutes = buildProxylessNamespaceRoutes(grpcScope.full ? ctx : { ...grpcScope.ctx, diags: ctx.diags }, ns);
    if (nsRoutes.size) {
      const own = group(`grpc/${ns}`);
      for (const [name, r] of nsRoutes) own.routes.set(name, r);
      grpcGroups.push(`grpc/${ns}`);
    }
    const servers = inboundBuild(`grpc-inbound/${ns}`, (c) => ({
      listeners: buildProxylessServerListeners(
        c,
        ns,
        byNamespace.services.get(ns) ?? [],
        byNamespace.workloads.get(ns) ?? [],
      ),
      clusters: NO_CLUSTERS,
    })).listeners;
    if (servers.size) {
      const own = group(`grpc-inbound/${ns}`);
      for (const [name, l] of servers) own.listeners.set(name, l);
      grpcGroups.push(`grpc-inbound/${ns}`);
    }
    classes.push({ id: `grpc/${ns}`, generator: 'grpc', namespace: ns, services: [], groups: grpcGroups });

    for (const found of sidecarShapes(ctx, byNamespace, { selectorRules, sourceSelectors }, ns)) {
      const scope = scopes.scopeOf(ns, found.sidecar, found.destinationRules);
      // A Telemetry tracer sends to its collector's cluster: the inbound side checks its scope has it.
      const shape =
        ctx.tracing?.active && !scope.full ? { ...found, scopeServices: scope.ctx.model.byHostname } : found;
      if (ctx.tracing?.active) unseen.check(shape, scope.ctx.model.byHostname);
      sidecars.push(shape);
      const inbound = group(shape.inboundGroup);
      const built = inboundBuild(shape.inboundGroup, (c) => buildInbound(c, shape));
      for (const [name, l] of built.listeners) inbound.listeners.set(name, l);
      for (const [name, c] of built.clusters) inbound.clusters.set(name, c);
      if (shape.envoyFilters?.length) envoyFilterKeys.set(shape.classId, shape.envoyFilters);
      classes.push({
        id: shape.classId,
        generator: 'sidecar',
        namespace: ns,
        services: shape.services.map((s) => s.hostname),
        groups: sidecarGroups(scoped, scope, ns, shape, sourceSelectors),
      });
    }
  }
  analyzeGateways(ctx);
  reportSidecarProxyHeaders(ctx);
  const routers = routerShapes(
    ctx,
    (ns, labels) => servicesSelecting(ctx.model, ns, labels),
    sourceSelectors,
    selectorRules,
  );
  for (const shape of routers) {
    const groupId = `gateway/${shape.id.slice('router/'.length)}`;
    const verifiedSecrets = verifiedGatewaySecrets(shape.namespace, shape.gateways);
    // istiod's DefaultSidecarScopeForGateway: what the gateway's namespace sees (exportTo, its
    // namespace's DestinationRules first) and the rules that select its pods; usually the full view.
    const scope = scopes.scopeOf(shape.namespace, undefined, shape.destinationRules);
    const routerGroups = [scoped.shared(scope, 'outbound'), scoped.shared(scope, 'endpoints')];
    const [clusters, assignments] = routerGroups.map((id) => groups.get(id) as ResourceTable) as [
      ResourceTable,
      ResourceTable,
    ];
    const seen = scope.full ? ctx : { ...scope.ctx, diags: restrictedViewDiagnostics(ctx.diags, shape.namespace) };
    // The gateway's pods' own ProxyConfig (proxy headers, topology) over the mesh's defaultConfig.
    const view = shape.proxyConfig ? { ...seen, mesh: withProxyConfig(seen.mesh, shape.proxyConfig) } : seen;
    if (ctx.tracing?.active) unseen.checkRouter(view, shape);
    groups.set(
      groupId,
      buildRouterGroup(
        view,
        shape,
        { clusters: clusters.clusters, endpoints: assignments.endpoints },
        ctx.envoyFilters?.any ? (map) => gatewayPortMaps.set(shape.id, map) : undefined,
      ),
    );
    if (shape.envoyFilters?.length) envoyFilterKeys.set(shape.id, shape.envoyFilters);
    classes.push({
      id: shape.id,
      generator: 'router',
      namespace: shape.namespace,
      services: shape.services.map((s) => s.hostname),
      groups: [...routerGroups, groupId],
      gateways: selectorRefs(shape.gateways),
      // Absent when empty: classes without it keep their documents and digests byte-identical.
      ...(verifiedSecrets.length ? { verifiedSecrets } : {}),
    });
  }
  unseen.report();
  for (const id of ['outbound', 'endpoints', 'outbound-listeners', 'grpc-clusters', 'grpc'])
    if (!scoped.used.has(id)) groups.delete(id);
  classes.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const located = splitLocalityGroups(groups, classes, ctx.model.proxyLocalities, ctx.model.nodeLocalities);
  // Node-local and PreferSameNode services' assignments: only when the mesh has one.
  const nodes = ctx.model.proxyNodes;
  const split = nodes ? splitNodeGroups(groups, located.classes, nodes) : located.classes;
  // EnvoyFilters patch last, what each proxy class got, as istiod patches what it generated.
  const envoyFilters: EnvoyFilterStage | undefined = ctx.envoyFilters?.any
    ? { index: ctx.envoyFilters, keys: envoyFilterKeys, gatewayPortMaps }
    : undefined;
  return {
    groups,
    classes: split,
    selectors: [...classSelectors(ctx, { selectorRules, sourceSelectors }), ...located.nodeSelectors],
    envoyFilters,
    sidecarShapes: sidecars,
    endpointReaders: scoped.endpointReaders,
    inboundDiagnostics,
    inboundBuilt,
    outboundListenerDiagnostics,
    workloadsByNamespace: byNamespace.workloads,
  };
}

/** What patching a compile's classes with EnvoyFilters needs of it (small: the compile's context can go first). */
interface EnvoyFilterStage {
  readonly index: EnvoyFilterIndex;
  /** The label-selected EnvoyFilters of each class that has some (their keys). */
  readonly keys: ReadonlyMap<string, readonly string[]>;
  /** Router classes' target port → Gateway server ports. */
  readonly gatewayPortMaps: ReadonlyMap<string, ReadonlyMap<number, readonly number[]>>;
}

/**
 * The compile's output, its EnvoyFilters applied (./envoy-filter/groups.ts: patched copies of groups
 * added to `groups`); the groups copied, and how each copy was made.
 */
function placeEnvoyFilters(
  {
    groups,
    classes,
    selectors,
    envoyFilters: stage,
  }: Pick<ClassGroups, 'groups' | 'classes' | 'selectors' | 'envoyFilters'>,
  collect?: () => void,
): Pick<ShapedCompile, 'output' | 'envoyFilterOriginals' | 'envoyFilterCopies'> {
  const outputOf = (placed: ProxyClass[]): OwnedCompileOutput => ({
    groups: sortGroups(groups),
    classes: placed,
    selectors,
  });
  if (!stage) return { output: outputOf(classes), envoyFilterOriginals: NO_GROUPS, envoyFilterCopies: NO_COPIES };
  const { index, keys, gatewayPortMaps } = stage;
  collect?.();
  const patched = applyEnvoyFilters(
    groups,
    classes,
    (c) => index.patchesFor(c.namespace, keys.get(c.id) ?? []),
    index.reportPanic,
    (c) => gatewayPortMaps.get(c.id),
  );
  index.reportRefusals(patched.refusals);
  return {
    output: outputOf(patched.classes),
    envoyFilterOriginals: patched.originals,
    // A left-out EnvoyFilter may apply once the resources change: only a full compile says.
    envoyFilterCopies:
      patched.refusals.size > 0 ? { copies: new Map(), refused: true } : { copies: patched.copies, refused: false },
  };
}

const NO_CLUSTERS: ReadonlyMap<string, Cluster> = new Map();

/**
 * A sidecar pod whose `proxy.istio.io/config` sets proxy headers: istiod gives that proxy its own
 * headers; meshsnap's sidecar classes are shared, so they keep the mesh's (gateways apply theirs).
 */
function reportSidecarProxyHeaders(ctx: CompileContext): void {
  const routers = ctx.model.gateways;
  for (const w of ctx.model.workloads) {
    const own = (['proxyHeaders', 'tracing'] as const).filter((k) => w.proxyConfig?.[k]);
    if (own.length === 0 || isRouterWorkload(routers, w.labels)) continue;
    ctx.diags.warn({
      code: 'unsupported-field',
      kind: 'Pod',
      namespace: w.namespace,
      name: w.name,
      field: 'metadata.annotations.proxy.istio.io/config',
      message: `${own.join(' and ')} of a sidecar's own ProxyConfig ${own.length > 1 ? 'are' : 'is'} not applied: sidecar classes are shared, so it gets the mesh's defaultConfig (gateways apply their pods')`,
    });
  }
}
const NO_DIAGNOSTICS: readonly Diagnostic[] = [];
const NO_GROUPS: ReadonlySet<GroupId> = new Set();
const NO_COPIES: EnvoyFilterCopies = { copies: new Map(), refused: false };

/**
 * A sidecar class's groups: its outbound ones in its scope, as seen from its namespace (clusters,
 * endpoints, listeners, routes), then its inbound group. One literal: a spread into a list grows it
 * as a push does, past its length (./exact.ts).
 */
const sidecarGroups = (
  scoped: ScopeGroups,
  scope: Scope,
  ns: string,
  shape: SidecarShape,
  sourceSelectors: SourceSelectorIndex,
): string[] => [
  scoped.shared(scope, 'outbound'),
  scoped.shared(scope, 'endpoints'),
  scoped.listeners(scope, listenerClient(scope, sourceSelectors, ns, shape.routeSource, shape.telemetry)),
  scoped.routes(scope, ns, shape.routeSource),
  shape.inboundGroup,
];

/**
 * Who a sidecar's outbound listeners are built for: as seen from its namespace where `tcp`/`tls`
 * matches name it or its namespace's own Telemetry sets access logging or tracing, by its labels where they
 * select some `sourceLabels`, with the workload-selected Telemetries that select it; else the
 * shared ones.
 */
function listenerClient(
  scope: Scope,
  sourceSelectors: SourceSelectorIndex,
  ns: string,
  source: RouteSource | undefined,
  telemetry: readonly string[] | undefined,
): ListenerClient | undefined {
  const client = listenerClientOf(sourceSelectors, ns, source);
  const owned = scope.ctx.accessLogs?.ownsListeners(ns) ? { ...client, namespace: ns } : client;
  return telemetry?.length ? { ...owned, telemetry } : owned;
}

/** A sidecar class: its inbound shape (with its Sidecar), its id and the group of its inbound resources. */
export interface SidecarShape extends InboundShape {
  readonly classId: string;
  readonly inboundGroup: string;
  /** The DestinationRules with a workloadSelector that select it (its outbound scope's). */
  readonly destinationRules: readonly DestinationRule[];
  /** Its labels, where they select some VirtualService match's `sourceLabels` (its route configs'). */
  readonly routeSource?: RouteSource;
  /** The keys of the label-selected EnvoyFilters that select it, sorted; absent: none. */
  readonly envoyFilters?: readonly string[];
}

/** What selects workloads by label besides services, Sidecars and security policies. */
interface LabelSelectors {
  readonly selectorRules: SelectorRuleIndex;
  readonly sourceSelectors: SourceSelectorIndex;
}

function sidecarShapes(
  ctx: CompileContext,
  byNamespace: NamespaceIndex,
  selectors: LabelSelectors,
  namespace: string,
): SidecarShape[] {
  const shapes = workloadShapes(ctx, byNamespace, selectors, namespace);
  return shapes.map(
    ({ services, labels, security, sidecarKeys, destinationRules, routeSource, telemetry, envoyFilters }) => {
      const classId = sidecarClassId(namespace, services.map(classNameOf), [
        ...(security.key === '' ? [] : security.key.split(',')),
        ...sidecarKeys,
        ...classKeysOf(destinationRules),
        ...(routeSource?.keys ?? []),
        ...telemetry,
        ...envoyFilters,
      ]);
      return {
        namespace,
        services,
        security,
        classId,
        inboundGroup: `inbound/${classId.slice('sidecar/'.length)}`,
        sidecar: ctx.sidecars.forWorkload(namespace, labels),
        destinationRules,
        ...(routeSource ? { routeSource } : {}),
        ...(telemetry.length ? { telemetry } : {}),
        ...(envoyFilters.length ? { envoyFilters } : {}),
      };
    },
  );
}

/** Services whose selector matches the labels, in hostname order. */
export function servicesSelecting(
  model: ServiceModel,
  namespace: string,
  labels: Readonly<Record<string, string>>,
): MeshService[] {
  return selectingAmong(
    model.services.filter((s) => s.namespace === namespace),
    labels,
  );
}

/** A service's name in class ids (classServiceName). */
export const classNameOf = (s: MeshService): string => classServiceName(s.hostname, s.serviceEntry !== undefined);

function selectingAmong(services: readonly MeshService[], labels: Readonly<Record<string, string>>): MeshService[] {
  return services.filter((s) => hasWorkloadSelector(s) && selects(workloadSelectorOf(s) ?? {}, labels));
}

/** A distinct inbound shape: its services, labels that produce it, and what those labels select (found once, for its key and its class). */
interface WorkloadShape {
  readonly services: MeshService[];
  readonly labels: Readonly<Record<string, string>>;
  readonly security: WorkloadSecurity;
  /** The keys of the Sidecars selecting the labels, sorted. */
  readonly sidecarKeys: readonly string[];
  /** The DestinationRules with a workloadSelector selecting the labels, in name order. */
  readonly destinationRules: readonly DestinationRule[];
  /** The labels, when they select some `sourceLabels` (route/source-labels.ts). */
  readonly routeSource: RouteSource | undefined;
  /** The keys of the workload-selected Telemetries with access logging that select the labels, sorted. */
  readonly telemetry: readonly string[];
  /** The keys of the label-selected EnvoyFilters that select the labels, sorted. */
  readonly envoyFilters: readonly string[];
}

/**
 * The distinct inbound shapes of a namespace: the empty one (for proxies no service selects, or
 * unknown to the compiler), one per set of services and label-selecting policies picking some
 * pod, and one per selector service on its own, with the policies that select its selector's
 * labels (so a proxy whose labels match one service gets its inbound even before its pod shows up
 * in the inputs). Each shape comes with labels that produce it.
 */
function workloadShapes(
  ctx: CompileContext,
  byNamespace: NamespaceIndex,
  { selectorRules, sourceSelectors }: LabelSelectors,
  namespace: string,
): WorkloadShape[] {
  const services = byNamespace.services.get(namespace) ?? [];
  const selecting = selectorIndex(services);
  const shapes = new Map<string, WorkloadShape>();
  const add = (list: MeshService[], labels: Readonly<Record<string, string>>) => {
    const security = ctx.security.forWorkload(namespace, labels);
    const sidecarKeys = ctx.sidecars.selectingKeys(namespace, labels);
    const destinationRules = selectorRules.selecting(namespace, labels);
    const ruleKeys = classKeysOf(destinationRules).join(',');
    const routeSource = routeSourceOf(sourceSelectors, labels);
    const sourceKeys = routeSource?.keys.join(',') ?? '';
    const telemetry = ctx.accessLogs?.selecting(namespace, labels) ?? [];
    const telemetryKeys = telemetry.length ? `|${telemetry.join(',')}` : '';
    const envoyFilters = ctx.envoyFilters?.selecting(namespace, labels) ?? [];
    const envoyFilterKeys = envoyFilters.length ? `|${envoyFilters.join(',')}` : '';
    const key = `${list.map((s) => s.hostname).join(',')}/${security.key}|${sidecarKeys.join(',')}|${ruleKeys}|${sourceKeys}${telemetryKeys}${envoyFilterKeys}`;
    if (!shapes.has(key))
      shapes.set(key, {
        services: list,
        labels,
        security,
        sidecarKeys,
        destinationRules,
        routeSource,
        telemetry,
        envoyFilters,
      });
  };
  add([], {});
  for (const s of services) if (hasWorkloadSelector(s)) add([s], workloadSelectorOf(s) ?? {});
  // Pods of one Deployment share their labels: match each distinct label set once.
  const seen = new Set<string>();
  for (const list of [byNamespace.workloads.get(namespace), byNamespace.entryWorkloads.get(namespace)])
    for (const w of list ?? []) {
      const key = labelsKey(w.labels);
      if (seen.has(key)) continue;
      seen.add(key);
      add(selecting(w.labels), w.labels);
    }
  return [...shapes.keys()].sort().map((k) => shapes.get(k)!);
}

/**
 * `selectingAmong(services, labels)` without a pass over every service per label set: services are
 * indexed by one pair of their selector, so only those whose pair the labels hold are checked.
 */
function selectorIndex(services: readonly MeshService[]): (labels: Readonly<Record<string, string>>) => MeshService[] {
  const byPair = new Map<string, number[]>();
  services.forEach((s, i) => {
    const selector = workloadSelectorOf(s) ?? {};
    const first = Object.keys(selector)[0];
    if (first === undefined) return;
    const key = `${first}=${selector[first]}`;
    const list = byPair.get(key);
    if (list) list.push(i);
    else byPair.set(key, [i]);
  });
  return (labels) => {
    const candidates: number[] = [];
    for (const k in labels) if (Object.hasOwn(labels, k)) candidates.push(...(byPair.get(`${k}=${labels[k]}`) ?? []));
    // Hostname order, as the services are.
    candidates.sort((a, b) => a - b);
    return candidates
      .map((i) => services[i] as MeshService)
      .filter((s) => selects(workloadSelectorOf(s) ?? {}, labels));
  };
}

/** Services (hostname order), workloads (pods) and WorkloadEntries per namespace: built once, so shapes cost O(namespace), not O(mesh). */
interface NamespaceIndex {
  readonly services: ReadonlyMap<string, MeshService[]>;
  readonly workloads: ReadonlyMap<string, Workload[]>;
  readonly entryWorkloads: ReadonlyMap<string, Workload[]>;
}

function namespaceIndex(model: ServiceModel): NamespaceIndex {
  const services = new Map<string, MeshService[]>();
  for (const s of model.services) {
    const list = services.get(s.namespace);
    if (list) list.push(s);
    else services.set(s.namespace, [s]);
  }
  return { services, workloads: byNamespace(model.workloads), entryWorkloads: byNamespace(model.entryWorkloads) };
}

function byNamespace(list: readonly Workload[]): Map<string, Workload[]> {
  const out = new Map<string, Workload[]>();
  for (const w of list) {
    const own = out.get(w.namespace);
    if (own) own.push(w);
    else out.set(w.namespace, [w]);
  }
  return out;
}

function classSelectors(ctx: CompileContext, { selectorRules, sourceSelectors }: LabelSelectors): ClassSelector[] {
  const out: ClassSelector[] = [];
  for (const s of ctx.model.services) {
    const selector = workloadSelectorOf(s);
    if (selector && Object.keys(selector).length > 0)
      out.push({
        namespace: s.namespace,
        hostname: s.hostname,
        selector,
        ...(s.serviceEntry ? { serviceEntry: true as const } : {}),
      });
  }
  for (const p of ctx.security.policySelectors)
    out.push({ namespace: p.namespace, hostname: '', selector: p.selector, policy: p.policy });
  for (const s of ctx.sidecars.selectors)
    out.push({ namespace: s.namespace, hostname: '', selector: s.selector, policy: s.key });
  for (const s of selectorRules.selectors)
    out.push({ namespace: s.namespace, hostname: '', selector: s.selector, policy: s.key });
  for (const s of ctx.accessLogs?.selectors ?? [])
    out.push({ namespace: s.namespace, hostname: '', selector: s.selector, policy: s.key });
  for (const s of ctx.envoyFilters?.selectors ?? [])
    out.push({ namespace: s.namespace, hostname: '', selector: s.selector, policy: s.key });
  // sourceLabels select workloads of any namespace: one entry per namespace, as the relay places by namespace.
  for (const s of sourceSelectors.selectors)
    for (const namespace of ctx.model.namespaces)
      out.push({ namespace, hostname: '', selector: s.selector, policy: s.key });
  return out;
}

function sortGroups(groups: Map<string, ResourceTable>): Map<string, ResourceTable> {
  const sorted = new Map<string, ResourceTable>();
  for (const id of [...groups.keys()].sort()) {
    const t = groups.get(id) as ResourceTable;
    // No maps made only to be replaced: a table of the sorted ones (usually the group's own).
    sorted.set(id, {
      clusters: sortedByName(t.clusters),
      endpoints: sortedByName(t.endpoints),
      listeners: sortedByName(t.listeners),
      routes: sortedByName(t.routes),
    });
  }
  return sorted;
}
