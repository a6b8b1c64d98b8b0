/**
 * Which DestinationRule applies to each service.
 *
 * istiod picks a rule per *proxy* (proxy namespace, then service namespace, then root namespace).
 * meshsnap's outbound clusters are shared by every sidecar, so the choice cannot depend on the
 * proxy; it is, for a service host:
 *   1. rules in the service's own namespace,
 *   2. then rules in the root namespace (mesh.rootNamespace),
 *   3. then the first other namespace (alphabetically) that has a matching rule.
 * Within the chosen namespace an exact host beats a wildcard (`*.ns.svc.cluster.local`), and the
 * most specific wildcard beats broader ones. Several rules for the same host there are merged as
 * istiod merges them: subsets appended in namespace/name order (a repeated subset name is dropped
 * with a warning), the first rule with a trafficPolicy wins.
 *
 * A restricted visibility scope (compile/scope/) indexes the rules its namespace sees with
 * `clientNamespace`, and then the order is istiod's: the client's namespace, the service's, the root.
 *
 * Rules with a `workloadSelector` (istiod: SidecarScope.DestinationRule) apply only to the
 * sidecars of their own namespace whose labels they select, and only outbound. They are never in
 * the shared index: a namespace holding one gets views (compile/scope/) built with its
 * `WorkloadRules`. There its host takes part in the namespace's lookup like any rule of the
 * client's namespace; for a workload it selects, that host's rule is the selecting rule merged
 * with the others of the same selector, then with the namespace's rules without a selector
 * (subsets appended, the first trafficPolicy wins); for any other workload it is the rules without
 * a selector for that host, or none at all: as in istiod, the search stops in the client's
 * namespace even when that leaves the workload without a rule the service's namespace has.
 */
import type { Diagnostics } from '../model/diagnostics.js';
import type { DestinationRule, DestinationRuleSpec, Subset } from '../model/istio.js';
import type { MeshConfig } from '../model/mesh-config.js';
import type { MeshService, ServiceModel } from '../model/service-model.js';
import type { DestinationRuleIndex, ResolvedDestinationRule } from './context.js';
import { labelsKey } from './labels.js';
import { hostMatches, resolveHost } from './names.js';
import { isDynamicDns } from './dynamic-forward-proxy.js';

interface HostRules {
  /** Resolved host as written (FQDN or wildcard). */
  readonly host: string;
  readonly namespace: string;
  /** The rules without a workloadSelector. */
  readonly rules: DestinationRule[];
  /** The client namespace's rules with a workloadSelector (views only), in name order. */
  readonly selective: DestinationRule[];
}

/** The rules with a workloadSelector a view of one client namespace knows (see the module comment). */
export interface WorkloadRules {
  /** Every rule with a workloadSelector in the client namespace: its host takes part in the lookup. */
  readonly namespaceRules: readonly DestinationRule[];
  /** Those whose selector picks the workload. */
  readonly selected: ReadonlySet<DestinationRule>;
}

const NO_WORKLOAD_RULES: WorkloadRules = { namespaceRules: [], selected: new Set() };

/** Whether a rule has a workloadSelector (an empty one selects every workload of its namespace). */
export const hasWorkloadSelector = (dr: DestinationRule): boolean => dr.spec.workloadSelector !== undefined;

const selectorKey = (dr: DestinationRule): string => labelsKey(dr.spec.workloadSelector?.matchLabels ?? {});

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const where = (dr: DestinationRule) => ({
  kind: 'DestinationRule',
  namespace: dr.meta.namespace,
  name: dr.meta.name,
  file: dr.origin.file,
  index: dr.origin.index,
});

