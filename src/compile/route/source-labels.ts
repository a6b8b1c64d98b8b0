/**
 * VirtualService `http` matches on `sourceLabels` (istiod: sourceMatchHTTP, decided per proxy
 * when its route configs are built). meshsnap builds route configs per class, so every distinct
 * `sourceLabels` of the mesh is a class key (`src:<k>=<v>+<k>=<v>`, labels in key order): the
 * sidecars (and gateways) whose labels it selects get route configs of their own, built with their
 * labels (`RouteSource`), where such a match applies as istiod applies it. A match merged from a
 * delegate VirtualService and its root selects the union of both labels, which two keys decide.
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
}

/** Label names and values hold neither `=` nor `+` (Kubernetes' syntax), so the key reads back unambiguously. */
export const sourceKey = (labels: Readonly<Record<string, string>>): string =>
  `src:${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join('+')}`;

export function indexSourceSelectors(virtualServices: readonly VirtualService[]): SourceSelectorIndex {
  const byKey = new Map<string, Readonly<Record<string, string>>>();
  for (const vs of virtualServices)
    for (const http of vs.spec.http ?? [])
      for (const match of http.match ?? []) {
        const labels = match.sourceLabels;
        // istiod ignores sourceLabels on a match naming gateways.
        if (!labels || Object.keys(labels).length === 0 || match.gateways?.length) continue;
        byKey.set(sourceKey(labels), labels);
      }
  const selectors = [...byKey.keys()].sort().map((key) => ({ key, selector: byKey.get(key) ?? {} }));
  return {
    matching: (labels) => selectors.filter((s) => selects(s.selector, labels)).map((s) => s.key),
    selectors,
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
