/**
 * VirtualService matches on `sourceLabels` (istiod: sourceMatchHTTP and matchTCP, decided per
 * proxy when its configuration is built). meshsnap builds per class, so every distinct
 * `sourceLabels` of the mesh is a class key (`src:<k>=<v>+<k>=<v>`, labels in key order): the
 * sidecars (and gateways) whose labels it selects get route configs of their own, built with their
 * labels (`RouteSource`), and, where a `tcp`/`tls` match names source labels, outbound listeners of
 * their own too. A match merged from a delegate VirtualService and its root selects the union of
 * both labels, which two keys decide. A `tcp`/`tls` match naming a `sourceNamespace` makes the
 * outbound listeners of that namespace's sidecars their own as well (`l4Namespaces`).
 */
import type { VirtualService } from '../../model/istio.js';
import { selects } from '../../proxy-class/class-id.js';

/** The labels a route config is built for, and the keys of the `sourceLabels` they select (sorted). */
export interface RouteSource {
  readonly labels: Readonly<Record<string, string>>;
  readonly keys: readonly string[];
}

export interface SourceSelectorIndex {
  /** The keys of the `sourceLabels` these labels select, sorted; empty when none. */
  matching(labels: Readonly<Record<string, string>>): string[];
  /** Every distinct `sourceLabels` with its key, in key order. */
  readonly selectors: readonly { readonly selector: Readonly<Record<string, string>>; readonly key: string }[];
  /** Whether some `tcp`/`tls` match names source labels (outbound listeners then depend on them). */
  readonly l4Labels: boolean;
  /** The namespaces `tcp`/`tls` matches name as `sourceNamespace` (their sidecars' outbound listeners differ). */
  readonly l4Namespaces: ReadonlySet<string>;
}

/** Label names and values hold neither `=` nor `+` (Kubernetes' syntax), so the key reads back unambiguously. */
export const sourceKey = (labels: Readonly<Record<string, string>>): string =>
  `src:${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join('+')}`;

const hasLabels = (labels: Readonly<Record<string, string>> | undefined): labels is Readonly<Record<string, string>> =>
  labels !== undefined && Object.keys(labels).length > 0;

export function indexSourceSelectors(virtualServices: readonly VirtualService[]): SourceSelectorIndex {
  const byKey = new Map<string, Readonly<Record<string, string>>>();
  let l4Labels = false;
  const l4Namespaces = new Set<string>();
  for (const vs of virtualServices) {
    for (const http of vs.spec.http ?? [])
      for (const match of http.match ?? []) {
        // istiod ignores sourceLabels on an http match naming gateways (not on a tcp/tls one).
        if (hasLabels(match.sourceLabels) && !match.gateways?.length)
          byKey.set(sourceKey(match.sourceLabels), match.sourceLabels);
      }
    for (const route of [...(vs.spec.tcp ?? []), ...(vs.spec.tls ?? [])])
      for (const match of route.match ?? []) {
        if (match.sourceNamespace !== undefined) l4Namespaces.add(match.sourceNamespace);
        if (!hasLabels(match.sourceLabels)) continue;
        byKey.set(sourceKey(match.sourceLabels), match.sourceLabels);
        l4Labels = true;
      }
  }
  const selectors = [...byKey.keys()].sort().map((key) => ({ key, selector: byKey.get(key) ?? {} }));
  return {
    matching: (labels) => selectors.filter((s) => selects(s.selector, labels)).map((s) => s.key),
    selectors,
    l4Labels,
    l4Namespaces,
  };
}

/** The route source of a workload with these labels, or undefined when they select no `sourceLabels`. */
export function routeSourceOf(
  index: SourceSelectorIndex,
  labels: Readonly<Record<string, string>>,
): RouteSource | undefined {
  const keys = index.matching(labels);
  return keys.length ? { labels, keys } : undefined;
}

/**
 * Who a sidecar's outbound listeners are built for, where `tcp`/`tls` matches make them differ: its
 * namespace when a match names it as `sourceNamespace`, its labels when a match names source labels
 * they hold. Undefined where they are the scope's shared ones.
 */
export interface ListenerClient {
  readonly namespace?: string;
  readonly source?: RouteSource;
  /** The keys of the workload-selected Telemetries with access logging that select it (listener/telemetry-logs.ts). */
  readonly telemetry?: readonly string[];
}

export function listenerClientOf(
  index: SourceSelectorIndex,
  namespace: string,
  source: RouteSource | undefined,
): ListenerClient | undefined {
  const byNamespace = index.l4Namespaces.has(namespace);
  const byLabels = index.l4Labels && source !== undefined;
  if (!byNamespace && !byLabels) return undefined;
  return { ...(byNamespace ? { namespace } : {}), ...(byLabels ? { source } : {}) };
}

/** The suffix of a listener client's group id (`ns:<ns>`, the source keys, the Telemetry keys, or several). */
export const listenerClientKey = (client: ListenerClient): string =>
  [
    ...(client.namespace !== undefined ? [`ns:${client.namespace}`] : []),
    ...(client.source?.keys ?? []),
    ...(client.telemetry ?? []),
  ].join(',');