export function indexDestinationRules(
  model: ServiceModel,
  mesh: MeshConfig,
  diags: Diagnostics,
  clientNamespace?: string,
  workload: WorkloadRules = NO_WORKLOAD_RULES,
): DestinationRuleIndex {
  const byNsName = (a: DestinationRule, b: DestinationRule) =>
    cmp(a.meta.namespace, b.meta.namespace) || cmp(a.meta.name, b.meta.name);
  const sorted = [...model.destinationRules].sort(byNsName);

  // namespace → host → rules
  const byNamespace = new Map<string, Map<string, HostRules>>();
  const entryOf = (dr: DestinationRule): HostRules => {
    const host = resolveHost(dr.spec.host, dr.meta.namespace, mesh.domainSuffix, model.byHostname);
    let hosts = byNamespace.get(dr.meta.namespace);
    if (!hosts) byNamespace.set(dr.meta.namespace, (hosts = new Map()));
    let entry = hosts.get(host);
    if (!entry) hosts.set(host, (entry = { host, namespace: dr.meta.namespace, rules: [], selective: [] }));
    return entry;
  };
  // The shared index leaves rules with a selector to the views of their namespace (scope/scopes.ts).
  const selectorRules: DestinationRule[] = [];
  for (const dr of sorted) {
    if (hasWorkloadSelector(dr)) selectorRules.push(dr);
    else entryOf(dr).rules.push(dr);
  }
  if (clientNamespace !== undefined)
    for (const dr of [...workload.namespaceRules].sort(byNsName))
      if (dr.meta.namespace === clientNamespace) entryOf(dr).selective.push(dr);

  const namespaces = [...byNamespace.keys()].sort(cmp);
  const merged = new Map<HostRules, ResolvedDestinationRule | null>();
  const used = new Set<HostRules>();
  const byHostname = new Map<string, ResolvedDestinationRule>();

  const wildcards = wildcardIndex(byNamespace);
  const holding = namespacesHolding(namespaces, byNamespace, wildcards);
  for (const service of model.services) {
    const chosen =
      clientNamespace === undefined
        ? chooseShared(service, holding(service.hostname), byNamespace, mesh.rootNamespace, wildcards)
        : chooseRules(service, [clientNamespace, service.namespace, mesh.rootNamespace], byNamespace, wildcards);
    if (!chosen) continue;
    used.add(chosen);
    let resolved = merged.get(chosen);
    if (resolved === undefined) merged.set(chosen, (resolved = mergeRules(chosen, workload.selected, diags)));
    // A host only rules with a selector name, none of them picking this workload: no rule (istiod).
    if (resolved === null) continue;
    byHostname.set(service.hostname, { ...resolved, hostname: service.hostname });
    warnEmptySubsets(model, service, resolved, diags);
  }

  for (const hosts of byNamespace.values()) {
    for (const entry of hosts.values()) {
      const matchesAny = entry.host.startsWith('*')
        ? model.services.some((s) => hostMatches(entry.host, s.hostname))
        : model.byHostname.has(entry.host);
      if (!matchesAny) {
        for (const dr of entry.rules)
          diags.warn({
            ...where(dr),
            code: 'unknown-host',
            field: 'spec.host',
            message: `host ${dr.spec.host} matches no known service`,
          });
      } else if (!used.has(entry) && clientNamespace === undefined) {
        for (const dr of entry.rules)
          diags.info({
            ...where(dr),
            code: 'shadowed-destination-rule',
            field: 'spec.host',
            message: `another DestinationRule for ${dr.spec.host} takes precedence`,
          });
      }
    }
  }

  if (clientNamespace === undefined)
    for (const dr of selectorRules) {
      const host = resolveHost(dr.spec.host, dr.meta.namespace, mesh.domainSuffix, model.byHostname);
      const matchesAny = host.startsWith('*')
        ? model.services.some((s) => hostMatches(host, s.hostname))
        : model.byHostname.has(host);
      if (!matchesAny)
        diags.warn({
          ...where(dr),
          code: 'unknown-host',
          field: 'spec.host',
          message: `host ${dr.spec.host} matches no known service`,
        });
    }

  return { lookup: (hostname) => byHostname.get(hostname) };
}

/**
 * The rules every sidecar shares: the service's namespace, the root, then any other namespace in
 * order (`namespaces`: those that may hold a rule for the service, see namespacesHolding).
 */
function chooseShared(
  service: MeshService,
  namespaces: readonly string[],
  byNamespace: Map<string, Map<string, HostRules>>,
  rootNamespace: string,
  wildcards: WildcardIndex,
): HostRules | undefined {
  const first = chooseRules(service, [service.namespace, rootNamespace], byNamespace, wildcards);
  if (first) return first;
  for (const ns of namespaces) {
    if (ns === service.namespace || ns === rootNamespace) continue;
    const found = chooseIn(service, byNamespace.get(ns), wildcards(ns));
    if (found) return found;
  }
  return undefined;
}

/** The first rules found in these namespaces, in order (istiod: the client's, the service's, the root). */
function chooseRules(
  service: MeshService,
  order: readonly string[],
  byNamespace: Map<string, Map<string, HostRules>>,
  wildcards: WildcardIndex,
): HostRules | undefined {
  for (const ns of order) {
    const found = chooseIn(service, byNamespace.get(ns), wildcards(ns));
    if (found) return found;
  }
  return undefined;
}

/** A namespace's wildcard hosts (usually none), listed once: a scan of every host per service would be services × rules. */
type WildcardIndex = (namespace: string) => readonly HostRules[];

function wildcardIndex(byNamespace: Map<string, Map<string, HostRules>>): WildcardIndex {
  const index = new Map<string, HostRules[]>();
  for (const [ns, hosts] of byNamespace)
    index.set(
      ns,
      [...hosts.values()].filter((e) => e.host.startsWith('*')),
    );
  return (ns) => index.get(ns) ?? [];
}

/**
 * The namespaces (in the given order) where chooseIn can find a rule for a hostname: those with
 * rules for exactly that host or with a wildcard host. The others find none, so a service whose
 * own and root namespaces hold no rule tries only these, not every namespace with rules
 * (services × namespaces: 10k × 100 in the synthetic mesh).
 */
