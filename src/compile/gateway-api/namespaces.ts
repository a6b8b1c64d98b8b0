/** allowedRoutes.namespaces: which namespaces may attach routes to a listener (istiod's namespacesFromSelector). */
import type { LabelSelector, Listener } from '../../model/gateway-api.js';
import type { Namespace } from '../../model/k8s.js';

/** The label Kubernetes puts on every namespace; assumed present, as istiod assumes it. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const value = labels[e.key];
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
    if (e.operator === 'In' && !(has && e.values.includes(value as string))) return false;
    if (e.operator === 'NotIn' && has && e.values.includes(value as string)) return false;
  }
  return true;
}

/** `['*']` for All, the Gateway's own namespace for Same, the sorted selected namespaces for Selector. */
export function allowedNamespaces(
  listener: Listener,
  gatewayNamespace: string,
  namespaces: readonly Namespace[],
): string[] {
  const { from, selector } = listener.allowedRoutes.namespaces;
  if (from === 'All') return ['*'];
  if (from === 'Same' || !selector) return [gatewayNamespace];
  return namespaces
    .filter((ns) => selectorMatches(selector, { [NAMESPACE_NAME_LABEL]: ns.meta.name, ...ns.meta.labels }))
    .map((ns) => ns.meta.name)
    .sort();
}