function namespacesHolding(
  namespaces: readonly string[],
  byNamespace: Map<string, Map<string, HostRules>>,
  wildcards: WildcardIndex,
): (hostname: string) => readonly string[] {
  const withWildcards = namespaces.filter((ns) => wildcards(ns).length > 0);
  const byHost = new Map<string, string[]>();
  for (const ns of namespaces)
    for (const host of (byNamespace.get(ns) as Map<string, HostRules>).keys()) {
      if (host.startsWith('*')) continue;
      const list = byHost.get(host);
      if (list) list.push(ns);
      else byHost.set(host, [ns]);
    }
  const order = new Map(namespaces.map((ns, i) => [ns, i]));
  return (hostname) => {
    const exact = byHost.get(hostname) ?? [];
    if (!withWildcards.length) return exact;
    const merged = [...new Set([...exact, ...withWildcards])];
    return merged.sort((a, b) => (order.get(a) as number) - (order.get(b) as number));
  };
}

function chooseIn(
  service: MeshService,
  hosts: Map<string, HostRules> | undefined,
  wildcards: readonly HostRules[],
): HostRules | undefined {
  if (!hosts) return undefined;
  const exact = hosts.get(service.hostname);
  if (exact) return exact;
  let best: HostRules | undefined;
  for (const entry of wildcards) {
    if (!hostMatches(entry.host, service.hostname)) continue;
    // Most specific wildcard: the longest pattern; ties broken by name for determinism.
    if (
      !best ||
      entry.host.length > best.host.length ||
      (entry.host.length === best.host.length && entry.host < best.host)
    )
      best = entry;
  }
  return best;
}

/**
 * The rules of a host that apply to the workload: the first rule with a selector that picks it and
 * the others of the same selector, then those without one (istiod sorts rules with a selector
 * first and merges the later ones into them); else those without one.
 */
function applying(entry: HostRules, selected: ReadonlySet<DestinationRule>): readonly DestinationRule[] {
  const first = entry.selective.find((dr) => selected.has(dr));
  if (!first) return entry.rules;
  const key = selectorKey(first);
  return [...entry.selective.filter((dr) => selectorKey(dr) === key), ...entry.rules];
}

/** The merged rule of a host for the workload; null where none of its rules applies to it. */
function mergeRules(
  entry: HostRules,
  selected: ReadonlySet<DestinationRule>,
  diags: Diagnostics,
): ResolvedDestinationRule | null {
  const rules = applying(entry, selected);
  const [first, ...rest] = rules;
  if (!first) return null;
  if (rest.length === 0) return { hostname: entry.host, spec: first.spec, sources: [first] };
  const subsets: Subset[] = [];
  const seen = new Set<string>();
  let trafficPolicy = first.spec.trafficPolicy;
  for (const dr of rules) {
    if (dr !== first) {
      diags.warn({
        ...where(dr),
        code: 'merged-destination-rule',
        field: 'spec.host',
        message: `merged with DestinationRule ${first.meta.namespace}/${first.meta.name} for the same host ${entry.host}`,
      });
    }
    trafficPolicy ??= dr.spec.trafficPolicy;
    (dr.spec.subsets ?? []).forEach((s, i) => {
      if (seen.has(s.name)) {
        diags.warn({
          ...where(dr),
          code: 'duplicate-subset',
          field: `spec.subsets[${i}].name`,
          message: `subset ${s.name} is already defined by another DestinationRule for ${entry.host}; this one is ignored`,
        });
        return;
      }
      seen.add(s.name);
      subsets.push(s);
    });
  }
  const spec: DestinationRuleSpec = { ...first.spec, subsets, ...(trafficPolicy ? { trafficPolicy } : {}) };
  return { hostname: entry.host, spec, sources: rules };
}

/** istiod keeps a subset cluster that selects nothing (it may fill later); say so, since it is often a typo. */
function warnEmptySubsets(
  model: ServiceModel,
  service: MeshService,
  resolved: ResolvedDestinationRule,
  diags: Diagnostics,
): void {
  const byPort = model.endpoints.get(service.hostname);
  (resolved.spec.subsets ?? []).forEach((subset, i) => {
    const labels = subset.labels ?? {};
    const keys = Object.keys(labels);
    const dfp = isDynamicDns(service);
    if (keys.length === 0 && !dfp) return;
    for (const eps of dfp ? [] : (byPort?.values() ?? [])) {
      for (const ep of eps) if (keys.every((k) => ep.labels[k] === labels[k])) return;
    }
    const source = resolved.sources.find((dr) => dr.spec.subsets?.includes(subset)) ?? resolved.sources[0];
    if (!source) return;
    const idx = source.spec.subsets?.indexOf(subset) ?? i;
    diags.warn({
      ...where(source),
      code: 'subset-no-endpoints',
      field: dfp ? `spec.subsets[${idx}]` : `spec.subsets[${idx}].labels`,
      message: dfp
        ? `subset ${subset.name} does not apply to ${service.hostname}: a DYNAMIC_DNS host has no subset clusters (istiod builds none)`
        : `subset ${subset.name} selects no endpoint of ${service.hostname}`,
    });
  });
}
